// `harness-bridge demo`: the README's main job, offline. A fresh local
// sandbox, the bootstrap recipe applied with visible progress, Claude Code
// (or --adapter fixture) against the scripted model in this process, one turn
// that edits a file and calls a host tool, suspended mid-turn and continued by
// a SECOND process (`harness-bridge demo-continue --state FILE`, demo-continue.ts),
// then a summary checked against an offline replay of the recording.
// With ANTHROPIC_API_KEY set, Claude Code talks to the real API instead.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HarnessV1ResumeState, HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { adapterIds } from '../adapters/registry.ts';
import { createBridgeHarness } from '../harness.ts';
import { loadSource, normalizeParts, reconstruct, translateRecords } from '../replay/index.ts';
import { joinSlices } from '../testing/every-cut.ts';
import { parseResumeState } from '../session/resume-state.ts';
import { createLocalSandboxProvider } from '../sandbox/local/provider.ts';
import { booleanFlag, CliError, parseArgs, stringFlag } from './args.ts';
import { demoResultSchema, type DemoResult, type DemoState } from './demo-state.ts';
import { createStreamPrinter } from './parts.ts';
import { describeModel, prepareAdapter, requireAdapter, type ModelChoice } from './setup.ts';
import { stdoutStyle, type Style } from './style.ts';

export const demoHelp = `usage: harness-bridge demo [--adapter claude-code|fixture] [--dir DIR] [--clean]

The offline demo, end to end:
  1. the CLI    Claude Code ${'(pinned)'} from the CLI cache; installed there on first use
  2. the model  the bundled scripted model on 127.0.0.1 in this process — no
                API key, no network. With ANTHROPIC_API_KEY set, the REAL
                Anthropic API instead (the key is inherited, never recorded).
  3. a fresh local sandbox, the bootstrap recipe applied with progress
  4. one turn: the CLI edits notes.txt and calls the host tool
     notify_reviewer; this process suspends the turn mid-way
  5. a second process (harness-bridge demo-continue) continues the turn from
     the resume state, answers the host tool and streams the rest
  6. a summary: parts, final cursor, ladder rungs used, times — and an
     offline replay of the recording compared with what was streamed live

options:
  --adapter <id>  ${adapterIds().join(' | ')} (default claude-code); fixture needs no CLI or model
  --dir <dir>     where the demo's sandbox and recordings go (default: a new temp dir)
  --clean         delete that dir at the end (default: keep it and print how to replay it)
  -h, --help      this help

Colours on a TTY; plain text otherwise or with NO_COLOR set.`;

const flags = { adapter: { type: 'string' }, dir: { type: 'string' }, clean: { type: 'boolean' } } as const;

export const demoHostTool: HarnessV1ToolSpec = {
  name: 'notify_reviewer',
  description: 'Tell the human reviewer about a change. Returns who was notified.',
  inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'one line about the change' } }, required: ['message'] },
};

/** The demo's answer to its host tool (the second process gives it). */
export function demoToolOutput(): { delivered: true; reviewer: string } {
  return { delivered: true, reviewer: 'ada@example.com' };
}

/** Text deltas after which the first process suspends, unless a host tool call comes first. */
const suspendAfterDeltas = 3;
const notesFile = 'notes.txt';

function promptFor(adapterId: string, model: ModelChoice): string {
  if (adapterId === 'fixture') return `Plan the release. LINES:8 INTERVAL:60 TOOL:${demoHostTool.name}`;
  if (model.kind === 'anthropic-api') {
    return `In ${notesFile}, replace "this is old text" with "this is new text" using your Edit tool. Then call the ${demoHostTool.name} tool with a one-line message about the change. Then reply with one short sentence.`;
  }
  return `Fix the wording in ${notesFile}, then tell the reviewer with the ${demoHostTool.name} host tool. SCENARIO:demo PATH:${notesFile}`;
}

