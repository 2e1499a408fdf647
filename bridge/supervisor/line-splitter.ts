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
// - Each piece comes with `off`: the count of stream bytes consumed up to the end
//   of that piece (after its `\n` for a line's last piece). A new splitter fed
//   the stream from `off` on continues exactly where this one stopped
//   (surviving CLIs resume from a capture file at the last journaled offset).
// Not guaranteed: invalid UTF-8 is decoded with U+FFFD replacement; a lone `\r`
// at the very end of the stream is kept as text.

export type LineSink = (text: string, cont: boolean, off: number) => void;

const LF = 0x0a;
const CR = 0x0d;

/**
 * Initial bytes of the carry buffer (the unterminated tail of the last chunk).
 * Grown on demand up to about maxLineBytes + one chunk; given back once a line
 * that needed more than this ends, so one long line does not pin it forever.
 */
const carryBytes = 16 * 1024;

export class LineSplitter {
  readonly maxLineBytes: number;
  readonly #onLine: LineSink;
  /**
   * Bytes of the current, unterminated line: copied out of the input chunk
   * into this reused buffer, never kept as a view of the chunk. A view pinned
   * each 64 KiB pipe chunk until the next one was processed, so nearly every
   * chunk outlived two scavenges, was promoted to old space, and its
   * ArrayBuffer waited for a full GC: ~20 MiB of dead chunks in a 1M-record
   * run's bridge (test/chaos/memory.test.ts).
   */
  #carry: Buffer = Buffer.allocUnsafeSlow(carryBytes);
  #pendingBytes = 0;
  /** Stream bytes pushed before the current chunk (a stream's start offset when constructed with one). */
  #base = 0;

  constructor(maxLineBytes: number, onLine: LineSink, startOffset = 0) {
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 4) {
      throw new RangeError(`maxLineBytes must be an integer >= 4, got ${maxLineBytes}`);
    }
    this.maxLineBytes = maxLineBytes;
    this.#onLine = onLine;
    this.#base = startOffset;
  }

  /** Bytes buffered for the current unterminated line. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  push(chunk: Buffer): void {
    let pos = 0;
    const len = chunk.length;
    const base = this.#base;
    this.#base = base + len;
    while (pos < len) {
      const nl = chunk.indexOf(LF, pos);
      if (nl === -1) {
        this.#hold(chunk, pos, len, base + len);
        return;
      }
      if (this.#pendingBytes === 0) {
        // Fast path: the whole line is inside this chunk, no copy.
        let end = nl;
        if (end > pos && chunk[end - 1] === CR) end--;
        if (end - pos <= this.maxLineBytes) this.#onLine(chunk.toString('utf8', pos, end), false, base + nl + 1);
        else this.#emitPieces(chunk, pos, end, base, base + nl + 1);
      } else {
        const carryBase = base + pos - this.#pendingBytes;
        this.#append(chunk, pos, nl);
        const line = this.#carry;
        let end = this.#pendingBytes;
        if (end > 0 && line[end - 1] === CR) end--;
        this.#pendingBytes = 0;
        this.#emitPieces(line, 0, end, carryBase, base + nl + 1);
        if (line.length > carryBytes) this.#carry = Buffer.allocUnsafeSlow(carryBytes);
      }
      pos = nl + 1;
    }
  }

  /** The stream ended: emit a final line without `\n`, if any. */
  end(): void {
    if (this.#pendingBytes === 0) return;
    const length = this.#pendingBytes;
    this.#pendingBytes = 0;
    this.#emitPieces(this.#carry, 0, length, this.#base - length, this.#base);
  }

  /** Copies chunk[start, end) after the pending bytes, growing the carry buffer when needed. */
  #append(chunk: Buffer, start: number, end: number): void {
    const need = this.#pendingBytes + (end - start);
    if (need > this.#carry.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(need, this.#carry.length * 2));
      this.#carry.copy(bigger, 0, 0, this.#pendingBytes);
      this.#carry = bigger;
    }
    chunk.copy(this.#carry, this.#pendingBytes, start, end);
    this.#pendingBytes = need;
  }

  /** Keeps bytes of an unterminated line; cuts `cont` pieces off once it is surely over the cap. */
  #hold(chunk: Buffer, start: number, end: number, endOffset: number): void {
    if (end === start) return;
    this.#append(chunk, start, end);
    // Cut only while more than cap+1 bytes wait: the piece then leaves at least
    // two bytes behind, so a trailing `\r` of a CRLF can never end up alone in
    // a piece of its own (the rest of the line is never empty after stripping it).
    if (this.#pendingBytes <= this.maxLineBytes + 1) return;
    const buf = this.#carry;
    const carryBase = endOffset - this.#pendingBytes;
    let from = 0;
    while (this.#pendingBytes - from > this.maxLineBytes + 1) {
      const cut = utf8Cut(buf, from, from + this.maxLineBytes);
      this.#onLine(buf.toString('utf8', from, cut), true, carryBase + cut);
      from = cut;
    }
    buf.copyWithin(0, from, this.#pendingBytes);
    this.#pendingBytes -= from;
  }

  /** Emits buf[start, end) as one line: in cap-sized `cont` pieces when too long, the last piece with cont=false. */
  #emitPieces(buf: Buffer, start: number, end: number, bufBase: number, lastOff: number): void {
    while (end - start > this.maxLineBytes) {
      const cut = utf8Cut(buf, start, start + this.maxLineBytes);
      this.#onLine(buf.toString('utf8', start, cut), true, bufBase + cut);
      start = cut;
    }
    this.#onLine(buf.toString('utf8', start, end), false, lastOff);
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
