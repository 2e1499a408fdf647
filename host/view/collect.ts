// What `harness-bridge view` shows, gathered from a recording or journal in
// three streaming passes, each a reuse of host/replay:
//   1. checkInvariants — the --check findings (gaps, duplicates, owners, turns, tool calls);
//   2. timelineRows    — segments (slices: suspend, continue), ladder rungs, channel
//                        events, diagnostics, replay traffic (redelivered and replayed ranges);
//   3. RecordStream + TranslationStream — every record through the adapter,
//      exactly as `replay` translates, aggregated per turn (counts per lane, a
//      density histogram, usage per step), host tool calls and approvals with
//      their answers, and detail (the record and the parts it became) for a
//      bounded number of records.
// The bound: every record when the source has at most `keepAllUpTo`;
// otherwise `window` records around each turn edge, each host call, answer,
// lifecycle record and flag (finding, rung, segment, event), at most `maxKept`
// in all. Memory is that detail plus per-turn aggregates, never the source.
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import { clip } from '../cli/parts.ts';
import { checkInvariants, recordSummary, timelineRows, TranslationStream, type ReplayInput } from '../replay/index.ts';
import { recordingIndex, RecordStream, unknownJournal } from '../replay/records.ts';
import { lanes, type ElidedRow, type HostCallRow, type Lane, type MarkRow, type PartRow, type RecordRow, type TurnSummary, type Usage, type ViewData } from './view-data.ts';

export type ViewOptions = {
  readonly adapterId: string;
  readonly title?: string;
  /** Keep every record's detail when the source has at most this many records. */
  readonly keepAllUpTo?: number;
  /** Records kept on each side of something worth seeing. */
  readonly window?: number;
  /** Records kept in all. */
  readonly maxKept?: number;
};

export const viewBounds = { keepAllUpTo: 20_000, window: 40, maxKept: 50_000, maxTurns: 5_000, maxMarks: 5_000, maxHostCalls: 5_000, maxSteps: 500, partsPerRecord: 50, textChars: 200, histogramColumns: 64 } as const;

const laneOf: Record<JournalRecord['kind'], Lane> = {
  stdout: 'stdout',
  stderr: 'stderr',
  pty: 'pty',
  stdin: 'stdin',
  'tool-call': 'tool',
  'tool-result': 'tool',
  'approval-request': 'approval',
  approval: 'approval',
  'turn-start': 'lifecycle',
  'turn-end': 'lifecycle',
  spawn: 'lifecycle',
  exit: 'lifecycle',
  signal: 'lifecycle',
  'bridge-start': 'lifecycle',
};
const laneIndex = new Map<string, number>(lanes.map((lane, i) => [lane, i]));

export function collectView<S>(source: ReplayInput, adapter: CliAdapter<S>, options: ViewOptions): ViewData {
  const keepAllUpTo = options.keepAllUpTo ?? viewBounds.keepAllUpTo;
  const window = options.window ?? viewBounds.window;
  const maxKept = options.maxKept ?? viewBounds.maxKept;

  // Pass 1: the findings.
  const check = checkInvariants(source, adapter);
  const findings: MarkRow[] = check.violations.slice(0, viewBounds.maxMarks).map((v) => ({
    kind: 'finding',
    rule: v.rule,
    text: `${v.rule}: ${v.message}${v.line === undefined ? '' : ` (line ${v.line})`}`,
    record: -1,
    journal: -1,
    seq: v.seq,
  }));

  // Pass 2: the flags the timeline raises, placed before the first record at or after (journal, seq).
  const { marks, answeredIn, stdinIn } = timelineMarks(source);
  const keepAll = check.stats.records <= keepAllUpTo;
  const collector = new Collector(adapter, { keepAll, window, maxKept }, marks, findings, { answeredIn, stdinIn }, source.kind === 'recording' ? recordingIndex(source) : undefined);
  // Pass 3: the records and their parts.
  for (const record of new RecordStream(source).records()) collector.push(record);
  collector.finish();

  // Stable: at one record, the timeline's flags in the order they happened, then what the collection and the check added.
  const allMarks = [...collector.marks, ...findings].sort((a, b) => a.record - b.record);
  const segments = source.kind === 'recording' ? source.segments.length : 0;
  return {
    version: 1,
    title: options.title ?? source.path,
    source: { path: source.path, kind: source.kind, adapter: options.adapterId, segments, journals: collector.journal + 1 },
    counts: {
      records: collector.id,
      parts: collector.partIndex,
      deliveries: check.stats.deliveries,
      turns: collector.turns.length + collector.turnsDropped,
      hostCalls: collector.hostCallCount,
      findings: check.violations.length + check.dropped,
      findingsDropped: check.dropped + Math.max(0, check.violations.length - findings.length),
    },
    bound: { keepAllUpTo, window, maxKept, kept: collector.records.length, keptParts: collector.parts.length },
    lanes,
    turns: collector.turns,
    turnsDropped: collector.turnsDropped,
    records: collector.records,
    parts: collector.parts,
    elided: collector.elided,
    marks: allMarks,
    hostCalls: collector.hostCalls,
  };
}

