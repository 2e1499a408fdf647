// journal.ts owns seq, the journal file (state dir/journal.ndjson), the memory
// window and replay reads (DESIGN D2). It leaves sockets to server.ts and the
// child to supervisor.ts; both meet it through append/onDurable/read.
//
// Write before send: append() only queues; a record is handed to onDurable
// (and so may reach a socket) after the write(2) carrying it has returned.
// What a crash can lose:
// - Process crash (SIGKILL, OOM, exit 70) under any policy: only records whose
//   write had not returned — at most the current tick's queue and the one
//   write in flight. None was passed to onDurable, so no host has seen them and
//   the next bridge reuses their seqs safely. Written bytes live in the page
//   cache and survive the process.
// - Power loss / kernel crash: whatever had not been fsynced:
//   'always'   — nothing onDurable reported (fdatasync before onDurable).
//   'turn-end' (default) — records after the last fsync, which runs after the
//              write holding a turn-end record (before its onDurable), on
//              sync() and on close(). Hosts may have seen those records, so
//              after a power loss a host can be ahead of the journal.
//   'never'    — everything since the last explicit sync(); close() skips fsync.
// - A torn or corrupt line (bad crc, missing newline, seq not previous+1) and
//   everything after it are truncated at the next open and counted in
//   `recovered`. A corrupt header makes the whole file unusable: it is replaced
//   by a fresh journal with a new journalId, which hosts read as "journal lost".
import { close, fdatasync, write } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RecordDraft } from '../protocol/v1/record.ts';
import { ensurePrivateDir, openJournalFile, type OpenedFile } from './journal-file.ts';
import { encodeLineInto, linePrefixBytes, maxLineBytes, serializeRecord } from './journal-format.ts';
import { JournalReader } from './journal-reader.ts';
import { RecordWindow } from './journal-window.ts';
import { JOURNAL_LIMITS } from './limits.ts';

export type AppendedBatch = {
  firstSeq: number;
  lastSeq: number;
  /** Serialized records (JSON, no checksum), one per record, in seq order. */
  lines: string[];
};

export type FsyncPolicy = 'turn-end' | 'always' | 'never';

export type JournalOptions = {
  stateDir: string;
  maxWindowRecords?: number;
  fsyncPolicy?: FsyncPolicy;
  /** Called once per completed write, in seq order, after the bytes are in the file. */
  onDurable: (batch: AppendedBatch) => void;
  /** A failed write or fsync; the journal accepts no more appends. Default: log to stderr and exit 70. */
  onFatal?: (error: Error) => void;
};

export const journalFileName = 'journal.ndjson';

const closeAsync = promisify(close);
const fdatasyncAsync = promisify(fdatasync);
const writeAsync = promisify(write);

/**
 * Records queued for one write. `approxBytes` counts UTF-16 units + framing
 * (exact for ASCII); the exact UTF-8 size is known once encoded.
 */
type WriteChunk = { firstSeq: number; lines: string[]; approxBytes: number; sync: boolean };

/** Bytes a line costs besides its JSON: 8 hex digits, a tab, a newline. */
const framingBytes = linePrefixBytes + 1;

type Waiter = { seq: number; resolve: () => void; reject: (error: Error) => void };

export class Journal {
  readonly journalId: string;
  readonly recovered: { droppedBytes: number; droppedRecords: number };

  private readonly path: string;
  private readonly fd: number;
  private readonly fsyncPolicy: FsyncPolicy;
  private readonly onDurable: (batch: AppendedBatch) => void;
  private readonly onFatal: (error: Error) => void;
  private readonly window: RecordWindow;
  /** index[k] = file offset of the line of seq k*indexEveryRecords + 1. */
  private readonly index: number[];
  private writeBuffer = Buffer.allocUnsafe(JOURNAL_LIMITS.maxWriteBatchBytes);

  private assignedSeq: number;
  private writtenSeq: number;
  /** File offset just past the last written line. */
  private writtenBytes: number;
  private queuedBytes = 0;
  private readonly chunks: WriteChunk[] = [];
  private writing = false;
  private scheduled = false;
  private closed = false;
  private failure: Error | null = null;
  private waiters: Waiter[] = [];

