// The journal's memory window: the most recent journal lines as the very bytes
// that go to disk (`<crc>\t<json>\n`), in fixed-size blocks reused from a small
// free list. Records are encoded into it once, at append; the disk write, live
// frames and short replays all copy from these bytes, so no per-record JS
// object outlives its tick (a window of strings was promoted to old space and
// grew the heap with every record). Bounded by record count and by bytes, a
// block at a time. Knows nothing about durability; journal.ts decides which
// seqs may be read and when a block may go.
import { writeSync } from 'node:fs';
import { encodeLineInto, encodeTextRecordInto, linePrefixBytes, maxLineBytes, type TextRecordDraft } from '../../protocol/journal/line-format.ts';

type Block = {
  buf: Buffer;
  /** Seq of the first line in the block. */
  firstSeq: number;
  /**
   * ends[i]: offset just past the newline of line firstSeq+i, for i < count.
   * Typed and sized once per block (a line is never shorter than
   * minLineBytes): a growing JS array was reallocated on every reuse and its
   * stores were promoted to old space.
   */
  ends: Int32Array;
  count: number;
  /** Bytes in use. */
  used: number;
  /** Bytes already written to disk. */
  written: number;
};

const comma = 0x2c;
/** Shortest possible journal line: `{"seq":1,"turnId":null,"ts":0,"kind":"x","data":0}` plus framing is more. */
const minLineBytes = 32;

export class RecordWindow {
  private readonly blocks: Block[] = [];
  private readonly spare: Block[] = [];
  private readonly maxRecords: number;
  private readonly maxBytes: number;
  private readonly blockBytes: number;
  private readonly maxSpareBlocks: number;
  private records = 0;
  private bytes = 0;
  /** Seq the next pushed record gets. */
  private next: number;

  /**
   * `lastSeq`: the seq before the first one that will be pushed. `maxSpareBytes`:
   * trimmed block bytes kept for reuse (at least one block).
   */
  constructor(maxRecords: number, maxBytes: number, lastSeq: number, blockBytes: number, maxSpareBytes = 2 * blockBytes) {
    this.maxRecords = maxRecords;
    this.maxBytes = maxBytes;
    this.blockBytes = blockBytes;
    this.maxSpareBlocks = Math.max(1, Math.floor(maxSpareBytes / blockBytes));
    this.next = lastSeq + 1;
  }

  get firstSeq(): number {
    return this.blocks.length > 0 ? this.blocks[0]!.firstSeq : this.next;
  }

  has(seq: number): boolean {
    return seq >= this.firstSeq && seq < this.next;
  }

  /** Frames `json` as the line of seq `next` into the head block; returns its byte length. */
  push(json: string): number {
    const head = this.headFor(maxLineBytes(json));
    return this.added(head, encodeLineInto(head.buf, head.used, json));
  }

  /** push(serializeRecord(seq, ts, draft)) for a text record, `chars` long, whose text's JSON is `textJson` (line-format.ts). */
  pushText(seq: number, ts: number, draft: TextRecordDraft, textJson: string, chars: number): number {
    const head = this.headFor(linePrefixBytes + 3 * chars + 1);
    return this.added(head, encodeTextRecordInto(head.buf, head.used, seq, ts, draft, textJson));
  }

  /** The block the next line goes into, with room for `need` bytes. */
  private headFor(need: number): Block {
    const head = this.blocks[this.blocks.length - 1];
    return head === undefined || head.used + need > head.buf.length ? this.newBlock(need) : head;
  }

  /** The head block's next line was written up to `end`; returns its byte length. */
  private added(head: Block, end: number): number {
    const start = head.used;
    head.used = end;
    head.ends[head.count++] = end;
    this.records++;
    this.bytes += end - start;
    this.next++;
    return end - start;
  }

  /**
   * Writes every byte not yet written, at file `position` onwards, synchronously. Returns the
   * bytes written and the error that stopped it (a full disk): what was written before the error
   * counts as written, so a retry at `position + bytes` continues exactly where this one stopped.
   */
  writeTo(fd: number, position: number): { bytes: number; error: Error | null } {
    let total = 0;
    try {
      for (let b = this.firstUnwritten(); b < this.blocks.length; b++) {
        const block = this.blocks[b]!;
        while (block.written < block.used) {
          const n = writeSync(fd, block.buf, block.written, block.used - block.written, position + total);
          block.written += n;
          total += n;
        }
      }
    } catch (error) {
      return { bytes: total, error: error instanceof Error ? error : new Error(String(error)) };
    }
    return { bytes: total, error: null };
  }

