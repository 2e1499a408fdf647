// `harness-bridge bootstrap --print`: the recipe a harness would apply (files
// with sizes, commands) and its identity — the same values createBridgeHarness
// computes, so a provider can key snapshots by what this prints.
import { bridgeRecipe, recipeBytes, recipeIdentity } from '../../bootstrap/index.ts';
import { adapterIds, findAdapter } from '../adapters/registry.ts';
import { booleanFlag, CliError, CliUsageError, parseArgs, stringFlag } from './args.ts';
import { stdoutStyle } from './style.ts';

export const bootstrapHelp = `usage: harness-bridge bootstrap --print [--adapter <id>] [--json]

Prints the bootstrap recipe createBridgeHarness(adapter) applies: every file
(path and size), every command, and the recipe identity (SHA-256 over its
canonical encoding; what sandbox snapshots are keyed by).

options:
  --print            print the recipe (the only action today)
  --adapter <id>     whose recipe (${adapterIds().join(', ')}); default fixture
  --bridge-file <p>  the bridge bundle to put in it (default dist/bridge.mjs)
  --json             {"identity", "harnessId", "bootstrapDir", "files", "commands", "bytes"}
  -h, --help         this help`;

const flags = { print: { type: 'boolean' }, adapter: { type: 'string' }, 'bridge-file': { type: 'string' }, json: { type: 'boolean' } } as const;

export async function bootstrapCommand(argv: ReadonlyArray<string>): Promise<number> {
  const parsed = parseArgs('bootstrap', argv, flags, { min: 0, max: 0, name: '' });
  if (parsed.help) {
    process.stdout.write(`${bootstrapHelp}\n`);
    return 0;
  }
  if (!booleanFlag(parsed, 'print')) throw new CliUsageError('bootstrap: nothing to do; pass --print (see harness-bridge bootstrap --help)');
  const id = stringFlag(parsed, 'adapter') ?? 'fixture';
  const entry = findAdapter(id);
  if (!entry) throw new CliUsageError(`bootstrap: unknown adapter ${JSON.stringify(id)}; known: ${adapterIds().join(', ')}`);
  const adapter = entry.create();
  const bridgeFile = stringFlag(parsed, 'bridge-file');
  let recipe;
  try {
    // The same call createBridgeHarness makes for its recipe (host/harness.ts getBootstrap).
    recipe = await bridgeRecipe({
      harnessId: adapter.harnessId,
      ...(bridgeFile === undefined ? {} : { bridgeFile }),
      ...(adapter.install?.files ? { extraFiles: adapter.install.files } : {}),
      ...(adapter.install?.commands ? { commands: adapter.install.commands } : {}),
    });
  } catch (error) {
    throw new CliError(`bootstrap: ${(error as Error).message}`);
  }
  const identity = recipeIdentity(recipe);
  const files = recipe.files.map((file) => ({ path: file.path, bytes: Buffer.byteLength(file.content) }));
  const commands = recipe.commands.map((command) => ({ command: command.command, ...(command.workingDirectory === undefined ? {} : { workingDirectory: command.workingDirectory }) }));
  if (booleanFlag(parsed, 'json')) {
    process.stdout.write(`${JSON.stringify({ identity, harnessId: recipe.harnessId, bootstrapDir: recipe.bootstrapDir, files, commands, bytes: recipeBytes(recipe) })}\n`);
    return 0;
  }
  const style = stdoutStyle();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`${style.bold('recipe')} for ${recipe.harnessId}  (bootstrapDir ${recipe.bootstrapDir}, relative to the sandbox's working directory)`);
  out(style.bold(`files (${files.length})`));
  for (const file of files) out(`  ${String(file.bytes).padStart(9)} B  ${file.path}`);
  out(style.bold(`commands (${commands.length})`));
  if (commands.length === 0) out(style.dim('  (none)'));
  for (const command of commands) out(`  $ ${command.command}${command.workingDirectory ? style.dim(`   (in ${command.workingDirectory})`) : ''}`);
  out(`${style.bold('bytes')} ${recipeBytes(recipe)}`);
  out(`${style.bold('identity')} ${identity}`);
  return 0;
}