/**
 * Segments, rungs, channel events, diagnostics and replay-traffic ranges from the timeline; which segment sent each host
 * answer over the bridge (by call id), and in which segment each stdin record was first delivered live (by journal and seq:
 * the host that wrote an answer on the CLI's stdin).
 */
function timelineMarks(source: ReplayInput): { marks: MarkRow[]; answeredIn: Map<string, number>; stdinIn: Map<string, number> } {
  const marks: MarkRow[] = [];
  const answeredIn = new Map<string, number>();
  const stdinIn = new Map<string, number>();
  const journals = source.kind === 'recording' ? recordingIndex(source).journals.map((journal) => journal.journalId) : [];
  const journalOfSegment = (index: number): number => {
    if (source.kind !== 'recording') return 0;
    const segment = source.segments[index];
    const id = segment?.hello?.journalId ?? segment?.header.journalId ?? unknownJournal;
    return Math.max(0, journals.indexOf(id));
  };
  let segment = -1;
  let journal = 0;
  const lastSeq = new Map<number, number>();
  /** A run of replay traffic: seqs sent again (delivered before), or caught up (journaled while no host was attached). */
  let replayRun: { from: number; to: number; journal: number; again: boolean } | undefined;
  const add = (mark: MarkRow) => {
    if (marks.length < viewBounds.maxMarks) marks.push(mark);
  };
  const endRun = () => {
    if (replayRun) {
      const { from, to, again } = replayRun;
      const text = again ? `redelivered seq ${from}..${to}: delivered before, sent again after an attach` : `replayed seq ${from}..${to} after an attach: journaled while no host was attached`;
      add({ kind: again ? 'redelivered' : 'replayed', text, record: -1, journal: replayRun.journal, seq: from, toSeq: to });
    }
    replayRun = undefined;
  };
  const next = () => (lastSeq.get(journal) ?? 0) + 1;
  for (const row of timelineRows(source)) {
    if (row.kind === 'record') {
      const seq = row.seq!;
      if (row.replay) {
        const again = (lastSeq.get(journal) ?? 0) >= seq;
        if (replayRun && seq === replayRun.to + 1 && again === replayRun.again) replayRun.to = seq;
        else {
          endRun();
          replayRun = { from: seq, to: seq, journal, again };
        }
      } else {
        endRun();
        // stdin bytes, and the tool-result record a stdin call's answer is journaled as (input.answer), by journal and seq.
        if (source.kind === 'recording' && (row.text.startsWith('stdin ') || row.text.startsWith('tool-result ')) && stdinIn.size < viewBounds.maxHostCalls) {
          const key = `${journal}:${seq}`;
          if (!stdinIn.has(key)) stdinIn.set(key, segment);
        }
      }
      lastSeq.set(journal, Math.max(lastSeq.get(journal) ?? 0, seq));
      continue;
    }
    endRun();
    if (row.kind === 'segment') {
      segment++;
      journal = journalOfSegment(segment);
      add({ kind: 'segment', text: segment === 0 || source.kind === 'journal' ? row.text : `${row.text} (a new host channel: continue after suspend, or a reconnect)`, record: -1, journal, seq: next() });
    } else if (row.kind === 'rung') {
      // A record's own rung (restart, rerun, interruption) once, not again when the record is delivered again.
      if (row.seq === undefined || row.seq > (lastSeq.get(journal) ?? 0)) add({ kind: 'rung', text: row.text, record: -1, journal, seq: row.seq ?? next() });
    }
    else if (row.kind === 'event') add({ kind: 'event', text: row.text, record: -1, journal, seq: next() });
    else if (row.text.startsWith('← diagnostic') || row.text.startsWith('← error')) add({ kind: 'diagnostic', text: row.text.slice(2), record: -1, journal, seq: next() });
    else {
      const answer = /^→ (?:tool-result|approval) (\S+)/.exec(row.text);
      if (answer && answeredIn.size < viewBounds.maxHostCalls) answeredIn.set(answer[1]!, segment);
    }
  }
  endRun();
  marks.sort((a, b) => a.journal - b.journal || a.seq - b.seq);
  return { marks, answeredIn, stdinIn };
}

