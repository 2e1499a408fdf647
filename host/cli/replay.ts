// `harness-bridge replay`: offline re-translation of a recording or journal
// with a registered adapter (no CLI, no network), plus --timeline, --check
// and --diff. The work is host/replay's; this file parses flags and prints.
// Every mode streams (bounded memory whatever the file size): the source is
// read as often as the mode needs (a validating pass before any output, the
// adapter guess, the work itself), never held.
import { findAdapter, adapterIds, isAdapterPath, type AdapterEntry, type AnyCliAdapter } from '../adapters/registry.ts';
import {
  checkInvariants,
  diffTranslations,
  guessAdapterId,
  openSource,
  RecordStream,
  SourceError,
  timelineRows,
  translateStream,
  validateSource,
  type ReplayInput,
  type TimelineRow,
} from '../replay/index.ts';
import { booleanFlag, CliError, CliUsageError, parseArgs, stringFlag } from './args.ts';
import { LineOutput } from './line-output.ts';
import { partLine } from './parts.ts';
import { resolveAdapterArg } from './setup.ts';
import { stdoutStyle, type Style } from './style.ts';

export const replayHelp = `usage: harness-bridge replay <recording|journal|dir> [options]

Re-translates recorded records offline with an adapter (no CLI, no network) and
prints the stream parts, one per line: index, the seq of the record that
produced it, the part type and its fields.

Input: a recording written by a host channel (docs/recording-format.md; one
file, or a directory of *.ndjson recordings, e.g. a harness recordDir), a bridge
journal (journal.ndjson: every line's crc is verified), or a bridge state dir.
Files of any size are streamed. A line that does not validate is reported as
FILE:LINE with its byte offset and what was expected there, and the exit code
is 1; input that is neither a journal nor a recording is reported the same way.

options:
  --adapter <id|path>   adapter to translate with (${adapterIds().join(', ')}, or
                        an adapter module: ./my-adapter.mjs, as for run);
                        default: guessed from the launched argv
  --timeline            records with seq, turn and time, connection events,
                        replay traffic (↺) and recovery-ladder markers
  --check               verify invariants: seq continuity (no gap, no
                        duplicate), one owner at a time, turn boundaries, every
                        host tool call answered exactly once; exit 1 at the
                        first violation, naming its seq
  --diff <other>        translate <other> too and show where the two
                        translations first differ (exit 1 if they do)
  --diff-adapter <id|path>
                        translate the other side with this adapter (default:
                        the same); with no --diff, the same input: compares
                        two adapter versions on one recording
  --json                parts as NDJSON (one part per line, no seq)
  -h, --help            this help`;

const flags = {
  adapter: { type: 'string' },
  timeline: { type: 'boolean' },
  check: { type: 'boolean' },
  diff: { type: 'string' },
  'diff-adapter': { type: 'string' },
  json: { type: 'boolean' },
} as const;

export async function replayCommand(argv: ReadonlyArray<string>): Promise<number> {
  const parsed = parseArgs('replay', argv, flags, { min: 1, max: 1, name: 'the recording or journal to replay' });
  if (parsed.help) {
    process.stdout.write(`${replayHelp}\n`);
    return 0;
  }
  const modes = ['timeline', 'check', 'json'].filter((name) => booleanFlag(parsed, name));
  const diffing = stringFlag(parsed, 'diff') !== undefined || stringFlag(parsed, 'diff-adapter') !== undefined;
  if (modes.length + (diffing ? 1 : 0) > 1) throw new CliUsageError(`replay: choose one of --timeline, --check, --diff, --json`);
  const output = new LineOutput(process.stdout);
  try {
    return await replay(parsed, diffing, output);
  } catch (error) {
    if (error instanceof SourceError) throw new CliError(`replay: ${error.message}`);
    throw error;
  } finally {
    await output.flush();
  }
}

