// The owner's record stream: replay (replay-begin … replay-end) from the
// journal, then live batches from onDurable, with no gap and no duplicate at
// the handoff (`sentSeq` decides), and bounded memory with a slow host: while
// the socket's bufferedAmount is above maxBufferedBytes, or as many frames as
// the frame pool holds are still unwritten, nothing more is queued for it; once
// it drains it is caught up from the journal (window or disk).
// server.ts owns sockets and ownership; journal.ts owns what read() returns.
import type { WebSocket } from 'ws';
import { CLOSE_CODES_V1 } from '../../protocol/v1/close-codes.ts';
import { SERVER_LIMITS } from '../limits.ts';
import type { Logger } from '../logger.ts';

type CopyResult = { next: number; offset: number };

/** What the stream needs from the journal (journal.ts's Journal satisfies it). */
export type JournalReadPort = {
  readonly durableSeq: number;
  read(fromSeq: number, toSeq: number, maxBatchRecords: number): AsyncIterable<string[]>;
  /**
   * Byte fast path (journal.ts): records are copied from the journal's own
   * line bytes straight into frame buffers, never as one string per record.
   * A port without it (test fakes) is served from read() and `lines`.
   */
  cursor?(): {
    copy(from: number, to: number, target: Buffer, offset: number, limit: number): Promise<CopyResult>;
    recordBytes(seq: number): Promise<number>;
    close(): Promise<void>;
  };
  copyFromWindow?(from: number, to: number, target: Buffer, offset: number, limit: number): CopyResult | null;
  windowBytes?(from: number, to: number): number;
};

export type DurableBatch = { firstSeq: number; lastSeq: number; lines: string[] };

export type RecordStreamLimits = {
  maxBufferedBytes: number;
  maxReplayBatchRecords: number;
  maxBehindMs: number;
};

/** Frame text is capped near this many UTF-16 units; a batch above it goes out as several frames. */
const maxFrameChars = 1024 * 1024;
const framePrefix = '{"type":"records","records":[';
const frameSuffix = ']}';
const prefixBytes = Buffer.from(framePrefix);
const closeBracket = 0x5d;
const closeBrace = 0x7d;

/**
 * Frame buffers for the byte path: one records frame is at most this many
 * bytes (a bigger single record gets a buffer of its own). Big enough to keep
 * the host parsing one frame while the next is on its way; below V8's 128 KiB
 * large-object threshold so the host's frame string (JSON.parse input) dies in
 * the young generation: at 256 KiB each frame's string went to large-object
 * space, freed only by a full GC, and a slow host's peak at 1M records grew
 * by ~15 MiB of such garbage (test/chaos/memory.test.ts).
 */
const frameBufferBytes = 120 * 1024;
/**
 * The first records frame of a replay is at most this many bytes: a resuming
 * host's first part waits for its whole first frame to be parsed and
 * translated (docs/bridge-internals.md#resume-costs). The frames after it are full.
 */
const firstReplayFrameBytes = 16 * 1024;
/**
 * Frame buffers kept for reuse once ws has written them. A socket is filled
 * until its bufferedAmount passes SERVER_LIMITS.maxBufferedBytes, so up to
 * that many bytes of frames plus one are in flight at once: the pool holds
 * them all. With 4, a slow host's drain cycles dropped ~5 buffers each, and the
 * bridge at 1M records carried ~20 MiB of dead 120 KiB buffers (not young: they
 * live until ws writes them) awaiting a full GC.
 */
const maxPooledFrameBuffers = Math.ceil(SERVER_LIMITS.maxBufferedBytes / frameBufferBytes) + 2;
const framePool: Buffer[] = [];
/**
 * Frames handed to ws whose write callback has not run yet, at most: a loopback socket takes a
 * big batch's frames at once (bufferedAmount stays low), but their buffers come back only when
 * the callbacks run, a tick later. Unbounded, a batch of more frames than the pool holds took
 * fresh buffers (fresh pages) for the rest: ~60 % of a kept CLI's frames, whose batches are
 * bigger (docs/bridge-internals.md#server, Backpressure).
 */
const maxFramesInFlight = maxPooledFrameBuffers;

function takeFrameBuffer(): Buffer {
  const buffer = framePool.pop() ?? Buffer.allocUnsafeSlow(frameBufferBytes);
  prefixBytes.copy(buffer, 0);
  return buffer;
}

function releaseFrameBuffer(buffer: Buffer): void {
  if (buffer.length === frameBufferBytes && framePool.length < maxPooledFrameBuffers) framePool.push(buffer);
}

export class RecordStream {
  readonly #ws: WebSocket;
  readonly #journal: JournalReadPort;
  readonly #limits: RecordStreamLimits;
  readonly #log: Logger;
  #sentSeq = 0;
  /** A replay or catch-up loop is running; live batches are left to it. */
  #pumping = false;
  #closed = false;
  #drainWaiter: (() => void) | null = null;
  /** Frames handed to ws whose write callback has not run yet. */
  #unwritten = 0;
  #behindTimer: NodeJS.Timeout | null = null;

