// From a loaded source to records: every delivery as it happened (per
// recording segment, with its time and whether it was replay traffic), and
// the journal they reconstruct (each seq once, per journal, in order). The
// reconstruction is what translation runs on; deliveries are what the
// invariant checks and the timeline look at.
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { ReplaySource } from './source.ts';

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

export type Reconstruction = {
  /** Each journal's records once, journals in order of first appearance, seq ascending. */
  readonly records: ReadonlyArray<JournalRecord>;
  /** The same seq delivered twice with different content (across segments): the first one. */
  readonly conflict: { readonly seq: number; readonly journalId: string; readonly segment: number; readonly line: number } | undefined;
};

export const unknownJournal = '(unknown journal)';

/** Every records delivery in source order. */
export function deliveries(source: ReplaySource): Delivery[] {
  if (source.kind === 'journal') {
    return source.records.map(({ line, record }) => ({
      segment: 0,
      line,
      at: record.ts,
      replay: false,
      journalId: source.header.journalId,
      records: [record],
    }));
  }
  const out: Delivery[] = [];
  source.segments.forEach((segment, index) => {
    const journalId = segment.hello?.journalId ?? segment.header.journalId ?? unknownJournal;
    let replay = false;
    for (const entry of segment.entries) {
      if (entry.type !== 'in') continue;
      if (entry.frame.type === 'replay-begin') replay = true;
      else if (entry.frame.type === 'replay-end') replay = false;
      else if (entry.frame.type === 'records') {
        out.push({ segment: index, line: entry.line, at: entry.at, replay, journalId, records: entry.frame.records });
      }
    }
  });
  return out;
}

/** The journal(s) the deliveries add up to: each seq once. */
export function reconstruct(source: ReplaySource): Reconstruction {
  const journals = new Map<string, Map<number, { record: JournalRecord; text: string }>>();
  let conflict: Reconstruction['conflict'];
  for (const delivery of deliveries(source)) {
    let bySeq = journals.get(delivery.journalId);
    if (!bySeq) journals.set(delivery.journalId, (bySeq = new Map()));
    for (const record of delivery.records) {
      const text = JSON.stringify(record);
      const seen = bySeq.get(record.seq);
      if (!seen) bySeq.set(record.seq, { record, text });
      else if (seen.text !== text && conflict === undefined) {
        conflict = { seq: record.seq, journalId: delivery.journalId, segment: delivery.segment, line: delivery.line };
      }
    }
  }
  const records: JournalRecord[] = [];
  for (const bySeq of journals.values()) {
    records.push(...[...bySeq.values()].sort((a, b) => a.record.seq - b.record.seq).map((entry) => entry.record));
  }
  return { records, conflict };
}
