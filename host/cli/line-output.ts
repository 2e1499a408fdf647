// Lines to stdout for commands that print a lot (replay over a large file):
// batched into writes of ~64 KiB instead of one write per line, and paced by
// the stream (a write the stream cannot take yet is awaited before more is
// made), so memory stays flat however much is printed.
const batchChars = 64 * 1024;

export class LineOutput {
  readonly #stream: NodeJS.WritableStream;
  #pending = '';
  constructor(stream: NodeJS.WritableStream) {
    this.#stream = stream;
  }

  /** Queues one line; returns a promise to await only when the stream asked to wait. */
  line(text: string): Promise<void> | undefined {
    this.#pending += `${text}\n`;
    return this.#pending.length >= batchChars ? this.#write() : undefined;
  }

  /** Writes what is queued. */
  flush(): Promise<void> | undefined {
    return this.#pending.length > 0 ? this.#write() : undefined;
  }

  #write(): Promise<void> | undefined {
    const chunk = this.#pending;
    this.#pending = '';
    if (this.#stream.write(chunk)) return undefined;
    return new Promise((resolve) => this.#stream.once('drain', () => resolve()));
  }
}
