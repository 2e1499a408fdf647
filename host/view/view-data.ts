// The data one viewer page embeds (host/view/page.ts renders it): compact
// rows, pre-aggregated per turn, with detail kept only for a bounded number of
// records (collect.ts says which). Arrays of tuples rather than objects: a
// 1M-record journal's page is mostly these rows.

/** Record lanes on the timeline, in display order. */
export const lanes = ['stdout', 'stderr', 'pty', 'stdin', 'tool', 'approval', 'lifecycle', 'diagnostic'] as const;
export type Lane = (typeof lanes)[number];

/**
 * One kept record: [id, journal, seq, lane, t, turn, text, firstPart, partCount, delivered].
 * id: its index in the reconstruction (every record, kept or not); journal:
 * ordinal of its journal (0 for a journal file; a rerun after a lost journal
 * starts a new one); lane: index into `lanes`; t: ms since the first record;
 * turn: index into `turns` or -1 (outside a turn); firstPart: index of its
 * first part in the whole translation; delivered: how often the source
 * delivered it (more than 1: redelivered).
 */
export type RecordRow = [number, number, number, number, number, number, string, number, number, number];

/** One kept part: [index, recordId, type, text]. */
export type PartRow = [number, number, string, string];

export type Usage = { readonly input: number | null; readonly output: number | null };

export type TurnSummary = {
  readonly turnId: string;
  readonly journal: number;
  readonly rerun: boolean;
  /** Reason of its turn-end, or null when the source ends inside the turn. */
  readonly end: string | null;
  readonly firstRecord: number;
  lastRecord: number;
  readonly firstSeq: number;
  lastSeq: number;
  readonly t0: number;
  t1: number;
  records: number;
  parts: number;
  findings: number;
  readonly byLane: number[];
  /** Usage of each finish-step part, in order; the finish part's total. */
  readonly steps: Usage[];
  total: Usage | null;
  /** Density over the turn's records: `buckets` columns, each `width` records, counts per lane (lane-major per column). */
  histogram: { width: number; counts: number[]; t: number[] };
};

/** A host tool call or approval and its answer. */
export type HostCallRow = {
  readonly kind: 'tool' | 'approval';
  readonly id: string;
  readonly name: string;
  readonly turn: number;
  /** Record ids of the call and of its answer (null: never answered). */
  readonly callRecord: number;
  answerRecord: number | null;
  readonly callSeq: number;
  answerSeq: number | null;
  readonly source: 'bridge' | 'cli';
  /** ms between the call's record and its answer's. */
  ms: number | null;
  /** What the answer said: ok / error for tools, approved / denied for approvals. */
  outcome: string | null;
  /** Who answered: the host over the bridge (tool-result / approval record), or the host on the CLI's stdin. */
  by: string | null;
};

/**
 * A place in the session worth a flag: a recording segment (a host channel:
 * first slice, suspend, continue), a rung of the recovery ladder, a channel
 * event (gap, disconnect), a diagnostic, a --check finding, a redelivered
 * (sent again), replayed (caught up after an attach) or recomputed range. `record`: the record it sits before (-1: before any).
 */
export type MarkRow = {
  readonly kind: 'segment' | 'rung' | 'event' | 'diagnostic' | 'finding' | 'redelivered' | 'replayed' | 'recomputed';
  readonly text: string;
  record: number;
  readonly journal: number;
  readonly seq: number;
  readonly rule?: string;
  /** Ranges: the last seq. */
  readonly toSeq?: number;
};

/** A run of records whose detail the page leaves out: ids first..last, counts per lane. */
export type ElidedRow = [number, number, number[]];

export type DiffRow = {
  readonly journal: number;
  readonly seq: number;
  readonly a: ReadonlyArray<string>;
  readonly b: ReadonlyArray<string>;
  readonly same: boolean;
};

export type DiffData = {
  readonly a: string;
  readonly b: string;
  readonly partsA: number;
  readonly partsB: number;
  /** Seqs (with parts on either side) compared, and those whose parts differ. */
  readonly seqs: number;
  readonly differing: number;
  /** Kept rows: every differing seq up to a bound, with same rows around them. */
  readonly rows: ReadonlyArray<DiffRow>;
  readonly elided: number;
};

export type ViewData = {
  readonly version: 1;
  readonly title: string;
  readonly source: { readonly path: string; readonly kind: 'journal' | 'recording'; readonly adapter: string; readonly segments: number; readonly journals: number };
  readonly counts: { readonly records: number; readonly parts: number; readonly deliveries: number; readonly turns: number; readonly hostCalls: number; readonly findings: number; readonly findingsDropped: number };
  /** What was kept in detail and why (the page shows it). */
  readonly bound: { readonly keepAllUpTo: number; readonly window: number; readonly maxKept: number; readonly kept: number; readonly keptParts: number };
  readonly lanes: ReadonlyArray<string>;
  readonly turns: ReadonlyArray<TurnSummary>;
  readonly turnsDropped: number;
  readonly records: ReadonlyArray<RecordRow>;
  readonly parts: ReadonlyArray<PartRow>;
  readonly elided: ReadonlyArray<ElidedRow>;
  readonly marks: ReadonlyArray<MarkRow>;
  readonly hostCalls: ReadonlyArray<HostCallRow>;
  readonly diff?: DiffData;
};
