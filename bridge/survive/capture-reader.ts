// Reading one of a kept CLI's capture files (the keeper appends its stdout or
// stderr there; keeper.ts) from a byte offset, split into lines that carry
// `off`, the capture offset after each piece (docs/bridge-internals.md#surviving-clis).
// The reads are synchronous: the keeper just wrote these bytes, they are in
// the page cache, and a read costs microseconds where a thread-pool round trip
// per read costs more than the read (the live throughput of a kept CLI).
import { closeSync, openSync, readSync } from 'node:fs';
import { LineSplitter } from '../supervisor/line-splitter.ts';

/** One read of a capture file (shared: reads are synchronous and the splitter copies what it keeps). */
const readBuffer = Buffer.allocUnsafeSlow(256 * 1024);

export class CaptureReader {
  readonly #splitter: LineSplitter;
  #offset: number;
  #fd: number | null = null;

  constructor(
    readonly path: string,
    from: number,
    maxLineBytes: number,
    sink: (text: string, cont: boolean, off: number) => void,
  ) {
    this.#offset = from;
    this.#splitter = new LineSplitter(maxLineBytes, sink, from);
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
      const bytesRead = readSync(this.#fd, readBuffer, 0, readBuffer.length, this.#offset);
      if (bytesRead === 0) break;
      this.#offset += bytesRead;
      total += bytesRead;
      this.#splitter.push(readBuffer.subarray(0, bytesRead)); // the splitter copies what it keeps
    }
    return total;
  }

  /** The end of the output: the last piece goes out, the file is closed. */
  end(): void {
    this.#splitter.end();
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
