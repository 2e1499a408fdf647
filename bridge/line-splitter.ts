// Splits one byte stream (a child's stdout or stderr) into UTF-8 text lines with
// a byte cap. Owns only framing: what a line is and how an over-long one is cut;
// the supervisor decides what a line becomes (records, turn-end matching).
//
// Guarantees:
// - Lines end at `\n` only (never U+2028/U+2029 or a lone `\r`); one `\r` right
//   before the `\n` is stripped (CRLF tolerated).
// - A line whose bytes exceed `maxLineBytes` is emitted in pieces of at most
//   `maxLineBytes` bytes, every piece but the last with `cont: true`; joining the
//   pieces in order gives the line. A piece never ends inside a UTF-8 sequence
//   (valid input), and no piece is empty.
// - A final line without `\n` is emitted by `end()`.
// - Memory: at most about `maxLineBytes` + one input chunk is buffered.
// Not guaranteed: invalid UTF-8 is decoded with U+FFFD replacement; a lone `\r`
// at the very end of the stream is kept as text.

export type LineSink = (text: string, cont: boolean) => void;

const LF = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  readonly maxLineBytes: number;
  readonly #onLine: LineSink;
  /** Bytes of the current, unterminated line, in arrival order. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(maxLineBytes: number, onLine: LineSink) {
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 4) {
      throw new RangeError(`maxLineBytes must be an integer >= 4, got ${maxLineBytes}`);
    }
    this.maxLineBytes = maxLineBytes;
    this.#onLine = onLine;
  }

  /** Bytes buffered for the current unterminated line. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  push(chunk: Buffer): void {
    let pos = 0;
    const len = chunk.length;
    while (pos < len) {
      const nl = chunk.indexOf(LF, pos);
      if (nl === -1) {
        this.#hold(chunk.subarray(pos));
        return;
      }
      if (this.#pendingBytes === 0) {
        // Fast path: the whole line is inside this chunk, no copy.
        let end = nl;
        if (end > pos && chunk[end - 1] === CR) end--;
        if (end - pos <= this.maxLineBytes) this.#onLine(chunk.toString('utf8', pos, end), false);
        else this.#emitPieces(chunk, pos, end);
      } else {
        this.#pending.push(chunk.subarray(pos, nl));
        this.#pendingBytes += nl - pos;
        const line = this.#take();
        let end = line.length;
        if (end > 0 && line[end - 1] === CR) end--;
        this.#emitPieces(line, 0, end);
      }
      pos = nl + 1;
    }
  }

  /** The stream ended: emit a final line without `\n`, if any. */
  end(): void {
    if (this.#pendingBytes === 0) return;
    const line = this.#take();
    this.#emitPieces(line, 0, line.length);
  }

  #take(): Buffer {
    const parts = this.#pending;
    const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    return line;
  }

  /** Keeps bytes of an unterminated line; cuts `cont` pieces off once it is surely over the cap. */
  #hold(part: Buffer): void {
    if (part.length === 0) return;
    this.#pending.push(part);
    this.#pendingBytes += part.length;
    // Cut only while more than cap+1 bytes wait: the piece then leaves at least
    // two bytes behind, so a trailing `\r` of a CRLF can never end up alone in
    // a piece of its own (the rest of the line is never empty after stripping it).
    if (this.#pendingBytes <= this.maxLineBytes + 1) return;
    const buf = this.#take();
    let start = 0;
    while (buf.length - start > this.maxLineBytes + 1) {
      const cut = utf8Cut(buf, start, start + this.maxLineBytes);
      this.#onLine(buf.toString('utf8', start, cut), true);
      start = cut;
    }
    const rest = buf.subarray(start);
    this.#pending.push(rest);
    this.#pendingBytes = rest.length;
  }

  /** Emits buf[start, end) as one line: in cap-sized `cont` pieces when too long, the last piece with cont=false. */
  #emitPieces(buf: Buffer, start: number, end: number): void {
    while (end - start > this.maxLineBytes) {
      const cut = utf8Cut(buf, start, start + this.maxLineBytes);
      this.#onLine(buf.toString('utf8', start, cut), true);
      start = cut;
    }
    this.#onLine(buf.toString('utf8', start, end), false);
  }
}

/**
 * A cut position at or before `at` (and after `start`) that does not fall
 * inside a UTF-8 sequence: back off over continuation bytes (10xxxxxx), at most
 * three. Invalid UTF-8 (more continuation bytes) is cut at `at` as is.
 */
export function utf8Cut(buf: Buffer, start: number, at: number): number {
  let cut = at;
  for (let i = 0; i < 3 && cut > start + 1; i++) {
    if ((buf[cut]! & 0xc0) !== 0x80) return cut;
    cut--;
  }
  return (buf[cut]! & 0xc0) === 0x80 ? at : cut;
}
