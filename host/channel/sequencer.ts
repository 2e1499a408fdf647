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
   * Pick the records of a batch that extend the cursor contiguously and
   * advance the cursor over them. Records at or below the cursor are dropped
   * as duplicates wherever they appear; a record beyond cursor+1 is a gap and
   * withholds the rest of the batch. The normal batch (cursor+1 … cursor+n)
   * is returned without copying.
   */
  accept(records: readonly JournalRecord[]): SequencedBatch {
    const first = records[0];
    const last = records[records.length - 1];
    if (first && last && first.seq === this.current + 1 && last.seq === this.current + records.length && isContiguous(records)) {
      this.current = last.seq;
      return { deliver: records as JournalRecord[], duplicates: 0 };
    }
    const deliver: JournalRecord[] = [];
    let duplicates = 0;
    for (const record of records) {
      if (record.seq <= this.current) {
        duplicates++;
      } else if (record.seq === this.current + 1) {
        deliver.push(record);
        this.current = record.seq;
      } else {
        return { deliver, duplicates, gap: { expected: this.current + 1, got: record.seq } };
      }
    }
    return { deliver, duplicates };
  }
}

function isContiguous(records: readonly JournalRecord[]): boolean {
  for (let i = 1; i < records.length; i++) {
    if ((records[i] as JournalRecord).seq !== (records[i - 1] as JournalRecord).seq + 1) return false;
  }
  return true;
}