export async function demoCommand(argv: ReadonlyArray<string>): Promise<number> {
  const parsed = parseArgs('demo', argv, flags, { min: 0, max: 0, name: '' });
  if (parsed.help) {
    process.stdout.write(`${demoHelp}\n`);
    return 0;
  }
  const entry = requireAdapter('demo', stringFlag(parsed, 'adapter') ?? 'claude-code');
  const style = stdoutStyle();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const step = (n: number, text: string) => out(`${style.bold(style.blue(`[${n}/6]`))} ${style.bold(text)}`);
  const detail = (text: string) => out(`      ${style.dim(text)}`);
  const t0 = Date.now();
  const times: Record<string, number> = {};

  out(style.bold(`harness-bridge demo — adapter ${entry.id}`));
  step(1, entry.realCli ? 'the CLI' : 'the CLI (fixture: fixture-cli.mjs, shipped with harness-bridge; nothing to install)');
  const prepared = await prepareAdapter(entry, { log: detail });
  times.cli = Date.now() - t0;
  const dir = resolve(stringFlag(parsed, 'dir') ?? (await mkdtemp(join(tmpdir(), 'harness-bridge-demo-'))));
  if (stringFlag(parsed, 'dir') === undefined) await chmod(dir, 0o711); // a root bridge's CLI runs under a uid of its own (docs/security.md)
  const recordDir = join(dir, 'recordings');
  let handedOver = false;
  let started: { doDestroy(): PromiseLike<void> } | undefined;
  try {
    step(2, 'the model');
    detail(describeModel(prepared.model));

    step(3, 'a fresh local sandbox + the bootstrap recipe');
    await mkdir(recordDir, { recursive: true });
    const root = join(dir, 'sandboxes');
    const provider = createLocalSandboxProvider({ root, templatesRoot: join(dir, 'templates') });
    const sessionId = 'demo';
    const sandbox = await provider.createSession({ sessionId });
    const workDir = join(sandbox.defaultWorkingDirectory, 'project');
    await mkdir(workDir, { recursive: true });
    await writeFile(join(workDir, notesFile), 'this is old text\n');
    detail(`sandbox ${sandbox.defaultWorkingDirectory}`);
    const bootstrapStart = Date.now();
    const harness = createBridgeHarness(prepared.adapter, {
      recordDir,
      onBootstrapProgress: (p) => {
        if (p.phase === 'command') detail(`recipe: $ ${p.command} (${((p.commandElapsedMs ?? 0) / 1000).toFixed(1)} s)`);
        else detail(`recipe: ${p.phase === 'writing-files' ? 'writing files' : p.phase === 'done' ? 'applied' : 'waiting for another apply'} (${Math.round(p.elapsedMs)} ms)`);
      },
    });
    detail(`recipe identity ${(await harness.getRecipeIdentity()).slice(0, 16)}…`);
    const session = await harness.doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: workDir });
    started = session;
    times.bootstrap = Date.now() - bootstrapStart;

    const prompt = promptFor(entry.id, prepared.model);
    step(4, `the turn, in this process (pid ${process.pid})`);
    detail(`prompt: ${prompt}`);
    const printer = createStreamPrinter((text) => process.stdout.write(text), style, '      ');
    const slice1: HarnessV1StreamPart[] = [];
    let deltas = 0;
    let suspendState: Promise<HarnessV1ResumeState> | undefined;
    const turnStart = Date.now();
    let suspendRequested!: () => void;
    const suspendPoint = new Promise<void>((resolvePoint) => (suspendRequested = resolvePoint));
    const control = await session.doPromptTurn({
      prompt,
      tools: [demoHostTool],
      emit: (part) => {
        slice1.push(part);
        printer.part(part);
        if (part.type === 'text-delta') deltas++;
        const hostCall = part.type === 'tool-call' && part.providerExecuted !== true;
        if (!suspendState && (hostCall || deltas >= suspendAfterDeltas)) {
          times.slice1 = Date.now() - turnStart;
          printer.note(style.yellow(`⏸ suspending the turn here (${hostCall ? 'the host tool call stays unanswered; the CLI waits for it' : `after ${deltas} text deltas`})`));
          suspendState = Promise.resolve(session.doSuspendTurn());
          suspendRequested();
        }
      },
    });
    // Either the suspend point comes, or the turn ends first (then there is nothing to continue).
    await Promise.race([suspendPoint, Promise.resolve(control.done).then(() => undefined, () => undefined)]);
    printer.flush();
    if (!suspendState) throw new CliError('demo: the turn finished before the suspend point; nothing to continue');
    const resumeState = await suspendState;
    const resume = parseResumeState(prepared.adapter.harnessId, resumeState);
    detail(`resume state: cursor ${resume.cursor}, turn ${resume.turn?.turnId ?? '-'}${resume.turn?.redeliver.length ? `, unanswered ${resume.turn.redeliver.join(', ')}` : ''} (no secret in it)`);

    step(5, 'continue from a second process');
    const stateFile = join(dir, 'resume-state.json');
    const resultFile = join(dir, 'continue-result.json');
    const state: DemoState = {
      v: 1,
      adapter: entry.id,
      root,
      templatesRoot: join(dir, 'templates'),
      sessionId,
      workDir,
      recordDir,
      ...(prepared.model.kind === 'scripted' ? { modelUrl: prepared.model.url } : {}),
      resumeState,
      resultFile,
    };
    await writeFile(stateFile, `${JSON.stringify(state)}\n`, { mode: 0o600 });
    detail(`$ harness-bridge demo-continue --state ${stateFile}`);
    const continueStart = Date.now();
    handedOver = true; // from here the second process owns the session (it stops the bridge when done)
    const exitCode = await runSecondProcess(stateFile);
    times.continue = Date.now() - continueStart;
    if (exitCode !== 0) throw new CliError(`demo: the second process exited with code ${exitCode}`);
    const result = await readResult(resultFile);

    step(6, 'summary');
    const live = [...slice1, ...result.parts];
    // What the consumer saw, both slices in order: the recording's replay must reproduce it (tests compare).
    await writeFile(join(dir, 'live-parts.ndjson'), live.map((part) => `${JSON.stringify(part)}\n`).join(''), { mode: 0o600 });
    // One stream, as the replay translates it: the second slice's re-sent start of the block cut open goes (docs/guarantees.md#ui).
    const replay = compareWithReplay(recordDir, prepared.adapter, joinSlices([slice1, result.parts]));
    const edited = await readFile(join(workDir, notesFile), 'utf8').catch(() => '(missing)');
    const redelivered = live.length - dedupeRedelivered(live).length;
    times.total = Date.now() - t0;
    printSummary(out, style, {
      parts: live.length,
      slice1: slice1.length,
      slice2: result.parts.length,
      redelivered,
      cursor: result.cursor,
      rungs: result.rungs,
      pid: result.pid,
      finish: result.finish,
      edited: edited.trim(),
      replay,
      times,
      dir,
      stateDir: resume.stateDir,
      model: prepared.model,
    });
    return result.finish === 'error' || !replay.identical ? 1 : 0;
  } catch (error) {
    // Before the handover this process owns the bridge and the CLI: leave nothing running.
    if (started && !handedOver) await Promise.resolve(started.doDestroy()).catch(() => undefined);
    throw error;
  } finally {
    await prepared.close();
    if (booleanFlag(parsed, 'clean')) await rm(dir, { recursive: true, force: true });
  }
}

