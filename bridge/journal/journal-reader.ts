// Sequential reader over journal.ndjson for replay: seeks with the sparse
// index, then streams lines with one fixed-size buffer (grown only for a line
// longer than it), so memory is bounded for any range. Lines are not
// re-checksummed: the file was validated at open, and since then only this
// process has written it. Owns its own fd, so journal.close() never pulls a
// file out from under a replay in progress.
import { close, open } from 'node:fs';
import { promisify } from 'node:util';
import { linePrefixBytes, readRecordSeq } from '../../protocol/journal/line-format.ts';
import { readFully } from './recovery-scan.ts';

const openAsync = promisify(open);
const closeAsync = promisify(close);

export type BatchLimits = { maxRecords: number; maxBytes: number };

/**
 * Read buffers of closed readers, by size, for the next reader. A slow host
 * makes the bridge catch up from disk again and again, each time with a new
 * reader; a fresh 1 MiB buffer per catch-up lived across awaits, got promoted,
 * and piled up as dead external memory until the next full GC (8–12 MiB at 1M
 * records in test/chaos/memory.test.ts). Two per size covers a replay running
 * beside a catch-up.
 */
const spareBuffers = new Map<number, Buffer[]>();
const maxSpareBuffersPerSize = 2;

function takeBuffer(bytes: number): Buffer {
  return spareBuffers.get(bytes)?.pop() ?? Buffer.allocUnsafeSlow(bytes);
}

function releaseBuffer(buffer: Buffer, bytes: number): void {
  if (buffer.length !== bytes) return; // grown for a long line: let it go
  const spares = spareBuffers.get(bytes) ?? [];
  if (spares.length < maxSpareBuffersPerSize) spares.push(buffer);
  spareBuffers.set(bytes, spares);
}

export class JournalReader {
  private fd = -1;
  private buffer: Buffer;
  /** Valid bytes are buffer[start, end); buffer[0] is at file offset `bufferOffset`. */
  private start = 0;
  private end = 0;
  private bufferOffset = 0;
  /** Seq of the line at buffer[start]. */
  private seq = 0;

  private released = false;

  constructor(
    private readonly path: string,
    private readonly chunkBytes: number,
  ) {
    this.buffer = takeBuffer(chunkBytes);
  }

  /** Seq of the next line readBatch returns; 0 before the first seek. */
  get nextSeq(): number {
    return this.seq;
  }

  /** Positions at `seq`, given the offset of `indexSeq` (≤ seq), skipping the lines in between. */
  async seek(seq: number, indexSeq: number, indexOffset: number, fileBytes: number): Promise<void> {
    if (this.fd === -1) this.fd = await openAsync(this.path, 'r');
    this.start = 0;
    this.end = 0;
    this.bufferOffset = indexOffset;
    this.seq = indexSeq;
    while (this.seq < seq) {
      const newline = await this.nextNewline(fileBytes);
      this.start = newline + 1;
      this.seq++;
    }
    const newline = await this.nextNewline(fileBytes);
    const found = readRecordSeq(this.buffer, this.start, newline);
    if (found !== seq) throw new Error(`journal: index points at seq ${found}, expected ${seq}`);
  }

  /** Up to the limits, records from nextSeq to at most `lastSeq`; every seq ≤ lastSeq must lie below fileBytes. */
  async readBatch(lastSeq: number, limits: BatchLimits, fileBytes: number): Promise<string[]> {
    const batch: string[] = [];
    let bytes = 0;
    while (this.seq <= lastSeq && batch.length < limits.maxRecords && bytes < limits.maxBytes) {
      const newline = await this.nextNewline(fileBytes);
      batch.push(this.buffer.toString('utf8', this.start + linePrefixBytes, newline));
      bytes += newline - this.start;
      this.start = newline + 1;
      this.seq++;
    }
    return batch;
  }

  /**
   * Copies the JSON of records from nextSeq up to `lastSeq` (each followed by
   * a comma) into target[offset, limit), stopping before the first record that
   * does not fit; no string per record. Returns the next seq and offset.
   */
  async copyRecords(lastSeq: number, target: Buffer, offset: number, limit: number, fileBytes: number): Promise<{ next: number; offset: number }> {
    let o = offset;
    while (this.seq <= lastSeq) {
      let newline = this.buffer.indexOf(0x0a, this.start);
      if (newline === -1 || newline >= this.end) newline = await this.nextNewline(fileBytes);
      const length = newline - this.start - linePrefixBytes;
      if (o + length + 1 > limit) break;
      this.buffer.copy(target, o, this.start + linePrefixBytes, newline);
      o += length;
      target[o++] = 0x2c;
      this.start = newline + 1;
      this.seq++;
    }
    return { next: this.seq, offset: o };
  }

  /** Bytes of the record at nextSeq as copyRecords writes it (JSON plus comma). */
  async nextRecordBytes(fileBytes: number): Promise<number> {
    const newline = await this.nextNewline(fileBytes);
    return newline - this.start - linePrefixBytes + 1;
  }

  /** Closes the file and hands the buffer to the next reader; call once no read is in flight, and use the reader no more. */
  async close(): Promise<void> {
    if (!this.released) {
      this.released = true;
      releaseBuffer(this.buffer, this.chunkBytes);
    }
    if (this.fd === -1) return;
    const fd = this.fd;
    this.fd = -1;
    await closeAsync(fd);
  }

  /** Index of the newline ending the line at `start`, reading (and growing the buffer) as needed. */
  private async nextNewline(fileBytes: number): Promise<number> {
    for (;;) {
      const newline = this.buffer.indexOf(0x0a, this.start);
      if (newline !== -1 && newline < this.end) return newline;
      await this.refill(fileBytes);
    }
  }

  private async refill(fileBytes: number): Promise<void> {
    const kept = this.end - this.start;
    if (kept === this.buffer.length) {
      const bigger = Buffer.allocUnsafe(this.buffer.length * 2);
      this.buffer.copy(bigger, 0, this.start, this.end);
      this.buffer = bigger;
    } else if (this.start > 0) {
      this.buffer.copy(this.buffer, 0, this.start, this.end);
    }
    this.bufferOffset += this.start;
    this.start = 0;
    this.end = kept;
    const position = this.bufferOffset + kept;
    const length = Math.min(this.buffer.length - kept, fileBytes - position);
    if (length <= 0) throw new Error(`journal: no line end before offset ${fileBytes}`);
    this.end += await readFully(this.fd, this.buffer, length, position, kept);
  }
}
