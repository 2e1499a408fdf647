#!/usr/bin/env node
// Entry of the harness-bridge CLI (bundled into dist/cli.mjs). Dispatches to
// one module per subcommand and turns their errors into one line on stderr
// and an exit code: 2 for usage mistakes, 1 for everything else.
import './young-generation.ts'; // first: it tunes V8 before the rest allocates
import { bootstrapCommand } from './bootstrap.ts';
import { CliError } from './args.ts';
import { demoContinueCommand } from './demo-continue.ts';
import { demoCommand } from './demo.ts';
import { inspectCommand } from './inspect.ts';
import { modelServerCommand } from './model-server.ts';
import { replayCommand } from './replay.ts';
import { runCommand } from './run.ts';
import { viewCommand } from './view.ts';

type Command = { readonly summary: string; readonly run: (argv: ReadonlyArray<string>) => Promise<number>; readonly hidden?: boolean };

const commands: Readonly<Record<string, Command>> = {
  demo: { summary: 'the offline demo: suspend a turn in one process, continue it in another', run: demoCommand },
  run: { summary: 'one real turn with any adapter in a fresh local sandbox', run: runCommand },
  replay: { summary: 're-translate a recording or journal offline; --timeline, --check, --diff', run: replayCommand },
  view: { summary: 'a recording or journal as one self-contained HTML page (--diff, --serve)', run: viewCommand },
  inspect: { summary: "a bridge state dir: bridge, turns, journal health", run: inspectCommand },
  bootstrap: { summary: 'print the bootstrap recipe and its identity (--print)', run: bootstrapCommand },
  'model-server': { summary: 'the scripted model on 127.0.0.1, for testing a CLI offline (--profile)', run: modelServerCommand },
  'demo-continue': { summary: "the demo's second process (internal)", run: demoContinueCommand, hidden: true },
};

export const mainHelp = `usage: harness-bridge <command> [options]

${Object.entries(commands)
  .filter(([, command]) => !command.hidden)
  .map(([name, command]) => `  ${name.padEnd(12)} ${command.summary}`)
  .join('\n')}

Run \`harness-bridge <command> --help\` for a command's options.`;

export async function main(argv: ReadonlyArray<string>): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write('harness-bridge: missing command (see harness-bridge --help)\n');
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${mainHelp}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`harness-bridge: unknown command ${JSON.stringify(name)} (commands: ${Object.keys(commands).filter((key) => !commands[key]!.hidden).join(', ')})\n`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`harness-bridge ${oneLine(error.message)}\n`);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`harness-bridge ${name}: ${oneLine(message)}\n`);
    if (process.env.HARNESS_BRIDGE_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
    return 1;
  }
}

/** Errors are reported on one line: embedded newlines (JSON.parse messages, npm output) are folded. */
function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

// HARNESS_BRIDGE_PEAK_RSS=1: report this process's peak RSS on stderr as it exits
// (`[peak-rss] <KiB> KiB`), for tests that hold a command to a memory bound.
if (process.env.HARNESS_BRIDGE_PEAK_RSS === '1') {
  process.on('exit', () => process.stderr.write(`[peak-rss] ${process.resourceUsage().maxRSS} KiB\n`));
}

// Exit once the command is done even if a handle lingers (a socket closing, a sandbox pipe):
// the bridge is meant to outlive us, nothing else is. Linux writes to pipes and files synchronously.
const exitSoon = (code: number) => setTimeout(() => process.exit(code), 500).unref();

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    exitSoon(code);
  },
  (error: unknown) => {
    process.stderr.write(`harness-bridge: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