type Pending = { row: RecordRow; parts: PartRow[] };
type OpenCall = HostCallRow & { readonly at: number };

class Collector<S> {
  readonly records: RecordRow[] = [];
  readonly parts: PartRow[] = [];
  readonly elided: ElidedRow[] = [];
  readonly turns: TurnSummary[] = [];
  readonly hostCalls: HostCallRow[] = [];
  readonly marks: MarkRow[];
  turnsDropped = 0;
  hostCallCount = 0;
  id = 0;
  partIndex = 0;
  journal = 0;
  readonly #translation: TranslationStream<S>;
  readonly #turnIndex = new Map<string, number>();
  readonly #turnOf = new Map<string, number>();
  readonly #turnRecords: number[] = [];
  readonly #calls = new Map<string, OpenCall>();
  readonly #ring: Pending[] = [];
  #keepUntil = -1;
  #lastSeq = 0;
  #origin: number | undefined;
  #mark = 0;
  #finding = 0;
  #recomputeNext = false;

  constructor(
    adapter: CliAdapter<S>,
    private readonly bound: { keepAll: boolean; window: number; maxKept: number },
    marks: MarkRow[],
    private readonly findings: MarkRow[],
    private readonly answers: { answeredIn: Map<string, number>; stdinIn: Map<string, number> },
    private readonly index: ReturnType<typeof recordingIndex> | undefined,
  ) {
    this.#translation = new TranslationStream(adapter);
    this.marks = marks;
  }

