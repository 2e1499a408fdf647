// A set of seqs as a sparse bitmap: 2^16 seqs per 8 KiB chunk, chunks only
// where seqs are. What streaming reconstruction needs to know about a whole
// recording before it emits anything (which seqs exist, which arrive more
// than once), at 1 bit per seq instead of an object per record.
const chunkBits = 16;
const chunkSeqs = 1 << chunkBits;

export class SeqSet {
  readonly #chunks = new Map<number, Uint32Array>();
  #sortedKeys: number[] | null = null;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `seq`; false if it was already there. */
  add(seq: number): boolean {
    const key = Math.floor(seq / chunkSeqs);
    let chunk = this.#chunks.get(key);
    if (!chunk) {
      chunk = new Uint32Array(chunkSeqs / 32);
      this.#chunks.set(key, chunk);
      this.#sortedKeys = null;
    }
    const bit = seq - key * chunkSeqs;
    const mask = 1 << (bit & 31);
    const word = chunk[bit >>> 5]!;
    if ((word & mask) !== 0) return false;
    chunk[bit >>> 5] = word | mask;
    this.#size++;
    return true;
  }

  has(seq: number): boolean {
    const key = Math.floor(seq / chunkSeqs);
    const chunk = this.#chunks.get(key);
    if (!chunk) return false;
    const bit = seq - key * chunkSeqs;
    return (chunk[bit >>> 5]! & (1 << (bit & 31))) !== 0;
  }

  /** The smallest member >= `seq`, or undefined. */
  next(seq: number): number | undefined {
    const keys = (this.#sortedKeys ??= [...this.#chunks.keys()].sort((a, b) => a - b));
    const first = Math.floor(seq / chunkSeqs);
    let low = 0;
    let high = keys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (keys[mid]! < first) low = mid + 1;
      else high = mid;
    }
    for (let k = low; k < keys.length; k++) {
      const key = keys[k]!;
      const chunk = this.#chunks.get(key)!;
      let bit = key === first ? seq - key * chunkSeqs : 0;
      while (bit < chunkSeqs) {
        const word = chunk[bit >>> 5]! >>> (bit & 31);
        if (word === 0) {
          bit = (bit | 31) + 1;
          continue;
        }
        return key * chunkSeqs + bit + (31 - Math.clz32(word & -word));
      }
    }
    return undefined;
  }
}
