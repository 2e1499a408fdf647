// `harness-bridge replay`: offline re-translation of a recording or journal
// with a registered adapter (no CLI, no network), plus --timeline, --check
// and --diff. The work is host/replay's; this file parses flags and prints.
import { findAdapter, adapterIds, type AnyCliAdapter } from '../adapters/registry.ts';
import {
  buildTimeline,
  checkInvariants,
  diffTranslations,
  guessAdapterId,
  loadSource,
  reconstruct,
  SourceError,
  translateRecords,
  type ReplaySource,
  type TimelineRow,
  type TranslatedPart,
} from '../replay/index.ts';
import { booleanFlag, CliError, CliUsageError, parseArgs, stringFlag } from './args.ts';
import { partLine } from './parts.ts';
import { stdoutStyle, type Style } from './style.ts';

export const replayHelp = `usage: harness-bridge replay <recording|journal|dir> [options]

Re-translates recorded records offline with an adapter (no CLI, no network) and
prints the stream parts, one per line: index, the seq of the record that
produced it, the part type and its fields.

Input: a recording written by a host channel (docs/recording-format.md; one
file, or a directory of *.ndjson recordings, e.g. a harness recordDir), a bridge
journal (journal.ndjson: every line's crc is verified), or a bridge state dir.
A line that does not validate is reported as FILE:LINE and the exit code is 1.

options:
  --adapter <id>        adapter to translate with (${adapterIds().join(', ')});
                        default: guessed from the launched argv
  --timeline            records with seq, turn and time, connection events,
                        replay traffic (↺) and recovery-ladder markers
  --check               verify invariants: seq continuity (no gap, no
                        duplicate), one owner at a time, turn boundaries, every
                        host tool call answered exactly once; exit 1 at the
                        first violation, naming its seq
  --diff <other>        translate <other> too and show where the two
                        translations first differ (exit 1 if they do)
  --diff-adapter <id>   translate the other side with this adapter (default:
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
  const style = stdoutStyle();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const source = load(parsed.positionals[0]!);
  const records = reconstruct(source).records;

  if (booleanFlag(parsed, 'timeline')) {
    for (const row of buildTimeline(source)) out(timelineLine(row, style));
    return 0;
  }
  const adapterId = stringFlag(parsed, 'adapter') ?? guessAdapterId(records);
  if (booleanFlag(parsed, 'check')) {
    const adapter = adapterId === undefined ? undefined : resolveAdapter(adapterId);
    const result = checkInvariants(source, adapter);
    const first = result.violations[0];
    if (first) {
      process.stderr.write(`replay --check: ${first.rule} at seq ${first.seq}: ${first.message}${first.line === undefined ? '' : ` (line ${first.line})`}\n`);
      return 1;
    }
    out(`${style.green('ok')}: ${result.stats.records} records, ${result.stats.deliveries} deliveries, ${result.stats.turns} turns, ${result.stats.hostCalls} host tool calls; seq continuous, one owner at a time, turn boundaries hold, every tool call answered once${adapter ? '' : ' (bridge tool calls only: no adapter)'}`);
    return 0;
  }
  if (adapterId === undefined) throw new CliUsageError('replay: cannot tell which adapter produced this; pass --adapter <id>');
  const adapter = resolveAdapter(adapterId);
  const parts = translateRecords(adapter, records).parts;

  if (diffing) {
    const otherPath = stringFlag(parsed, 'diff');
    const otherSource = otherPath === undefined ? source : load(otherPath);
    const otherAdapterId = stringFlag(parsed, 'diff-adapter') ?? adapterId;
    const otherParts = translateRecords(resolveAdapter(otherAdapterId), reconstruct(otherSource).records).parts;
    const a = `${parsed.positionals[0]} (${adapterId})`;
    const b = `${otherPath ?? parsed.positionals[0]} (${otherAdapterId})`;
    const diff = diffTranslations(parts, otherParts);
    if (!diff) {
      out(`${style.green('same')}: both translations have the same ${parts.length} parts`);
      return 0;
    }
    out(`${style.yellow('differ')} at part #${diff.index} (a: ${diff.lengths.a} parts, b: ${diff.lengths.b} parts)`);
    out(`  a = ${a}`);
    out(`  b = ${b}`);
    diff.context.forEach((entry, i) => out(`    ${partLine(entry, diff.index - diff.context.length + i, style)}`));
    out(`  a ${diff.a ? partLine(diff.a, diff.index, style) : style.dim('(no part: a ends here)')}`);
    out(`  b ${diff.b ? partLine(diff.b, diff.index, style) : style.dim('(no part: b ends here)')}`);
    return 1;
  }
  if (booleanFlag(parsed, 'json')) {
    for (const entry of parts) out(JSON.stringify(entry.part));
    return 0;
  }
  parts.forEach((entry: TranslatedPart, index) => out(partLine(entry, index, style)));
  process.stderr.write(`${parts.length} parts from ${records.length} records (${source.kind}, adapter ${adapterId})\n`);
  return 0;
}

function load(path: string): ReplaySource {
  try {
    return loadSource(path);
  } catch (error) {
    if (error instanceof SourceError) throw new CliError(`replay: ${error.message}`);
    throw error;
  }
}

function resolveAdapter(id: string): AnyCliAdapter {
  const entry = findAdapter(id);
  if (!entry) throw new CliUsageError(`replay: unknown adapter ${JSON.stringify(id)}; known: ${adapterIds().join(', ')}`);
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
