// Reading one of a kept CLI's capture files (the keeper appends its stdout or
// stderr there; keeper.ts) from a byte offset, split into lines (pipes) or
// text chunks (a pty) that carry `off`, the capture offset after each piece
// (docs/bridge-internals.md#surviving-clis).
// The reads are synchronous: the keeper just wrote these bytes, they are in
// the page cache, and a read costs microseconds where a thread-pool round trip
// per read costs more than the read (the live throughput of a kept CLI).
import { closeSync, openSync, readSync } from 'node:fs';
import { LineSplitter, utf8Cut } from '../supervisor/line-splitter.ts';

/** One read of a capture file (shared: reads are synchronous and the splitter copies what it keeps). */
const readBuffer = Buffer.allocUnsafeSlow(256 * 1024);

/** What a capture's bytes go to: LineSplitter (pipes) or PtyChunks. */
type Splitter = { push(bytes: Buffer): void; end(): void };

export class CaptureReader {
  readonly #splitter: Splitter;
  #offset: number;
  #fd: number | null = null;

  /** Lines from `from` on; `sink` gets each line or `cont` piece with the offset after it. */
  static lines(path: string, from: number, maxLineBytes: number, sink: (text: string, cont: boolean, off: number) => void): CaptureReader {
    return new CaptureReader(path, from, new LineSplitter(maxLineBytes, sink, from));
  }

  /** A pty's text from `from` on, in chunks of at most `maxChunkBytes`, each cut at a UTF-8 character boundary. */
  static chunks(path: string, from: number, maxChunkBytes: number, sink: (text: string, off: number) => void): CaptureReader {
    return new CaptureReader(path, from, new PtyChunks(maxChunkBytes, sink, from));
  }

  private constructor(
    readonly path: string,
    from: number,
    splitter: Splitter,
  ) {
    this.#offset = from;
    this.#splitter = splitter;
  }

  /**
   * Reads what the file holds past the offset, up to `budget` bytes (then the caller's event loop gets
   * its turn), stopping early once `stop()` says so. Returns the bytes read; a file not created yet reads 0.
   */
  read(budget: number, stop: () => boolean): number {
    if (this.#fd === null) {
      try {
        this.#fd = openSync(this.path, 'r');
      } catch {
        return 0;
      }
    }
    let total = 0;
    while (total < budget && !stop()) {
      const bytesRead = readSync(this.#fd, readBuffer, 0, Math.min(readBuffer.length, budget - total), this.#offset);
      if (bytesRead === 0) break;
      this.#offset += bytesRead;
      total += bytesRead;
      this.#splitter.push(readBuffer.subarray(0, bytesRead)); // the splitter copies what it keeps
    }
    return total;
  }

  /** The capture offset read up to. */
  get offset(): number {
    return this.#offset;
  }

  /** The end of the output: the last piece goes out, the file is closed. */
  end(): void {
    this.#splitter.end();
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}

/**
 * Decodes a pty capture into text chunks that end at a character boundary, so that the `off` each one
 * carries is where an adopting bridge resumes without splitting a character. An incomplete sequence at
 * the end of what was read waits for its next bytes (or, at the end of the output, decodes as U+FFFD).
 */
export class PtyChunks implements Splitter {
  #held: Buffer = Buffer.alloc(0);
  #off: number;

  constructor(
    readonly maxChunkBytes: number,
    readonly sink: (text: string, off: number) => void,
    from: number,
  ) {
    if (maxChunkBytes < 4) throw new RangeError('a pty chunk holds at least one character (4 bytes)');
    this.#off = from;
  }

  push(bytes: Buffer): void {
    const all = this.#held.length === 0 ? bytes : Buffer.concat([this.#held, bytes]);
    let start = 0;
    while (all.length - start > this.maxChunkBytes) {
      const cut = utf8Cut(all, start, start + this.maxChunkBytes);
      this.#emit(all.subarray(start, cut));
      start = cut;
    }
    const cut = completeEnd(all, start);
    if (cut > start) this.#emit(all.subarray(start, cut));
    this.#held = Buffer.from(all.subarray(cut)); // at most 3 bytes, copied: `bytes` is a reused read buffer
  }

  end(): void {
    if (this.#held.length > 0) this.#emit(this.#held);
    this.#held = Buffer.alloc(0);
  }

  #emit(bytes: Buffer): void {
    this.#off += bytes.length;
    this.sink(bytes.toString('utf8'), this.#off);
  }
}

/**
 * Where the bytes from `floor` on stop being complete characters: before the lead byte of a sequence
 * that needs bytes past the end (at most 3 bytes back), else the end.
 */
export function completeEnd(bytes: Buffer, floor: number): number {
  for (let i = bytes.length - 1, back = 0; i >= floor && back < 4; i--, back++) {
    const b = bytes[i]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need <= bytes.length ? bytes.length : i; // complete (or an ASCII / invalid byte, which decodes alone), or cut before its lead
  }
  return bytes.length; // only continuation bytes (invalid): nothing to wait for
}
