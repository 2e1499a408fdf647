// Argument parsing for the harness-bridge CLI: declared flags only, `--flag
// value` or `--flag=value`, positionals counted. A mistake is a CliUsageError
// (one line on stderr, exit 2); an unreadable input is a CliError (exit 1).
// Subcommands own what their flags mean.

export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export class CliUsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'CliUsageError';
  }
}

export type FlagSpec = { readonly type: 'string' | 'boolean'; readonly short?: string };

export type Parsed = {
  readonly flags: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: ReadonlyArray<string>;
  readonly help: boolean;
};

export function parseArgs(
  command: string,
  argv: ReadonlyArray<string>,
  spec: Readonly<Record<string, FlagSpec>>,
  positionals: { readonly min: number; readonly max: number; readonly name: string },
): Parsed {
  const flags: Record<string, string | boolean | undefined> = {};
  const rest: string[] = [];
  let help = false;
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (onlyPositionals || !arg.startsWith('-') || arg === '-') {
      rest.push(arg);
      continue;
    }
    if (arg === '--') {
      onlyPositionals = true;
      continue;
    }
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') ? arg.slice(2, eq < 0 ? undefined : eq) : shortName(spec, arg.slice(1));
    const flag = name === undefined ? undefined : spec[name];
    if (name === undefined || !flag) throw new CliUsageError(`${command}: unknown option ${arg.slice(0, eq < 0 ? undefined : eq)} (see harness-bridge ${command} --help)`);
    if (flag.type === 'boolean') {
      if (eq >= 0) throw new CliUsageError(`${command}: --${name} takes no value`);
      flags[name] = true;
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new CliUsageError(`${command}: --${name} needs a value`);
    flags[name] = value;
  }
  if (!help) {
    if (rest.length < positionals.min) throw new CliUsageError(`${command}: missing ${positionals.name} (see harness-bridge ${command} --help)`);
    if (rest.length > positionals.max) throw new CliUsageError(`${command}: unexpected argument ${JSON.stringify(rest[positionals.max])} (see harness-bridge ${command} --help)`);
  }
  return { flags, positionals: rest, help };
}

function shortName(spec: Readonly<Record<string, FlagSpec>>, short: string): string | undefined {
  for (const [name, flag] of Object.entries(spec)) if (flag.short === short) return name;
  return undefined;
}

export function stringFlag(parsed: Parsed, name: string): string | undefined {
  const value = parsed.flags[name];
  return typeof value === 'string' ? value : undefined;
}

export function booleanFlag(parsed: Parsed, name: string): boolean {
  return parsed.flags[name] === true;
}

/** A positive integer flag, or the default. */
export function numberFlag(parsed: Parsed, command: string, name: string, fallback: number): number {
  const value = stringFlag(parsed, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new CliUsageError(`${command}: --${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}