  constructor(ws: WebSocket, journal: JournalReadPort, limits: RecordStreamLimits, log: Logger) {
    this.#ws = ws;
    this.#journal = journal;
    this.#limits = limits;
    this.#log = log;
  }

  /** Highest seq handed to the socket. */
  get sentSeq(): number {
    return this.#sentSeq;
  }

  /** The socket is above its high-water mark (used to drop diagnostics rather than queue them). */
  get isBehind(): boolean {
    return this.#pumping || this.#full();
  }

  /** No more frames for now: the socket is above its high-water mark, or the frame pool is all in flight. */
  #full(): boolean {
    return this.#ws.bufferedAmount > this.#limits.maxBufferedBytes || this.#unwritten >= maxFramesInFlight;
  }

  /** Replays seq cursor+1..durableSeq inside replay-begin/replay-end, then goes live. */
  start(cursor: number): void {
    this.#sentSeq = cursor;
    this.#pumping = true;
    this.#replay(cursor).then(
      () => this.#catchUp(),
      (error: unknown) => this.#failed(error),
    );
  }

  /** A batch the journal just made durable. Sent now if the socket is live and keeping up; otherwise caught up later. */
  offer(batch: DurableBatch): void {
    if (this.#closed || this.#pumping || batch.lastSeq <= this.#sentSeq) return;
    if (batch.firstSeq > this.#sentSeq + 1 || this.#full()) {
      this.#pumping = true;
      this.#catchUp();
      return;
    }
    if (this.#journal.copyFromWindow !== undefined) {
      if (!this.#sendFromWindow(batch.lastSeq)) {
        // The socket filled up (a batch is one tick of CLI output, several MiB), or the window no
        // longer holds them (cannot happen inside onDurable): the rest is caught up once it drains.
        this.#pumping = true;
        this.#catchUp();
      }
      return;
    }
    const skip = this.#sentSeq + 1 - batch.firstSeq;
    this.#sendLines(skip === 0 ? batch.lines : batch.lines.slice(skip));
  }

  /**
   * Sends sentSeq+1..to from the journal's memory window, synchronously; false if it no longer
   * holds them or the socket passed maxBufferedBytes first (ws would otherwise hold the whole batch).
   */
  #sendFromWindow(to: number): boolean {
    const journal = this.#journal;
    while (this.#sentSeq < to) {
      if (this.#full()) return false;
      const from = this.#sentSeq + 1;
      let buffer = takeFrameBuffer();
      let copied = journal.copyFromWindow!(from, to, buffer, prefixBytes.length, buffer.length - 1);
      if (copied === null) {
        releaseFrameBuffer(buffer);
        return false;
      }
      if (copied.next === from) {
        // One record larger than a pooled buffer: a buffer of its own.
        releaseFrameBuffer(buffer);
        buffer = Buffer.allocUnsafe(prefixBytes.length + journal.windowBytes!(from, from) + 1);
        prefixBytes.copy(buffer, 0);
        copied = journal.copyFromWindow!(from, from, buffer, prefixBytes.length, buffer.length - 1)!;
      }
      this.#sendBuffer(buffer, copied);
    }
    return true;
  }

  /** Closes the frame (its last comma becomes `]`, then `}`), sends it as text and advances sentSeq. */
  #sendBuffer(buffer: Buffer, copied: CopyResult): void {
    buffer[copied.offset - 1] = closeBracket;
    buffer[copied.offset] = closeBrace;
    this.#sentSeq = copied.next - 1;
    this.#unwritten++;
    this.#ws.send(buffer.subarray(0, copied.offset + 1), { binary: false }, () => {
      releaseFrameBuffer(buffer);
      this.#onWritten();
    });
  }

  /** Stops the stream (socket closed, owner displaced, bridge stopping). */
  close(): void {
    this.#closed = true;
    this.#clearBehind();
    const waiter = this.#drainWaiter;
    this.#drainWaiter = null;
    waiter?.();
  }

  async #replay(cursor: number): Promise<void> {
    const to = this.#journal.durableSeq;
    this.#sendText(`{"type":"replay-begin","from":${cursor + 1},"to":${to}}`);
    await this.#copyTo(to, firstReplayFrameBytes);
    if (!this.#closed) this.#sendText(`{"type":"replay-end","to":${to}}`);
  }

  /** Copies from the journal until the socket holds everything durable; then live batches take over. */
  #catchUp(): void {
    const loop = async (): Promise<void> => {
      while (!this.#closed && this.#sentSeq < this.#journal.durableSeq) await this.#copyTo(this.#journal.durableSeq);
    };
    loop().then(
      () => {
        // Synchronous with the last durableSeq check: no batch can slip between them.
        this.#pumping = false;
      },
      (error: unknown) => this.#failed(error),
    );
  }

  /** Sends sentSeq+1..to from the journal, pausing while the socket is above its high-water mark; the first frame's bytes at most `firstFrameBytes` (byte path). */
  async #copyTo(to: number, firstFrameBytes = frameBufferBytes): Promise<void> {
    if (this.#journal.cursor !== undefined) return this.#copyBytesTo(to, firstFrameBytes);
    while (!this.#closed && this.#sentSeq < to) {
      await this.#drained(); // immediate unless the socket is full of our own frames
      if (this.#closed) return;
      const before = this.#sentSeq;
      // Read until the socket fills up, then let go of the reader while it drains.
      for await (const lines of this.#journal.read(before + 1, to, this.#limits.maxReplayBatchRecords)) {
        if (this.#closed) return;
        this.#sendLines(lines);
        if (this.#full()) break;
      }
      if (this.#sentSeq === before && !this.#closed) {
        throw new Error(`journal.read(${before + 1}, ${to}) returned no records`);
      }
    }
  }

  /** #copyTo on the byte path: frames filled straight from the window or the file. */
  async #copyBytesTo(to: number, firstFrameBytes: number): Promise<void> {
    const cursor = this.#journal.cursor!();
    let limit = firstFrameBytes - 1;
    try {
      while (!this.#closed && this.#sentSeq < to) {
        await this.#drained(); // immediate unless the socket is full of our own frames
        if (this.#closed) return;
        const from = this.#sentSeq + 1;
        let buffer = takeFrameBuffer();
        let copied = await cursor.copy(from, to, buffer, prefixBytes.length, limit);
        limit = buffer.length - 1;
        if (copied.next === from) {
          releaseFrameBuffer(buffer);
          if (this.#closed) return;
          buffer = Buffer.allocUnsafe(prefixBytes.length + (await cursor.recordBytes(from)) + 1);
          prefixBytes.copy(buffer, 0);
          copied = await cursor.copy(from, from, buffer, prefixBytes.length, buffer.length - 1);
          if (copied.next === from) throw new Error(`journal: record ${from} could not be read`);
        }
        if (this.#closed) {
          releaseFrameBuffer(buffer);
          return;
        }
        this.#sendBuffer(buffer, copied);
      }
    } finally {
      await cursor.close();
    }
  }

  /** Resolves when the socket is below its high-water mark again (or the stream closed). */
  #drained(): Promise<void> {
    if (this.#closed || this.#unwritten === 0 || !this.#full()) {
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#drainWaiter = resolve;
      this.#behindTimer ??= setTimeout(this.#tooSlow, this.#limits.maxBehindMs);
    });
  }

  /** Send callback shared by every frame: the write reached the kernel, so bufferedAmount went down. */
  readonly #onWritten = (): void => {
    this.#unwritten--;
    if (this.#drainWaiter === null) return;
    // Resume at half the high-water mark and half the frames in flight (hysteresis), or when all our frames are out whatever else is queued.
    if (!this.#closed && this.#unwritten > 0 && (this.#ws.bufferedAmount > this.#limits.maxBufferedBytes / 2 || this.#unwritten > maxFramesInFlight / 2)) return;
    const waiter = this.#drainWaiter;
    this.#drainWaiter = null;
    this.#clearBehind();
    waiter();
  };

  readonly #tooSlow = (): void => {
    this.#behindTimer = null;
    if (this.#closed) return;
    this.#log.warn({ sentSeq: this.#sentSeq, bufferedAmount: this.#ws.bufferedAmount }, 'owner stayed behind too long; closing');
    this.#ws.close(CLOSE_CODES_V1.slowConsumer, 'slow consumer');
    this.close();
  };

  #clearBehind(): void {
    if (this.#behindTimer !== null) {
      clearTimeout(this.#behindTimer);
      this.#behindTimer = null;
    }
  }

  /** One or more records frames from already-serialized records (never re-serialized). */
  #sendLines(lines: string[]): void {
    let start = 0;
    let chars = 0;
    for (let i = 0; i < lines.length; i++) {
      const length = lines[i]!.length;
      if (i > start && chars + length > maxFrameChars) {
        this.#sendFrame(lines, start, i);
        start = i;
        chars = 0;
      }
      chars += length + 1;
    }
    if (start < lines.length) this.#sendFrame(lines, start, lines.length);
  }

  #sendFrame(lines: string[], start: number, end: number): void {
    const body = start === 0 && end === lines.length ? lines.join(',') : lines.slice(start, end).join(',');
    this.#sendText(framePrefix + body + frameSuffix);
    this.#sentSeq += end - start;
  }

  #sendText(text: string): void {
    this.#unwritten++;
    this.#ws.send(text, this.#onWritten);
  }

  #failed(error: unknown): void {
    this.#pumping = false;
    if (this.#closed) return;
    this.#log.error({ err: error }, 'record stream failed; closing the owner socket so it re-attaches');
    this.#ws.close(1011, 'record stream failed');
    this.close();
  }
}