  private constructor(options: JournalOptions, file: OpenedFile, recovered: Journal['recovered'], maxWindowRecords: number) {
    this.path = join(options.stateDir, journalFileName);
    this.fd = file.fd;
    this.journalId = file.journalId;
    this.recovered = recovered;
    this.fsyncPolicy = options.fsyncPolicy ?? 'turn-end';
    this.onDurable = options.onDurable;
    this.onFatal = options.onFatal ?? exitOnFatal;
    this.window = new RecordWindow(maxWindowRecords, JOURNAL_LIMITS.maxWindowBytes, file.lastSeq);
    this.index = file.index;
    this.assignedSeq = file.lastSeq;
    this.writtenSeq = file.lastSeq;
    this.writtenBytes = file.fileBytes;
  }

  /** Opens (recovering a torn tail) or creates `<stateDir>/journal.ndjson`. */
  static async open(options: JournalOptions): Promise<Journal> {
    const maxWindowRecords = options.maxWindowRecords ?? JOURNAL_LIMITS.maxWindowRecords;
    if (!Number.isInteger(maxWindowRecords) || maxWindowRecords < 1) {
      throw new RangeError(`maxWindowRecords must be an integer ≥ 1, got ${maxWindowRecords}`);
    }
    const policy = options.fsyncPolicy ?? 'turn-end';
    if (policy !== 'turn-end' && policy !== 'always' && policy !== 'never') {
      throw new RangeError(`fsyncPolicy must be turn-end, always or never, got ${String(policy)}`);
    }
    await ensurePrivateDir(options.stateDir);
    const { file, recovered } = await openJournalFile(join(options.stateDir, journalFileName));
    return new Journal(options, file, recovered, maxWindowRecords);
  }

  /** 0 when the journal holds no record (records are never removed from the front). */
  get firstSeq(): number {
    return this.assignedSeq > 0 ? 1 : 0;
  }

  /** Highest seq assigned (may not be written yet). */
  get lastSeq(): number {
    return this.assignedSeq;
  }

  /** Highest seq whose write has returned. */
  get durableSeq(): number {
    return this.writtenSeq;
  }

