// journal.ts owns seq, the journal file (state dir/journal.ndjson) and its writes, and the
// memory window (docs/design.md#d2); reading durable records back is durable-reads.ts's. It leaves
// sockets to server.ts and the child to supervisor.ts; both meet it through append/onDurable/read.
//
// Write before send: append() only queues; a record is handed to onDurable
// (and so may reach a socket) after the write(2) carrying it has returned.
// What a crash can lose:
// - Process crash (SIGKILL, OOM, exit 70) under any policy: only records whose
//   write had not returned — at most the current tick's appends (the write is
//   a synchronous write(2) at the end of the tick, or in flush()), plus those
//   waiting behind an fdatasync in flight. None was passed to onDurable, so no
//   host has seen them and the next bridge reuses their seqs safely. Written
//   bytes live in the page cache and survive the process.
// - Power loss / kernel crash: whatever had not been fsynced:
//   'always'   — nothing onDurable reported (fdatasync before onDurable).
//   'turn-end' (default) — records after the last fsync, which runs after the
//              write holding a turn-end record (before its onDurable), on
//              sync() and on close(). Hosts may have seen those records, so
//              after a power loss a host can be ahead of the journal.
//   'never'    — everything since the last explicit sync(); close() skips fsync.
// - Disk full (ENOSPC, EDQUOT on a write): not a crash. The unwritten records stay in the window
//   (never reported to onDurable, so never sent or acked), onStall reports the error, and the write
//   is retried every diskFullRetryMs from exactly where it stopped; the first one that succeeds
//   reports onStall(null) and everything goes out in seq order. Past diskFullExitMs the stall
//   becomes a failure (onFatal). A torn line a partial write left on disk is completed by the
//   retry, or truncated at the next open like any torn tail.
// - A torn or corrupt line (bad crc, missing newline, seq not previous+1) and
//   everything after it are truncated at the next open and counted in
//   `recovered`. A corrupt header makes the whole file unusable: it is replaced
//   by a fresh journal with a new journalId, which hosts read as "journal lost".
import { close, fdatasync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';
import { ensurePrivateDir, openJournalFile, rewriteJournalId, syncDir, type OpenedFile } from './journal-file.ts';
import { isTextRecord, serializeRecord, textRecordChars } from '../../protocol/journal/line-format.ts';
import { durableCursor, readDurable, type CopyResult, type DurableView, type RecordCursor } from './durable-reads.ts';
import { RecordWindow } from './record-window.ts';
import { JOURNAL_LIMITS } from '../limits.ts';

export type AppendedBatch = {
  firstSeq: number;
  lastSeq: number;
  /**
   * Serialized records (JSON, no checksum), one per record, in seq order —
   * only when the journal was opened with `keepBatchLines` (tests, tools);
   * otherwise empty: the live path copies bytes with copyFromWindow, and
   * holding every string until its write would carry them through scavenges
   * (and grow V8's young generation with the journal).
   */
  lines: string[];
};

export type FsyncPolicy = 'turn-end' | 'always' | 'never';

export type JournalOptions = {
  stateDir: string;
  maxWindowRecords?: number;
  fsyncPolicy?: FsyncPolicy;
  /** Called once per completed write, in seq order, after the bytes are in the file. */
  onDurable: (batch: AppendedBatch) => void;
  /** A failed write (other than a full disk: onStall) or fsync; the journal accepts no more appends. Default: log to stderr and exit 70. */
  onFatal?: (error: Error) => void;
  /** Fill AppendedBatch.lines (default false). */
  keepBatchLines?: boolean;
  /**
   * A write failed because the disk is full (the error; writes are retried every
   * JOURNAL_LIMITS.diskFullRetryMs) or succeeded again after that (null). Default: nothing.
   */
  onStall?: (error: Error | null) => void;
  /** A disk-full stall longer than this fails the journal (onFatal). Default JOURNAL_LIMITS.diskFullExitMs. */
  diskFullExitMs?: number;
};

/** Write errors that mean "no space now" (full disk, quota): retried, not fatal. */
export function isDiskFull(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

const noLines: string[] = [];

export const journalFileName = 'journal.ndjson';

const closeAsync = promisify(close);

type Waiter = { seq: number; resolve: () => void; reject: (error: Error) => void };

export class Journal {
  /** The file header's id; a new one after newEpoch(). */
  journalId: string;
  readonly recovered: { droppedBytes: number; droppedRecords: number };

  private readonly path: string;
  private readonly fd: number;
  private readonly fsyncPolicy: FsyncPolicy;
  private readonly onDurable: (batch: AppendedBatch) => void;
  private readonly onFatal: (error: Error) => void;
  private readonly onStall: (error: Error | null) => void;
  private readonly diskFullExitMs: number;
  private readonly keepLines: boolean;
  private readonly window: RecordWindow;
  /** index[k] = file offset of the line of seq k*indexEveryRecords + 1. */
  private readonly index: number[];

  private assignedSeq: number;
  private writtenSeq: number;
  /** File offset just past the last written line. */
  private writtenBytes: number;
  /** Bytes encoded into the window but not yet written. */
  private queuedBytes = 0;
  /** File offset of the first line not yet written (the index is filled from appends). */
  private encodedBytes: number;
  /** JSON of the records not yet reported to onDurable, in seq order. */
  private pendingLines: string[] = [];
  /** Highest appended seq whose write must be fdatasync'ed before onDurable. */
  private syncSeq = 0;
  /** An fdatasync is in flight; writes and onDurable wait for it. */
  private syncing = false;
  /** The file was created by open() without fsyncs (before the ready line): the first fdatasync also syncs the state dir. */
  private createdUnsynced: boolean;
  /** writeNext is on the stack (onDurable may flush() again). */
  private draining = false;
  private scheduled = false;
  private closed = false;
  private failure: Error | null = null;
  /** The disk-full error writes are stalled on (retried by stallTimer), and since when. */
  private stall: Error | null = null;
  private stallSince = 0;
  private stallTimer: NodeJS.Timeout | null = null;
  /** Bytes a stalled write put in the file past writtenBytes (part of the batch it could not finish). */
  private partialBytes = 0;
  private waiters: Waiter[] = [];
  /** What durable-reads.ts reads through: the file, the window, the index, and how far they are written. */
  private readonly durable: DurableView;

  private constructor(options: JournalOptions, file: OpenedFile, recovered: Journal['recovered'], maxWindowRecords: number) {
    this.path = join(options.stateDir, journalFileName);
    this.fd = file.fd;
    this.journalId = file.journalId;
    this.recovered = recovered;
    this.fsyncPolicy = options.fsyncPolicy ?? 'turn-end';
    this.onDurable = options.onDurable;
    this.onFatal = options.onFatal ?? exitOnFatal;
    this.onStall = options.onStall ?? (() => undefined);
    this.diskFullExitMs = options.diskFullExitMs ?? JOURNAL_LIMITS.diskFullExitMs;
    this.keepLines = options.keepBatchLines === true;
    this.window = new RecordWindow(maxWindowRecords, JOURNAL_LIMITS.maxWindowBytes, file.lastSeq, JOURNAL_LIMITS.windowBlockBytes, JOURNAL_LIMITS.windowSpareBytes);
    this.index = file.index;
    this.assignedSeq = file.lastSeq;
    this.writtenSeq = file.lastSeq;
    this.writtenBytes = file.fileBytes;
    this.encodedBytes = file.fileBytes;
    this.createdUnsynced = file.created;
    this.durable = {
      path: this.path,
      window: this.window,
      index: this.index,
      writtenSeq: () => this.writtenSeq,
      writtenBytes: () => this.writtenBytes,
    };
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
    if (options.diskFullExitMs !== undefined && (!Number.isSafeInteger(options.diskFullExitMs) || options.diskFullExitMs < 1)) {
      throw new RangeError(`diskFullExitMs must be a positive integer, got ${options.diskFullExitMs}`);
    }
    ensurePrivateDir(options.stateDir);
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
   * Bytes appended but not yet written (UTF-8, framing included): the
   * supervisor's backpressure signal. Returns to 0 once everything is written.
   */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  /**
   * Assigns seq and ts, serializes once and frames the line into the memory
   * window (the bytes the disk write, live frames and replay all copy from).
   * Synchronous, no I/O; throws only on misuse.
   */
  append(draft: RecordDraft): number {
    if (this.closed || this.failure) throw new Error(this.failure ? `journal failed: ${this.failure.message}` : 'journal is closed');
    const seq = this.assignedSeq + 1;
    const ts = Date.now();
    // A CLI's output (nearly every record) is framed by hand around its text's JSON; the rest as one JSON.stringify.
    const text = isTextRecord(draft);
    const json = text ? JSON.stringify(draft.data.text) : serializeRecord(seq, ts, draft);
    const chars = text ? textRecordChars(seq, ts, draft, json) : json.length;
    if (chars > JOURNAL_LIMITS.maxRecordChars) {
      throw new RangeError(`record of ${chars} chars exceeds maxRecordChars (${JOURNAL_LIMITS.maxRecordChars})`);
    }
    this.assignedSeq = seq;
    if ((seq - 1) % JOURNAL_LIMITS.indexEveryRecords === 0) this.index.push(this.encodedBytes);
    const bytes = text ? this.window.pushText(seq, ts, draft, json, chars) : this.window.push(json);
    this.encodedBytes += bytes;
    this.queuedBytes += bytes;
    if (this.keepLines) this.pendingLines.push(text ? serializeRecord(seq, ts, draft) : json);
    if (this.fsyncPolicy === 'always' || (draft.kind === 'turn-end' && this.fsyncPolicy === 'turn-end')) this.syncSeq = seq;

    if (!this.scheduled) {
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

  /**
   * A host saw more of this journal than it holds (restored from an earlier snapshot): a new journal
   * id before the host causes any new record (journal-file.ts rewriteJournalId). Written records first,
   * so every one of them is in the file the new header names.
   */
  async newEpoch(): Promise<string> {
    await this.flush();
    if (this.closed) throw new Error('the journal is closed');
    this.journalId = await rewriteJournalId(this.fd);
    return this.journalId;
  }

  /** flush, then fdatasync: everything appended so far survives a power loss. */
  async sync(): Promise<void> {
    await this.flush();
    if (!this.closed) await this.datasync();
  }

  /** Bytes of the journal file once everything appended is written (header included): what the session cap counts. */
  get sizeBytes(): number {
    return this.encodedBytes;
  }

  /** The disk-full error writes are stalled on, or null. */
  get diskFull(): Error | null {
    return this.stall;
  }

  /**
   * flush + fdatasync (skipped under 'never') + close the fd. Appending afterwards throws.
   * While the disk is full: `discardUnwritten` (destroy: the file goes anyway) closes at once; otherwise
   * the stall fails the journal (onFatal, the rejection): records never written were never sent or acked.
   */
  async close(options: { discardUnwritten?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    this.closed = true; // appends from here on throw; the flush below covers everything before
    if (this.stall !== null) {
      if (this.stallTimer) clearTimeout(this.stallTimer);
      this.stallTimer = null;
      if (options.discardUnwritten === true) {
        this.failure = this.stall;
        for (const waiter of this.waiters) waiter.reject(this.stall);
        this.waiters = [];
        await closeAsync(this.fd);
        return;
      }
      this.fail(this.stall);
      throw this.stall;
    }
    await this.flush();
    if (this.fsyncPolicy !== 'never') await this.datasync();
    await closeAsync(this.fd);
  }

  /**
   * Records fromSeq..toSeq as batches of serialized JSON, in order, none above
   * the durableSeq at the call. From the memory window when it still holds
   * them, otherwise streamed from disk; a batch may hold fewer than
   * maxBatchRecords (JOURNAL_LIMITS.maxReadBatchBytes caps its size).
   */
  read(fromSeq: number, toSeq: number, maxBatchRecords: number): AsyncIterable<string[]> {
    return readDurable(this.durable, fromSeq, toSeq, maxBatchRecords);
  }

  /** A cursor for copying durable records into frame buffers (server/record-stream.ts); see durable-reads.ts. */
  cursor(): RecordCursor {
    return durableCursor(this.durable);
  }

  /**
   * Copies records from..to from the memory window only (synchronous: the
   * live path, right after onDurable); null when the window no longer holds `from`.
   */
  copyFromWindow(from: number, to: number, target: Buffer, offset: number, limit: number): CopyResult | null {
    if (!this.window.has(from) || from > this.writtenSeq) return null;
    return this.window.copyRecords(from, Math.min(to, this.writtenSeq), target, offset, limit);
  }

  /** Bytes records from..to take in a frame (JSON plus one comma each), or -1 when the window no longer holds them. */
  windowBytes(from: number, to: number): number {
    if (!this.window.has(from) || to > this.writtenSeq) return -1;
    return this.window.jsonBytes(from, to);
  }

  private readonly flushTick = (): void => {
    this.scheduled = false;
    this.writeNext();
  };

  /**
   * Writes everything appended so far with one synchronous write(2) per
   * window block (page cache: microseconds, and no thread-pool round trip
   * between a record and its socket), then reports it to onDurable at once —
   * after an fdatasync when a record in it asks for one (that one is async,
   * and whatever is appended meanwhile waits for it). Loops until nothing is
   * left: appends made inside onDurable go out in the same call.
   */
  private writeNext(retry = false): void {
    // While stalled on a full disk only the retry timer writes (an append per tick must not hammer it).
    if (this.draining || this.syncing || this.failure || (this.stall !== null && !retry)) return;
    this.draining = true;
    try {
      while (this.writtenSeq < this.assignedSeq && !this.syncing && this.failure === null) {
        const firstSeq = this.writtenSeq + 1;
        const lastSeq = this.assignedSeq;
        const lines = this.keepLines ? this.pendingLines : noLines;
        if (this.keepLines) this.pendingLines = [];
        const written = this.window.writeTo(this.fd, this.writtenBytes + this.partialBytes);
        this.partialBytes += written.bytes;
        if (written.error !== null) {
          if (this.keepLines) this.pendingLines = lines; // not reported: they go with the batch that succeeds
          if (isDiskFull(written.error)) this.stalled(written.error);
          else this.fail(written.error);
          return;
        }
        const length = this.partialBytes;
        this.partialBytes = 0;
        if (this.stall !== null) {
          this.stall = null;
          this.onStall(null);
        }
        if (this.syncSeq >= firstSeq) {
          this.syncing = true;
          this.fdatasyncFile((error) => {
            this.syncing = false;
            if (error) return this.fail(error);
            this.completed(firstSeq, lastSeq, lines, length);
            this.writeNext();
          });
          return;
        }
        this.completed(firstSeq, lastSeq, lines, length);
      }
    } finally {
      this.draining = false;
    }
  }

  /** fdatasync, plus (once, for a file open() created) the state dir's entry and the header with it. */
  private fdatasyncFile(done: (error: Error | null) => void): void {
    fdatasync(this.fd, (error) => {
      if (error || !this.createdUnsynced) return done(error);
      syncDir(dirname(this.path), (dirError) => {
        if (!dirError) this.createdUnsynced = false;
        done(dirError);
      });
    });
  }

  private datasync(): Promise<void> {
    return new Promise((resolve, reject) => this.fdatasyncFile((error) => (error ? reject(error) : resolve())));
  }

  private completed(firstSeq: number, lastSeq: number, lines: string[], length: number): void {
    this.writtenSeq = lastSeq;
    this.writtenBytes += length;
    this.queuedBytes -= length;
    if (this.waiters.length > 0) this.releaseWaiters();
    this.onDurable({ firstSeq, lastSeq, lines });
    this.window.trim(); // after onDurable: the batch's bytes stay in memory while the live path copies them
  }

  private releaseWaiters(): void {
    const still: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (waiter.seq <= this.writtenSeq) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  /** A write hit a full disk: report it (once per stall), retry later, give up past diskFullExitMs. */
  private stalled(error: Error): void {
    const now = Date.now();
    if (this.stall === null) {
      this.stall = error;
      this.stallSince = now;
      this.onStall(error);
    } else if (now - this.stallSince >= this.diskFullExitMs) {
      this.fail(error);
      return;
    }
    this.stallTimer = setTimeout(() => {
      this.stallTimer = null;
      this.writeNext(true);
    }, JOURNAL_LIMITS.diskFullRetryMs);
  }

  private fail(error: Error): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
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
