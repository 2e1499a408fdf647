// Lines to stdout for commands that print a lot (replay over a large file):
// encoded into one reused 64 KiB buffer and written a batch at a time, not a
// write per line, and paced by the stream (a write it cannot take yet is
// awaited before more is made). Lines are turned into bytes as they come, so
// no string outlives its line: memory stays flat however much is printed.
const batchBytes = 64 * 1024;

export class LineOutput {
  readonly #stream: NodeJS.WritableStream;
  readonly #batch = Buffer.allocUnsafe(batchBytes);
  #used = 0;
  constructor(stream: NodeJS.WritableStream) {
    this.#stream = stream;
  }

  /** Queues one line; returns a promise to await only when the stream asked to wait. */
  line(text: string): Promise<void> | undefined {
    const bytes = Buffer.byteLength(text) + 1;
    let waited: Promise<void> | undefined;
    if (this.#used + bytes > batchBytes) waited = this.flush();
    if (bytes > batchBytes) {
      const drained = this.#write(Buffer.from(`${text}\n`));
      return waited && drained ? waited.then(() => drained) : (waited ?? drained);
    }
    this.#used += this.#batch.write(text, this.#used);
    this.#batch[this.#used++] = 0x0a;
    return waited;
  }

  /** Writes what is queued. */
  flush(): Promise<void> | undefined {
    if (this.#used === 0) return undefined;
    const chunk = Buffer.from(this.#batch.subarray(0, this.#used)); // the stream may keep it: a copy
    this.#used = 0;
    return this.#write(chunk);
  }

  #write(chunk: Buffer): Promise<void> | undefined {
    if (this.#stream.write(chunk)) return undefined;
    return new Promise((resolve) => this.#stream.once('drain', () => resolve()));
  }
}