  push(record: JournalRecord): void {
    if (record.seq <= this.#lastSeq && this.id > 0) {
      // The next journal of a recording: the old one was lost (rung rerun). A turn it left in flight is run again in the new one.
      this.journal++;
      const last = this.turns.at(-1);
      this.#recomputeNext = last !== undefined && last.end === null;
    }
    this.#lastSeq = record.seq;
    const id = this.id++;
    this.#origin ??= record.ts;
    const t = record.ts - this.#origin;
    const lane = laneIndex.get(laneOf[record.kind])!;
    const turn = this.#turn(record, id, t);
    let flagged = this.#placeMarks(record, id, turn);

    const newCalls: OpenCall[] = [];
    const out = this.#translation.push(record, (call) => {
      this.hostCallCount++;
      const open: OpenCall = { kind: call.kind === 'tool-call' ? 'tool' : 'approval', id: call.id, name: '', turn, callRecord: id, answerRecord: null, callSeq: call.seq, answerSeq: null, source: call.source, ms: null, outcome: null, by: null, at: record.ts };
      newCalls.push(open);
    });
    const partRows: PartRow[] = [];
    for (const { part } of out) {
      const index = this.partIndex++;
      if (partRows.length < viewBounds.partsPerRecord) partRows.push([index, id, part.type, partText(part)]);
      if (turn >= 0) this.#usage(this.turns[turn]!, part);
      const call = newCalls.find((c) => (part.type === 'tool-call' && c.id === part.toolCallId) || (part.type === 'tool-approval-request' && c.id === part.approvalId));
      if (call) (call as { name: string }).name = part.type === 'tool-call' ? part.toolName : approvalName(part, record);
    }
    for (const call of newCalls) {
      if (this.hostCalls.length >= viewBounds.maxHostCalls) break;
      this.hostCalls.push(call);
      this.#calls.set(call.id, call);
      flagged = true;
    }
    if (this.#answer(record, id)) flagged = true;
    if (turn >= 0) this.#aggregate(turn, id, record, lane, t, out.length);

    const row: RecordRow = [id, this.journal, record.seq, lane, t, turn, recordSummary(record), partRows[0]?.[0] ?? this.partIndex, out.length, this.#delivered(record.seq)];
    this.#detail({ row, parts: partRows }, flagged || laneOf[record.kind] !== 'stdout' && laneOf[record.kind] !== 'stderr' && laneOf[record.kind] !== 'pty');
  }

  finish(): void {
    for (const pending of this.#ring.splice(0)) this.#elide(pending.row);
    for (; this.#mark < this.marks.length; this.#mark++) this.marks[this.#mark]!.record = this.id;
    for (; this.#finding < this.findings.length; this.#finding++) this.findings[this.#finding]!.record = this.id;
  }

  /** The turn a record belongs to (index into turns), opening its summary at its first record. */
  #turn(record: JournalRecord, id: number, t: number): number {
    if (record.turnId === null) return -1;
    const key = `${this.journal}\u0000${record.turnId}`;
    const known = this.#turnIndex.get(key);
    if (known !== undefined) return known;
    if (this.turns.length >= viewBounds.maxTurns) {
      if (!this.#turnOf.has(key)) {
        this.#turnOf.set(key, -1);
        this.turnsDropped++;
      }
      return -1;
    }
    // Recomputed: started by a bridge rerun, or the first turn of a new journal while the lost one's turn was in flight (the host re-drives it).
    const rerun = (record.kind === 'turn-start' && record.data.rerun === true) || this.#recomputeNext;
    this.#recomputeNext = false;
    const summary: TurnSummary = {
      turnId: record.turnId,
      journal: this.journal,
      rerun,
      end: null,
      firstRecord: id,
      lastRecord: id,
      firstSeq: record.seq,
      lastSeq: record.seq,
      t0: t,
      t1: t,
      records: 0,
      parts: 0,
      findings: 0,
      byLane: lanes.map(() => 0),
      steps: [],
      total: null,
      histogram: { width: 1, counts: [], t: [] },
    };
    this.#turnIndex.set(key, this.turns.length);
    this.#turnRecords.push(0);
    this.turns.push(summary);
    if (rerun && this.marks.length < viewBounds.maxMarks) {
      const why = record.kind === 'turn-start' && record.data.rerun === true ? 'started by rerun' : 'the turn in flight when its journal was lost, run again in a new journal';
      this.marks.push({ kind: 'recomputed', text: `turn ${record.turnId} is recomputed (${why}): its output is produced again`, record: id, journal: this.journal, seq: record.seq });
    }
    return this.turns.length - 1;
  }

  #aggregate(index: number, id: number, record: JournalRecord, lane: number, t: number, parts: number): void {
    const turn = this.turns[index]!;
    const n = this.#turnRecords[index]!;
    this.#turnRecords[index] = n + 1;
    turn.records++;
    turn.parts += parts;
    turn.lastRecord = id;
    turn.lastSeq = record.seq;
    turn.t1 = t;
    turn.byLane[lane]!++;
    if (record.kind === 'turn-end') (turn as { end: string | null }).end = record.data.reason;
    const h = turn.histogram;
    const columns = viewBounds.histogramColumns;
    let column = Math.floor(n / h.width);
    while (column >= columns) {
      // Halve the resolution: merge neighbouring columns.
      const counts: number[] = [];
      const times: number[] = [];
      for (let c = 0; c < columns / 2; c++) {
        for (let l = 0; l < lanes.length; l++) counts.push((h.counts[2 * c * lanes.length + l] ?? 0) + (h.counts[(2 * c + 1) * lanes.length + l] ?? 0));
        times.push(h.t[2 * c]!);
      }
      h.counts = counts;
      h.t = times;
      h.width *= 2;
      column = Math.floor(n / h.width);
    }
    while (h.t.length <= column) {
      h.t.push(t);
      for (let l = 0; l < lanes.length; l++) h.counts.push(0);
    }
    h.counts[column * lanes.length + lane]!++;
  }

  #usage(turn: TurnSummary, part: HarnessV1StreamPart): void {
    if (part.type === 'finish-step' && turn.steps.length < viewBounds.maxSteps) turn.steps.push(usageOf(part.usage));
    else if (part.type === 'finish') turn.total = usageOf(part.totalUsage);
  }

  /** An answer to an open host call: a tool-result / approval record (bridge calls), or the CLI's stdin naming the call (CLI calls). */
  #answer(record: JournalRecord, id: number): boolean {
    const settle = (call: OpenCall, outcome: string, by: string) => {
      call.answerRecord = id;
      call.answerSeq = record.seq;
      call.ms = record.ts - call.at;
      call.outcome = outcome;
      call.by = by;
      this.#calls.delete(call.id);
    };
    const segmentOf = (index: number | undefined) => (index === undefined ? '' : ` (segment ${index + 1})`);
    const segment = (callId: string) => segmentOf(this.answers.answeredIn.get(callId));
    if (record.kind === 'tool-result' || record.kind === 'approval') {
      const call = this.#calls.get(record.data.callId);
      if (!call) return false;
      // A CLI-side call's answer is journaled as a tool-result record before its stdin bytes: the host wrote it on the CLI's stdin.
      const onStdin = `host, on the CLI's stdin${segmentOf(this.answers.stdinIn.get(`${this.journal}:${record.seq}`))}`;
      if (record.kind === 'tool-result') settle(call, record.data.isError ? 'error' : 'ok', call.source === 'cli' ? onStdin : `host, over the bridge${segment(call.id)}`);
      else settle(call, record.data.approved ? 'approved' : `denied${record.data.reason ? `: ${record.data.reason}` : ''}`, `host, over the bridge${segment(call.id)}`);
      return true;
    }
    if (record.kind === 'stdin') {
      let any = false;
      for (const call of [...this.#calls.values()]) {
        if (call.source === 'cli' && record.data.text.includes(JSON.stringify(call.id))) {
          settle(call, call.kind === 'approval' ? (/"approved"\s*:\s*false|deny/i.test(record.data.text) ? 'denied' : 'approved') : 'answered', `host, on the CLI's stdin${segmentOf(this.answers.stdinIn.get(`${this.journal}:${record.seq}`))}`);
          any = true;
        }
      }
      return any;
    }
    return false;
  }

  /** Marks and findings that sit before this record: place them, and say whether the record is worth keeping for them. */
  #placeMarks(record: JournalRecord, id: number, turn: number): boolean {
    let placed = false;
    while (this.#mark < this.marks.length) {
      const mark = this.marks[this.#mark]!;
      if (mark.journal > this.journal || (mark.journal === this.journal && mark.seq > record.seq)) break;
      mark.record = id;
      this.#mark++;
      placed = true;
    }
    while (this.#finding < this.findings.length && this.findings[this.#finding]!.seq <= record.seq) {
      this.findings[this.#finding++]!.record = id;
      if (turn >= 0) this.turns[turn]!.findings++;
      placed = true;
    }
    return placed;
  }

  #delivered(seq: number): number {
    const journal = this.index?.journals[this.journal];
    return journal?.repeated.has(seq) ? 2 : 1;
  }

  /** Keeps `pending` (and the window before it) when flagged or inside a window; else holds it in the ring, eliding what falls out. */
  #detail(pending: Pending, flagged: boolean): void {
    const { keepAll, window, maxKept } = this.bound;
    const id = pending.row[0];
    if (this.records.length >= maxKept) return this.#elide(pending.row);
    if (keepAll || flagged || id <= this.#keepUntil) {
      for (const held of this.#ring.splice(0)) this.#keep(held);
      this.#keep(pending);
      if (flagged) this.#keepUntil = id + window;
      return;
    }
    this.#ring.push(pending);
    if (this.#ring.length > window) this.#elide(this.#ring.shift()!.row);
  }

  #keep({ row, parts }: Pending): void {
    if (this.records.length >= this.bound.maxKept) return this.#elide(row);
    this.records.push(row);
    for (const part of parts) this.parts.push(part);
  }

  #elide(row: RecordRow): void {
    const last = this.elided.at(-1);
    if (last && last[1] === row[0] - 1) {
      last[1] = row[0];
      last[2][row[3]]!++;
      return;
    }
    const counts = lanes.map(() => 0);
    counts[row[3]]!++;
    this.elided.push([row[0], row[0], counts]);
  }
}

function usageOf(usage: unknown): Usage {
  const u = (usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown };
  const total = (value: unknown): number | null => {
    if (typeof value === 'number') return value;
    if (value && typeof value === 'object' && typeof (value as { total?: unknown }).total === 'number') return (value as { total: number }).total;
    return null;
  };
  return { input: total(u.inputTokens), output: total(u.outputTokens) };
}

function approvalName(part: HarnessV1StreamPart, record: JournalRecord): string {
  if (record.kind === 'approval-request') return record.data.toolName;
  return part.type === 'tool-approval-request' ? part.toolCallId : '';
}

/** A part as one line: its fields but the type, as compact JSON, clipped (what `replay` lists). */
export function partText(part: HarnessV1StreamPart): string {
  const { type: _type, ...rest } = part;
  const body = JSON.stringify(rest);
  return body === '{}' ? '' : clip(body, viewBounds.textChars);
}