async function replay(parsed: ReturnType<typeof parseArgs>, diffing: boolean, output: LineOutput): Promise<number> {
  await loadAdapterModules('replay', parsed);
  const style = stdoutStyle();
  const out = (line: string) => output.line(line);
  const source = openSource(parsed.positionals[0]!);
  const records = (input: ReplayInput) => new RecordStream(input).records();

  if (booleanFlag(parsed, 'timeline')) {
    validateSource(source);
    for (const row of timelineRows(source)) await out(timelineLine(row, style));
    return 0;
  }
  const adapterId = stringFlag(parsed, 'adapter') ?? guessAdapterId(records(source));
  if (booleanFlag(parsed, 'check')) {
    const adapter = adapterId === undefined ? undefined : resolveAdapter('replay', adapterId);
    const result = checkInvariants(source, adapter);
    const first = result.violations[0];
    if (first) {
      process.stderr.write(`replay --check: ${first.rule} at seq ${first.seq}: ${first.message}${first.line === undefined ? '' : ` (line ${first.line})`}\n`);
      return 1;
    }
    await out(`${style.green('ok')}: ${result.stats.records} records, ${result.stats.deliveries} deliveries, ${result.stats.turns} turns, ${result.stats.hostCalls} host tool calls; seq continuous, one owner at a time, turn boundaries hold, every tool call answered once${adapter ? '' : ' (bridge tool calls only: no adapter)'}`);
    return 0;
  }
  if (adapterId === undefined) throw new CliUsageError('replay: cannot tell which adapter produced this; pass --adapter <id>');
  const adapter = resolveAdapter('replay', adapterId);
  validateSource(source);

  if (diffing) {
    const otherPath = stringFlag(parsed, 'diff');
    const otherSource = otherPath === undefined ? source : openSource(otherPath);
    validateSource(otherSource);
    const otherAdapterId = stringFlag(parsed, 'diff-adapter') ?? adapterId;
    const otherAdapter = resolveAdapter('replay', otherAdapterId);
    const a = `${parsed.positionals[0]} (${adapterId})`;
    const b = `${otherPath ?? parsed.positionals[0]} (${otherAdapterId})`;
    let count = 0;
    const diff = diffTranslations(counted(translateStream(adapter, records(source)), () => count++), translateStream(otherAdapter, records(otherSource)));
    if (!diff) {
      await out(`${style.green('same')}: both translations have the same ${count} parts`);
      return 0;
    }
    await out(`${style.yellow('differ')} at part #${diff.index} (a: ${diff.lengths.a} parts, b: ${diff.lengths.b} parts)`);
    await out(`  a = ${a}`);
    await out(`  b = ${b}`);
    for (const [i, entry] of diff.context.entries()) await out(`    ${partLine(entry, diff.index - diff.context.length + i, style)}`);
    await out(`  a ${diff.a ? partLine(diff.a, diff.index, style) : style.dim('(no part: a ends here)')}`);
    await out(`  b ${diff.b ? partLine(diff.b, diff.index, style) : style.dim('(no part: b ends here)')}`);
    return 1;
  }
  const json = booleanFlag(parsed, 'json');
  let parts = 0;
  let recordCount = 0;
  for (const entry of translateStream(adapter, counted(records(source), () => recordCount++))) {
    await out(json ? JSON.stringify(entry.part) : partLine(entry, parts, style));
    parts++;
  }
  if (json) return 0;
  await output.flush();
  process.stderr.write(`${parts} parts from ${recordCount} records (${source.kind}, adapter ${adapterId})\n`);
  return 0;
}

/** `items`, calling `tick` for each as it passes. */
export function* counted<T>(items: Iterable<T>, tick: () => void): Generator<T, void, undefined> {
  for (const item of items) {
    tick();
    yield item;
  }
}

/** Adapter modules --adapter / --diff-adapter name by path, loaded before anything is read. */
const adapterModules = new Map<string, AdapterEntry>();

/** Loads the adapter modules --adapter / --diff-adapter name by path (replay and view). */
export async function loadAdapterModules(command: string, parsed: ReturnType<typeof parseArgs>): Promise<void> {
  for (const flag of ['adapter', 'diff-adapter']) {
    const value = stringFlag(parsed, flag);
    if (value !== undefined && isAdapterPath(value) && !adapterModules.has(value)) adapterModules.set(value, await resolveAdapterArg(command, value));
  }
}

/** A registered adapter or a loaded adapter module, by id or path. */
export function resolveAdapter(command: string, id: string): AnyCliAdapter {
  const entry = adapterModules.get(id) ?? findAdapter(id);
  if (!entry) throw new CliUsageError(`${command}: unknown adapter ${JSON.stringify(id)}; known: ${adapterIds().join(', ')}`);
  return entry.create();
}

function timelineLine(row: TimelineRow, style: Style): string {
  const t = style.dim(`+${(row.t / 1000).toFixed(3).padStart(8)}s`);
  switch (row.kind) {
    case 'segment':
      return `${t}  ${style.bold(`━━ ${row.text}`)}`;
    case 'rung':
      return `${t}  ${style.yellow(`⚑ ${row.text}`)}`;
    case 'event':
      return `${t}  ${style.cyan(`· ${row.text}`)}`;
    case 'frame':
      return `${t}  ${style.dim(row.text)}`;
    case 'record': {
      const seq = `seq ${String(row.seq).padStart(5)}`;
      const turn = (row.turnId ?? '-').slice(0, 18).padEnd(18);
      return `${t}  ${row.replay ? style.dim('↺') : ' '} ${seq}  ${style.dim(turn)}  ${row.text}`;
    }
  }
}
