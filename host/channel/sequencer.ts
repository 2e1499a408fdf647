// Exactly-once, in-order delivery: decides which records of an incoming batch
// reach the consumer given the cursor. Owns only the cursor arithmetic; the
// channel owns sockets and decides what a gap costs (a re-attach).
import type { JournalRecord } from '../../protocol/v1/index.ts';

export type SequencedBatch = {
  /** Records with seq cursor+1, cursor+2, …: contiguous, none seen before. */
  deliver: JournalRecord[];
  /** Records at or below the cursor (already delivered), dropped. */
  duplicates: number;
  /** Set when a record skipped ahead: everything from it on was withheld. */
  gap?: { expected: number; got: number };
};

export class RecordSequencer {
  private current: number;

  constructor(cursor: number) {
    this.current = cursor;
  }

  /** Highest seq handed out by accept(). */
  get cursor(): number {
    return this.current;
  }

  /**
   * Split a batch into the contiguous run after the cursor and the rest, and
   * advance the cursor over the run. The batch is normally already contiguous
   * and past the cursor, so the common case returns it without copying.
   */
  accept(records: readonly JournalRecord[]): SequencedBatch {
    let start = 0;
    while (start < records.length && (records[start] as JournalRecord).seq <= this.current) start++;
    let end = start;
    let expected = this.current + 1;
    while (end < records.length && (records[end] as JournalRecord).seq === expected) {
      end++;
      expected++;
    }
    // Anything after the run: either a skip ahead (gap) or a stale/out-of-order
    // seq; both mean this stream can no longer be trusted from here on.
    const gap = end < records.length ? { expected, got: (records[end] as JournalRecord).seq } : undefined;
    const deliver = start === 0 && end === records.length ? (records as JournalRecord[]) : records.slice(start, end);
    this.current = expected - 1;
    return gap === undefined ? { deliver, duplicates: start } : { deliver, duplicates: start, gap };
  }
}
