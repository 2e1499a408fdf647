// The journal's memory window: a ring of the last appended records'
// serialized JSON, bounded by count and by (approximate) size. Knows nothing
// about durability; journal.ts decides which seqs may be read.

export class RecordWindow {
  private readonly slots: Array<string | undefined>;
  private readonly maxRecords: number;
  private readonly maxChars: number;
  private chars = 0;
  /** Lowest seq held; held range is [first, last], empty when first > last. */
  private first: number;
  private last: number;

  /** `lastSeq`: the seq before the first one that will be pushed. */
  constructor(maxRecords: number, maxChars: number, lastSeq: number) {
    this.slots = new Array<string | undefined>(maxRecords);
    this.maxRecords = maxRecords;
    this.maxChars = maxChars;
    this.first = lastSeq + 1;
    this.last = lastSeq;
  }

  get firstSeq(): number {
    return this.first;
  }

  has(seq: number): boolean {
    return seq >= this.first && seq <= this.last;
  }

  /** Adds the record with seq last+1, evicting the oldest past either bound (the newest always stays). */
  push(json: string): void {
    const seq = ++this.last;
    if (seq - this.first >= this.maxRecords) this.evictOldest();
    this.slots[seq % this.maxRecords] = json;
    this.chars += json.length;
    while (this.chars > this.maxChars && this.first < this.last) this.evictOldest();
  }

  /** Records from `from` (which must be held) up to `to`, at most maxRecords, stopping once maxChars is passed. */
  slice(from: number, to: number, maxRecords: number, maxChars: number): string[] {
    const end = Math.min(to, this.last, from + maxRecords - 1);
    const batch: string[] = [];
    let chars = 0;
    for (let seq = from; seq <= end && chars < maxChars; seq++) {
      const json = this.slots[seq % this.maxRecords]!;
      batch.push(json);
      chars += json.length;
    }
    return batch;
  }

  private evictOldest(): void {
    const slot = this.first % this.maxRecords;
    this.chars -= this.slots[slot]!.length;
    this.slots[slot] = undefined;
    this.first++;
  }
}