  /** Drops the oldest blocks while the rest still hold maxRecords records and maxBytes bytes (only written blocks go). */
  trim(): void {
    while (this.blocks.length > 1) {
      const oldest = this.blocks[0]!;
      const count = oldest.count;
      if (oldest.written < oldest.used) return;
      if (this.records - count < this.maxRecords && this.bytes - oldest.used < this.maxBytes) return;
      this.blocks.shift();
      this.records -= count;
      this.bytes -= oldest.used;
      if (oldest.buf.length === this.blockBytes && this.spare.length < this.maxSpareBlocks) this.spare.push(oldest);
    }
  }

  /**
   * Copies the JSON of records from..to (from must be held) into `target` at
   * `offset`, each followed by a comma, stopping before a record that would
   * pass `limit`. Returns the seq after the last one copied and the new offset.
   */
  copyRecords(from: number, to: number, target: Buffer, offset: number, limit: number): { next: number; offset: number } {
    let seq = from;
    let o = offset;
    let b = this.blockOf(seq);
    for (; b < this.blocks.length && seq <= to; b++) {
      const block = this.blocks[b]!;
      const { buf, ends, firstSeq, count } = block;
      let i = seq - firstSeq;
      let start = i === 0 ? 0 : ends[i - 1]!;
      for (; i < count && seq <= to; i++, seq++) {
        const end = ends[i]!;
        const length = end - start - 10; // minus crc, tab and newline
        if (o + length + 1 > limit) return { next: seq, offset: o };
        buf.copy(target, o, start + 9, end - 1);
        o += length;
        target[o++] = comma;
        start = end;
      }
    }
    return { next: seq, offset: o };
  }

  /** Bytes copyRecords would need for from..to (JSON plus one comma each). */
  jsonBytes(from: number, to: number): number {
    let total = 0;
    let seq = from;
    for (let b = this.blockOf(seq); b < this.blocks.length && seq <= to; b++) {
      const { ends, firstSeq, count } = this.blocks[b]!;
      const i = seq - firstSeq;
      const last = Math.min(count - 1, i + (to - seq));
      total += ends[last]! - (i === 0 ? 0 : ends[i - 1]!) - 9 * (last - i + 1);
      seq += last - i + 1;
    }
    return total;
  }

  /** Records from `from` (which must be held) up to `to` as JSON strings: at most maxRecords, stopping once maxChars is passed. */
  slice(from: number, to: number, maxRecords: number, maxChars: number): string[] {
    const batch: string[] = [];
    let chars = 0;
    let seq = from;
    for (let b = this.blockOf(seq); b < this.blocks.length; b++) {
      const { buf, ends, firstSeq, count } = this.blocks[b]!;
      for (let i = seq - firstSeq; i < count; i++, seq++) {
        if (seq > to || batch.length >= maxRecords || chars >= maxChars) return batch;
        const json = buf.toString('utf8', (i === 0 ? 0 : ends[i - 1]!) + 9, ends[i]! - 1);
        batch.push(json);
        chars += json.length;
      }
    }
    return batch;
  }

  private blockOf(seq: number): number {
    let b = this.blocks.length - 1;
    while (b > 0 && this.blocks[b]!.firstSeq > seq) b--;
    return b;
  }

  private firstUnwritten(): number {
    let b = this.blocks.length;
    while (b > 0 && this.blocks[b - 1]!.written < this.blocks[b - 1]!.used) b--;
    return b;
  }

  private newBlock(need: number): Block {
    let block = need <= this.blockBytes ? this.spare.pop() : undefined;
    if (block === undefined) {
      const bytes = Math.max(this.blockBytes, need);
      block = { buf: Buffer.allocUnsafeSlow(bytes), firstSeq: 0, ends: new Int32Array(Math.ceil(bytes / minLineBytes) + 1), count: 0, used: 0, written: 0 };
    }
    block.firstSeq = this.next;
    block.count = 0;
    block.used = 0;
    block.written = 0;
    this.blocks.push(block);
    return block;
  }
}
