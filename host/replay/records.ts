// From a source to records: every delivery as it happened (per recording
// segment, with its time and whether it was replay traffic), and the journal
// they reconstruct (each seq once, per journal, in order). The reconstruction
// is what translation runs on; deliveries are what the invariant checks and
// the timeline look at. Both stream: a journal's records are passed through
// as they are read; a recording's are put in seq order with what its index
// pass learned (which seqs exist, which come more than once), so only records
// that arrive out of order are held, and only repeated seqs are remembered
// (as a hash of their first copy, to catch a conflicting repeat).
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import { unknownJournal } from './recording-file.ts';
import { SeqSet } from './seq-set.ts';
import type { Epoch, JournalSeqs, RecordingIndex, RecordingInput, ReplayInput } from './source-types.ts';

export { unknownJournal } from './recording-file.ts';

export type Delivery = {
  /** Segment index (recordings) or 0 (journals). */
  readonly segment: number;
  /** Line in its file. */
  readonly line: number;
  /** Epoch ms it was received (recordings) or journaled (journals). */
  readonly at: number;
  /** Inside a replay-begin … replay-end bracket. */
  readonly replay: boolean;
  readonly journalId: string;
  readonly records: ReadonlyArray<JournalRecord>;
};

export type Conflict = { readonly seq: number; readonly journalId: string; readonly segment: number; readonly line: number };

export type Reconstruction = {
  /** Each journal's records once, journals in order of first appearance, seq ascending. */
  readonly records: ReadonlyArray<JournalRecord>;
  /** The same seq delivered twice with different content (across segments): the first one. */
  readonly conflict: Conflict | undefined;
};

/** Every records delivery in source order. */
export function* deliveries(source: ReplayInput): Generator<Delivery, void, undefined> {
  if (source.kind === 'journal') {
    const journalId = source.header.journalId;
    for (const { line, record } of source.records) yield { segment: 0, line, at: record.ts, replay: false, journalId, records: [record] };
    return;
  }
  for (let index = 0; index < source.segments.length; index++) yield* segmentDeliveries(source, index);
}

function* segmentDeliveries(source: RecordingInput, index: number): Generator<Delivery, void, undefined> {
  const segment = source.segments[index]!;
  const journalId = segment.hello?.journalId ?? segment.header.journalId ?? unknownJournal;
  let replay = false;
  for (const entry of segment.entries) {
    if (entry.type !== 'in') continue;
    if (entry.frame.type === 'replay-begin') replay = true;
    else if (entry.frame.type === 'replay-end') replay = false;
    else if (entry.frame.type === 'records') yield { segment: index, line: entry.line, at: entry.at, replay, journalId, records: entry.frame.records };
  }
}

/** A recording's index: from its open (one pass made it) or, for one built in memory, from a pass over its segments. */
export function recordingIndex(source: RecordingInput): RecordingIndex {
  if (source.index) return source.index;
  const sets = new Map<string, JournalSeqs>();
  for (const delivery of deliveries(source)) {
    let entry = sets.get(delivery.journalId);
    if (!entry) sets.set(delivery.journalId, (entry = { journalId: delivery.journalId, present: new SeqSet(), repeated: new SeqSet() }));
    for (const record of delivery.records) if (!entry.present.add(record.seq)) entry.repeated.add(record.seq);
  }
  const epochs: Epoch[] = [];
  source.segments.forEach((segment, index) => {
    const journalId = segment.hello?.journalId ?? segment.header.journalId ?? '';
    for (const entry of segment.entries) {
      if (entry.type === 'in' && entry.frame.type === 'replay-begin') epochs.push({ segment: index, at: entry.at, to: entry.frame.to, journalId });
    }
  });
  return { journals: [...sets.values()], epochs };
}

/**
 * The reconstructed journal(s) as a stream: `records()` yields each journal's
 * records once, in seq order, reading the source again on each call; once an
 * iteration has finished, `conflict` holds its first conflicting repeat.
 *
 * A journal file is passed through in file order (the bridge writes seqs in
 * order): a line whose seq is not above every seq before it is a repeat or out
 * of order — the seq rule of `checkInvariants` reports it — and is left out.
 */
export class RecordStream {
  readonly source: ReplayInput;
  conflict: Conflict | undefined;
  constructor(source: ReplayInput) {
    this.source = source;
  }

  *records(): Generator<JournalRecord, void, undefined> {
    this.conflict = undefined;
    const source = this.source;
    if (source.kind === 'journal') {
      let last = 0;
      for (const { record } of source.records) {
        if (record.seq <= last) continue;
        last = record.seq;
        yield record;
      }
      return;
    }
    for (const journal of recordingIndex(source).journals) yield* this.#journal(source, journal);
  }

  *#journal(source: RecordingInput, { journalId, present, repeated }: JournalSeqs): Generator<JournalRecord, void, undefined> {
    let next = present.next(0);
    /** First copies that arrived before a smaller seq still to come. */
    const held = new Map<number, JournalRecord>();
    /** Repeated seqs: a hash of the first copy. */
    const firstCopies = new Map<number, string>();
    for (let index = 0; index < source.segments.length; index++) {
      const segment = source.segments[index]!;
      if ((segment.hello?.journalId ?? segment.header.journalId ?? unknownJournal) !== journalId) continue;
      for (const delivery of segmentDeliveries(source, index)) {
        for (const record of delivery.records) {
          const seq = record.seq;
          if (repeated.has(seq)) {
            const hash = contentHash(JSON.stringify(record));
            const first = firstCopies.get(seq);
            if (first !== undefined) {
              if (first !== hash) this.#noteConflict({ seq, journalId, segment: delivery.segment, line: delivery.line });
              continue;
            }
            firstCopies.set(seq, hash);
          }
          if (seq !== next) {
            held.set(seq, record);
            continue;
          }
          yield record;
          next = present.next(seq + 1);
          while (next !== undefined && held.has(next)) {
            const record = held.get(next)!;
            held.delete(next);
            yield record;
            next = present.next(next + 1);
          }
        }
      }
    }
    // Every present seq was delivered, so nothing is left held; a source that changed while read could leave some.
    yield* [...held.values()].sort((a, b) => a.seq - b.seq);
  }

  #noteConflict(conflict: Conflict): void {
    const current = this.conflict;
    if (current === undefined || conflict.segment < current.segment || (conflict.segment === current.segment && conflict.line < current.line)) this.conflict = conflict;
  }
}

/** The journal(s) the deliveries add up to: each seq once (materialized: small sources, tests). */
export function reconstruct(source: ReplayInput): Reconstruction {
  const stream = new RecordStream(source);
  const records = [...stream.records()];
  return { records, conflict: stream.conflict };
}

/** Two 32-bit FNV-1a variants over the UTF-16 units, plus the length: equal content, equal hash; different, almost surely not. */
function contentHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return `${text.length}:${(a >>> 0).toString(36)}:${(b >>> 0).toString(36)}`;
}
