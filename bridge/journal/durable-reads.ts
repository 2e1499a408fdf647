// Reading durable records back out of the journal: batches of JSON (read, for replay scans) and
// byte copies into frame buffers (cursor, for the record stream), from the memory window while it
// holds them, else from disk through the sparse seq → offset index. Appending and writing are journal.ts's.
import { JOURNAL_LIMITS } from '../limits.ts';
import { JournalReader } from './journal-reader.ts';
import type { RecordWindow } from './record-window.ts';

/** Where a copy of records into a frame buffer stopped: the next seq to copy and the offset after the last byte. */
export type CopyResult = { next: number; offset: number };

/** Sequential copies of durable records into frame buffers, from the window or disk; close() when done. */
export type RecordCursor = {
  /**
   * Copies the JSON of records from..to (each followed by a comma) into
   * target[offset, limit), stopping before the first record that does not fit
   * and at durableSeq. `from` must be ≤ durableSeq.
   */
  copy(from: number, to: number, target: Buffer, offset: number, limit: number): Promise<CopyResult>;
  /** Bytes of record `seq` as copy() would write it (JSON plus comma). */
  recordBytes(seq: number): Promise<number>;
  close(): Promise<void>;
};

/** The journal as the reads see it: its file, memory window and sparse index, and how far it is written. */
export type DurableView = {
  readonly path: string;
  readonly window: RecordWindow;
  /** index[k] = file offset of the line of seq k*indexEveryRecords + 1. */
  readonly index: readonly number[];
  /** Highest seq whose write has returned. */
  writtenSeq(): number;
  /** File offset just past the last written line. */
  writtenBytes(): number;
};

/**
 * Records fromSeq..toSeq as batches of serialized JSON, in order, none above
 * the durableSeq at the call. From the memory window when it still holds
 * them, otherwise streamed from disk; a batch may hold fewer than
 * maxBatchRecords (JOURNAL_LIMITS.maxReadBatchBytes caps its size).
 */
export async function* readDurable(view: DurableView, fromSeq: number, toSeq: number, maxBatchRecords: number): AsyncIterable<string[]> {
  if (!Number.isInteger(maxBatchRecords) || maxBatchRecords < 1) {
    throw new RangeError(`maxBatchRecords must be an integer ≥ 1, got ${maxBatchRecords}`);
  }
  const last = Math.min(toSeq, view.writtenSeq());
  const limits = { maxRecords: maxBatchRecords, maxBytes: JOURNAL_LIMITS.maxReadBatchBytes };
  let seq = Math.max(fromSeq, 1);
  let reader: JournalReader | null = null;
  try {
    while (seq <= last) {
      let batch: string[];
      if (view.window.has(seq)) {
        batch = view.window.slice(seq, last, limits.maxRecords, limits.maxBytes);
      } else {
        reader ??= new JournalReader(view.path, JOURNAL_LIMITS.maxReadChunkBytes);
        if (reader.nextSeq !== seq) {
          const k = Math.floor((seq - 1) / JOURNAL_LIMITS.indexEveryRecords);
          await reader.seek(seq, k * JOURNAL_LIMITS.indexEveryRecords + 1, view.index[k]!, view.writtenBytes());
        }
        batch = await reader.readBatch(last, limits, view.writtenBytes());
      }
      seq += batch.length;
      yield batch;
    }
  } finally {
    await reader?.close();
  }
}

/**
 * A cursor for copying durable records into frame buffers (server/record-stream.ts):
 * from the window while it holds them, else from disk via the sparse index,
 * with one reader kept open across calls for sequential reads.
 */
export function durableCursor(view: DurableView): RecordCursor {
  let reader: JournalReader | null = null;
  const seekTo = async (seq: number): Promise<JournalReader> => {
    reader ??= new JournalReader(view.path, JOURNAL_LIMITS.maxReplayChunkBytes);
    if (reader.nextSeq !== seq) {
      const k = Math.floor((seq - 1) / JOURNAL_LIMITS.indexEveryRecords);
      await reader.seek(seq, k * JOURNAL_LIMITS.indexEveryRecords + 1, view.index[k]!, view.writtenBytes());
    }
    return reader;
  };
  return {
    copy: async (from, to, target, offset, limit) => {
      const last = Math.min(to, view.writtenSeq());
      if (from > last) return { next: from, offset };
      if (view.window.has(from)) return view.window.copyRecords(from, last, target, offset, limit);
      const r = await seekTo(from);
      return r.copyRecords(last, target, offset, limit, view.writtenBytes());
    },
    recordBytes: async (seq) => {
      if (view.window.has(seq)) return view.window.jsonBytes(seq, seq);
      return (await seekTo(seq)).nextRecordBytes(view.writtenBytes());
    },
    close: async () => {
      await reader?.close();
      reader = null;
    },
  };
}