function runSecondProcess(stateFile: string): Promise<number> {
  const script = process.argv[1];
  if (script === undefined) throw new CliError('demo: cannot tell which script to run for the second process');
  return new Promise((resolveExit, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, script, 'demo-continue', '--state', stateFile], { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolveExit(code ?? (signal ? 128 : 1)));
  });
}

async function readResult(file: string): Promise<DemoResult> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new CliError(`demo: the second process left no readable result in ${file}: ${(error as Error).message}`);
  }
  const parsed = demoResultSchema.safeParse(json);
  if (!parsed.success) throw new CliError(`demo: the second process's result is malformed: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/** A host tool call a slice delivered but did not answer is delivered once more by the next slice: count it once. */
function dedupeRedelivered(parts: ReadonlyArray<HarnessV1StreamPart>): HarnessV1StreamPart[] {
  const seen = new Set<string>();
  return parts.filter((part) => {
    if (part.type !== 'tool-call' || part.providerExecuted === true) return true;
    if (seen.has(part.toolCallId)) return false;
    seen.add(part.toolCallId);
    return true;
  });
}

type ReplayComparison = { identical: boolean; parts: number; detail: string };

function compareWithReplay(recordDir: string, adapter: Parameters<typeof translateRecords>[0], live: ReadonlyArray<HarnessV1StreamPart>): ReplayComparison {
  try {
    const source = loadSource(recordDir);
    const replayed = normalizeParts(translateRecords(adapter, reconstruct(source).records).parts.map((entry) => entry.part));
    const expected = normalizeParts(dedupeRedelivered(live));
    const a = JSON.stringify(replayed);
    const b = JSON.stringify(expected);
    if (a === b) return { identical: true, parts: replayed.length, detail: `${replayed.length} parts, identical to the live stream` };
    const index = replayed.findIndex((part, i) => JSON.stringify(part) !== JSON.stringify(expected[i]));
    return { identical: false, parts: replayed.length, detail: `${replayed.length} parts, differs from the live stream at part #${index < 0 ? Math.min(replayed.length, expected.length) : index}` };
  } catch (error) {
    return { identical: false, parts: 0, detail: `could not replay the recording: ${(error as Error).message}` };
  }
}

