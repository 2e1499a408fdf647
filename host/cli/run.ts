// `harness-bridge run`: one real turn with any registered adapter, or an
// adapter module outside the kit (--adapter ./my-adapter.mjs), in a fresh
// local sandbox, the stream printed as it comes, optionally recorded. No host
// tools are offered; a CLI that asks for one anyway gets an error result.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { adapterIds } from '../adapters/registry.ts';
import { createBridgeHarness } from '../harness.ts';
import { parseResumeState } from '../session/resume-state.ts';
import { createLocalSandboxProvider } from '../sandbox/local/provider.ts';
import { booleanFlag, CliError, CliUsageError, parseArgs, stringFlag } from './args.ts';
import { createStreamPrinter } from './parts.ts';
import { describeModel, prepareAdapter, resolveAdapterArg } from './setup.ts';
import { stdoutStyle } from './style.ts';

export const runHelp = `usage: harness-bridge run --adapter <id|path> [options] "prompt"

Runs one real turn: a fresh local sandbox, the adapter's bootstrap recipe, the
bridge, the CLI, and the prompt; prints the stream as it comes.

options:
  --adapter <id|path>  ${adapterIds().join(', ')}, or an adapter module (required):
                     a .mjs/.js file whose default export (or \`adapter\`) is an
                     adapter or a factory (options) => adapter; a CLI it declares
                     (\`cli\`: npm package, version, bin) is installed into the
                     cache, and it talks to the scripted model (its
                     \`modelProfiles\`) unless it chooses otherwise
  --sandbox local    the sandbox provider (only local today)
  --record <file>    write every frame of the session to <file> (NDJSON
                     recording, docs/recording-format.md), for replay
  --dir <dir>        where the sandbox lives (default: a new temp dir)
  --keep             keep the sandbox and the stopped bridge's state dir
  -h, --help         this help

A real CLI talks to the bundled scripted model on 127.0.0.1 (offline; try
"SCENARIO:edit PATH:notes.txt" or "SCENARIO:shell"); claude-code uses the real
Anthropic API instead when ANTHROPIC_API_KEY is set.`;

const flags = {
  adapter: { type: 'string' },
  sandbox: { type: 'string' },
  record: { type: 'string' },
  dir: { type: 'string' },
  keep: { type: 'boolean' },
} as const;

export async function runCommand(argv: ReadonlyArray<string>): Promise<number> {
  const parsed = parseArgs('run', argv, flags, { min: 1, max: 1, name: 'the prompt' });
  if (parsed.help) {
    process.stdout.write(`${runHelp}\n`);
    return 0;
  }
  const id = stringFlag(parsed, 'adapter');
  if (id === undefined) throw new CliUsageError('run: --adapter <id|path> is required (see harness-bridge run --help)');
  const entry = await resolveAdapterArg('run', id);
  const sandboxKind = stringFlag(parsed, 'sandbox') ?? 'local';
  if (sandboxKind !== 'local') throw new CliUsageError(`run: unknown sandbox ${JSON.stringify(sandboxKind)}; only "local" is built in`);
  const prompt = parsed.positionals[0]!;
  const recordFile = stringFlag(parsed, 'record');
  if (recordFile !== undefined) {
    // Fail before any work if the recording cannot be written.
    await writeFile(resolve(recordFile), '', { flag: 'a', mode: 0o600 }).catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`run: cannot write ${recordFile}: ${error.code ?? error.message}`);
    });
  }
  const style = stdoutStyle();
  const log = (line: string) => process.stdout.write(`${style.dim(line)}\n`);
  const keep = booleanFlag(parsed, 'keep');
  const root = stringFlag(parsed, 'dir') ?? (await mkdtemp(join(tmpdir(), 'harness-bridge-run-')));
  if (stringFlag(parsed, 'dir') === undefined) await chmod(root, 0o711); // a root bridge's CLI runs under a uid of its own (docs/security.md)
  const recordDir = join(root, 'recordings');
  await mkdir(recordDir, { recursive: true });

  const prepared = await prepareAdapter(entry, { log });
  const started = Date.now();
  const parts: HarnessV1StreamPart[] = [];
  try {
    log(`adapter ${entry.id}; model: ${describeModel(prepared.model)}`);
    const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
    const sandbox = await provider.createSession({ sessionId: 'run' });
    const workDir = join(sandbox.defaultWorkingDirectory, 'work');
    await mkdir(workDir, { recursive: true });
    const harness = createBridgeHarness(prepared.adapter, {
      recordDir,
      onBootstrapProgress: (p) => log(`bootstrap: ${p.phase}${p.command ? ` $ ${p.command}` : ''} (${Math.round(p.elapsedMs)} ms)`),
    });
    const session = await harness.doStart({ sessionId: 'run', sandboxSession: sandbox, sessionWorkDir: workDir });
    const printer = createStreamPrinter((text) => process.stdout.write(text), style);
    const control = await session.doPromptTurn({
      prompt,
      emit: (part) => {
        parts.push(part);
        printer.part(part);
        if (part.type === 'tool-call' && part.providerExecuted !== true) {
          void control.submitToolResult({ toolCallId: part.toolCallId, output: { error: 'harness-bridge run offers no host tools' }, isError: true });
        }
      },
    });
    await control.done;
    printer.flush();
    const stopped = await session.doStop();
    const { cursor, stateDir } = parseResumeState(prepared.adapter.harnessId, stopped);
    if (recordFile !== undefined) await gatherRecordings(recordDir, resolve(recordFile));
    const finish = [...parts].reverse().find((part) => part.type === 'finish');
    process.stdout.write(
      `${style.bold('run summary:')} parts=${parts.length} finish=${finish?.type === 'finish' ? finish.finishReason.unified : 'none'} cursor=${cursor} time=${((Date.now() - started) / 1000).toFixed(1)}s${recordFile ? ` recording=${recordFile}` : ''}\n`,
    );
    if (keep) log(`kept ${root} (state dir: ${stateDir})`);
    return finish?.type === 'finish' && finish.finishReason.unified !== 'error' ? 0 : 1;
  } finally {
    await prepared.close();
    if (!keep && stringFlag(parsed, 'dir') === undefined) await rm(root, { recursive: true, force: true });
  }
}

/** The harness writes one recording per channel; `--record` gets them all, in order, as one file (segments). */
async function gatherRecordings(recordDir: string, target: string): Promise<void> {
  const names = (await readdir(recordDir)).filter((name) => name.endsWith('.ndjson')).sort();
  let text = '';
  for (const name of names) text += await readFile(join(recordDir, name), 'utf8');
  await writeFile(target, text, { mode: 0o600 });
}