  /**
   * Bytes queued or in flight, not yet written: the supervisor's backpressure
   * signal. Counted as UTF-16 units + framing, so exact for ASCII and an
   * undercount (≤ 3×) for other text.
   */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  /** Assigns seq and ts, serializes once, queues. Synchronous, no I/O; throws only on misuse. */
  append(draft: RecordDraft): number {
    if (this.closed || this.failure) throw new Error(this.failure ? `journal failed: ${this.failure.message}` : 'journal is closed');
    const seq = this.assignedSeq + 1;
    const json = serializeRecord(seq, Date.now(), draft);
    if (json.length > JOURNAL_LIMITS.maxRecordChars) {
      throw new RangeError(`record of ${json.length} chars exceeds maxRecordChars (${JOURNAL_LIMITS.maxRecordChars})`);
    }
    this.assignedSeq = seq;
    const lineBytes = json.length + framingBytes;
    let chunk = this.chunks[this.chunks.length - 1];
    if (chunk === undefined || chunk.approxBytes + lineBytes > JOURNAL_LIMITS.maxWriteBatchBytes) {
      chunk = { firstSeq: seq, lines: [], approxBytes: 0, sync: this.fsyncPolicy === 'always' };
      this.chunks.push(chunk);
    }
    chunk.lines.push(json);
    chunk.approxBytes += lineBytes;
    if (draft.kind === 'turn-end' && this.fsyncPolicy === 'turn-end') chunk.sync = true;
    this.queuedBytes += lineBytes;
    this.window.push(json);

    if (!this.writing && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushTick);
    }
    return seq;
  }

  /** Resolves once everything appended before the call is written and reported to onDurable. */
  flush(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const target = this.assignedSeq;
    if (this.writtenSeq >= target) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ seq: target, resolve, reject });
      this.writeNext();
    });
  }

  /** flush, then fdatasync: everything appended so far survives a power loss. */
  async sync(): Promise<void> {
    await this.flush();
    if (!this.closed) await fdatasyncAsync(this.fd);
  }

  /** flush + fdatasync (skipped under 'never') + close the fd. Appending afterwards throws. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true; // appends from here on throw; the flush below covers everything before
    await this.flush();
    if (this.fsyncPolicy !== 'never') await fdatasyncAsync(this.fd);
    await closeAsync(this.fd);
  }

  /**
   * Records fromSeq..toSeq as batches of serialized JSON, in order, none above
   * the durableSeq at the call. From the memory window when it still holds
   * them, otherwise streamed from disk; a batch may hold fewer than
   * maxBatchRecords (JOURNAL_LIMITS.maxReadBatchBytes caps its size).
   */
  async *read(fromSeq: number, toSeq: number, maxBatchRecords: number): AsyncIterable<string[]> {
    if (!Number.isInteger(maxBatchRecords) || maxBatchRecords < 1) {
      throw new RangeError(`maxBatchRecords must be an integer ≥ 1, got ${maxBatchRecords}`);
    }
    const last = Math.min(toSeq, this.writtenSeq);
    const limits = { maxRecords: maxBatchRecords, maxBytes: JOURNAL_LIMITS.maxReadBatchBytes };
    let seq = Math.max(fromSeq, 1);
    let reader: JournalReader | null = null;
    try {
      while (seq <= last) {
        let batch: string[];
        if (this.window.has(seq)) {
          batch = this.window.slice(seq, last, limits.maxRecords, limits.maxBytes);
        } else {
          reader ??= new JournalReader(this.path, JOURNAL_LIMITS.maxReadChunkBytes);
          if (reader.nextSeq !== seq) {
            const k = Math.floor((seq - 1) / JOURNAL_LIMITS.indexEveryRecords);
            await reader.seek(seq, k * JOURNAL_LIMITS.indexEveryRecords + 1, this.index[k]!, this.writtenBytes);
          }
          batch = await reader.readBatch(last, limits, this.writtenBytes);
        }
        seq += batch.length;
        yield batch;
      }
    } finally {
      await reader?.close();
    }
  }

  private readonly flushTick = (): void => {
    this.scheduled = false;
    this.writeNext();
  };

  /** Writes the oldest queued chunk unless a write is in flight (its completion calls this again). */
  private writeNext(): void {
    if (this.writing || this.failure) return;
    const chunk = this.chunks.shift();
    if (chunk === undefined) return;
    this.writing = true;
    const length = this.encode(chunk);
    this.writeChunk(chunk, length).then(
      () => this.completed(chunk, length),
      (error: unknown) => this.fail(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /**
   * Frames the chunk's lines into the write buffer (crc and UTF-8 in one pass)
   * and indexes the lines that fall on an index point. Returns the byte length.
   */
  private encode(chunk: WriteChunk): number {
    const every = JOURNAL_LIMITS.indexEveryRecords;
    const { lines, firstSeq } = chunk;
    let target = this.writeBuffer;
    let offset = 0;
    for (let i = 0; i < lines.length; i++) {
      const json = lines[i]!;
      const need = maxLineBytes(json);
      if (offset + need > target.length) {
        // Non-ASCII text or one huge record: grow for this batch only (reset after the write).
        const bigger = Buffer.allocUnsafe(Math.max(target.length * 2, offset + need));
        target.copy(bigger, 0, 0, offset);
        target = bigger;
        this.writeBuffer = bigger;
      }
      if ((firstSeq + i - 1) % every === 0) this.index.push(this.writtenBytes + offset);
      offset = encodeLineInto(target, offset, json);
    }
    return offset;
  }

  private async writeChunk(chunk: WriteChunk, length: number): Promise<void> {
    const bytes = this.writeBuffer;
    let done = 0;
    while (done < length) {
      const { bytesWritten } = await writeAsync(this.fd, bytes, done, length - done, this.writtenBytes + done);
      done += bytesWritten;
    }
    if (chunk.sync) await fdatasyncAsync(this.fd);
  }

  private completed(chunk: WriteChunk, length: number): void {
    this.writing = false;
    if (this.writeBuffer.length > JOURNAL_LIMITS.maxWriteBatchBytes * 2) {
      this.writeBuffer = Buffer.allocUnsafe(JOURNAL_LIMITS.maxWriteBatchBytes);
    }
    const lastSeq = chunk.firstSeq + chunk.lines.length - 1;
    this.writtenSeq = lastSeq;
    this.writtenBytes += length;
    this.queuedBytes -= chunk.approxBytes;
    // Everything queued while this write was in flight goes out now, as one write.
    this.writeNext();
    if (this.waiters.length > 0) this.releaseWaiters();
    this.onDurable({ firstSeq: chunk.firstSeq, lastSeq, lines: chunk.lines });
  }

  private releaseWaiters(): void {
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.seq <= this.writtenSeq) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  private fail(error: Error): void {
    this.writing = false;
    this.failure = error;
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters = [];
    this.onFatal(error);
  }
}

function exitOnFatal(error: Error): void {
  process.stderr.write(`journal write failed, exiting: ${error.message}\n`);
  process.exit(70);
}