type Summary = {
  parts: number;
  slice1: number;
  slice2: number;
  redelivered: number;
  cursor: number;
  rungs: ReadonlyArray<string>;
  pid: number;
  finish: string;
  edited: string;
  replay: ReplayComparison;
  times: Record<string, number>;
  dir: string;
  stateDir: string;
  model: ModelChoice;
};

function printSummary(out: (line: string) => void, style: Style, s: Summary): void {
  const secs = (ms: number | undefined) => (ms === undefined ? '-' : `${(ms / 1000).toFixed(2)} s`);
  const row = (label: string, value: string) => out(`      ${style.dim(label.padEnd(12))} ${value}`);
  row('parts', `${s.parts} (${s.slice1} in process ${process.pid} before the suspend, ${s.slice2} in process ${s.pid} after it${s.redelivered ? `; ${s.redelivered} unanswered host tool call delivered again, as designed` : ''})`);
  row('finish', s.finish === 'stop' ? style.green(s.finish) : style.red(s.finish));
  row('cursor', `${s.cursor} (the last seq whose parts were delivered)`);
  row('rungs', `${s.rungs.join(' → ') || '(none)'} — the second process reached the same bridge (lossless)`);
  if (s.model.kind !== 'none') row(notesFile, `now ${JSON.stringify(s.edited)}`);
  row('replay', s.replay.identical ? style.green(s.replay.detail) : style.red(s.replay.detail));
  row('times', `cli ${secs(s.times.cli)} · bootstrap+bridge ${secs(s.times.bootstrap)} · slice 1 ${secs(s.times.slice1)} · second process ${secs(s.times.continue)} · total ${secs(s.times.total)}`);
  row('model', describeModel(s.model));
  out(`      ${style.dim('try')}          harness-bridge replay ${join(s.dir, 'recordings')} --timeline   (or --check)`);
  out(`      ${style.dim('')}             harness-bridge inspect ${s.stateDir}`);
  out(`      ${style.dim('see it')}       harness-bridge view ${join(s.dir, 'recordings')} --out ${join(s.dir, 'session.html')}   (then open the page)`);
  out(
    `summary: parts=${s.parts} slice1=${s.slice1} slice2=${s.slice2} cursor=${s.cursor} rungs=${s.rungs.join(',') || 'none'} second-process=${s.pid !== process.pid ? `pid:${s.pid}` : 'no'} finish=${s.finish} replay=${s.replay.identical ? 'identical' : 'different'} total=${secs(s.times.total).replace(' ', '')}`,
  );
}
