// The journal's line format: `<crc32 of the JSON, 8 lowercase hex>\t<JSON>\n`.
// Owns record serialization, crc32, and encoding/decoding one line (the hot
// path UTF-8-encodes and checksums in one pass). Scanning a file is
// bridge/journal/recovery-scan.ts.
import type { RecordDraft } from '../v1/journal-record.ts';

export const journalFormatVersion = 1;

/** Bytes before the JSON: 8 hex digits and a tab. */
export const linePrefixBytes = 9;

const tab = 0x09;
const newline = 0x0a;

// Slice-by-4 tables: t0 is the classic byte table, tk[n] advances tk-1[n] by one more zero byte.
const [t0, t1, t2, t3] = makeCrcTables();

function makeCrcTables(): [Int32Array, Int32Array, Int32Array, Int32Array] {
  const tables: [Int32Array, Int32Array, Int32Array, Int32Array] = [
    new Int32Array(256),
    new Int32Array(256),
    new Int32Array(256),
    new Int32Array(256),
  ];
  const [first] = tables;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    first[n] = c;
  }
  for (let k = 1; k < 4; k++) {
    const previous = tables[k - 1]!;
    const table = tables[k]!;
    for (let n = 0; n < 256; n++) table[n] = (previous[n]! >>> 8) ^ first[previous[n]! & 0xff]!;
  }
  return tables;
}

/** CRC-32 (IEEE, as zlib) of bytes[start, end). Table-driven JS; Node 18 has no zlib.crc32. */
export function crc32Bytes(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = -1;
  let i = start;
  for (const stop = end - 3; i < stop; i += 4) {
    crc ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    crc = t3[crc & 0xff]! ^ t2[(crc >>> 8) & 0xff]! ^ t1[(crc >>> 16) & 0xff]! ^ t0[crc >>> 24]!;
  }
  for (; i < end; i++) crc = t0[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/**
 * Frames `json` as one journal line at target[offset]: UTF-8 encodes it
 * exactly as Buffer.from(json, 'utf8') would (a lone surrogate becomes
 * U+FFFD) with Buffer#write (native), checksums the bytes just written, then
 * fills in the prefix and the newline. Returns the offset after the line. The
 * caller guarantees room for the worst case: linePrefixBytes + 3 * json.length + 1 bytes.
 * Property-tested against Buffer.from + crc32Bytes.
 */
export function encodeLineInto(target: Buffer, offset: number, json: string): number {
  const start = offset + linePrefixBytes;
  const end = start + target.write(json, start);
  writeLinePrefix(target, offset, crc32Bytes(target, start, end));
  target[end] = newline;
  return end + 1;
}

/** Worst-case framed size of `json`: every UTF-16 unit can take 3 UTF-8 bytes. */
export function maxLineBytes(json: string): number {
  return linePrefixBytes + 3 * json.length + 1;
}

/**
 * The record's JSON: one JSON.stringify of the wrapper object, so V8 builds one
 * flat string. Concatenating the pieces around JSON.stringify(data) (as this
 * did) made a cons string that Buffer#write then flattened, and those strings
 * ended up in old space: a slow host's bridge at 1M records grew old space
 * 8 → 20 MiB of them between full GCs, +~10 MiB RSS (sampling heap profiler
 * with includeObjectsCollectedByMajorGC: 24 MiB allocated here and collected
 * only by mark-compact; test/chaos/memory.test.ts). Byte-identical output.
 */
export function serializeRecord(seq: number, ts: number, draft: RecordDraft): string {
  return JSON.stringify({ seq, turnId: draft.turnId, ts, kind: draft.kind, data: draft.data });
}

const hexDigits = new Uint8Array([48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102]);

/** Writes `crc` as 8 lowercase hex digits and a tab at `offset`. */
export function writeLinePrefix(target: Uint8Array, offset: number, crc: number): void {
  for (let i = 7; i >= 0; i--) {
    target[offset + i] = hexDigits[crc & 0xf]!;
    crc >>>= 4;
  }
  target[offset + 8] = tab;
}

/** Parses 8 lowercase hex digits at `offset`; -1 if any byte is not one. */
export function readHex8(bytes: Uint8Array, offset: number): number {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const b = bytes[offset + i]!;
    let digit: number;
    if (b >= 48 && b <= 57) digit = b - 48;
    else if (b >= 97 && b <= 102) digit = b - 87;
    else return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * Checks one line's framing: `bytes[start, end)` is the line without its
 * newline. Returns true when it has the prefix and the crc matches its JSON.
 */
export function hasValidCrc(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start < linePrefixBytes + 2 || bytes[start + 8] !== tab) return false;
  const expected = readHex8(bytes, start);
  return expected >= 0 && expected === crc32Bytes(bytes, start + linePrefixBytes, end);
}

const seqPrefix = '{"seq":';

/**
 * The seq of a record line whose crc already matched: the writer always puts
 * `{"seq":<n>,` first, so a valid line is read without JSON.parse. -1 if the
 * JSON does not start that way or does not end with `}`.
 */
export function readRecordSeq(bytes: Uint8Array, start: number, end: number): number {
  let i = start + linePrefixBytes;
  for (let k = 0; k < seqPrefix.length; k++, i++) if (bytes[i] !== seqPrefix.charCodeAt(k)) return -1;
  let seq = 0;
  const digitsStart = i;
  while (i < end && bytes[i]! >= 48 && bytes[i]! <= 57) {
    seq = seq * 10 + (bytes[i]! - 48);
    i++;
  }
  const digits = i - digitsStart;
  if (digits === 0 || digits > 15 || bytes[i] !== 0x2c || bytes[end - 1] !== 0x7d) return -1;
  if (digits > 1 && bytes[digitsStart] === 48) return -1; // JSON has no leading zeros
  return seq;
}

export type JournalHeader = { type: 'journal-header'; format: number; journalId: string; createdAt: number };

/** The header line, framed like a record line. */
export function encodeHeaderLine(journalId: string, createdAt: number): Buffer {
  const header: JournalHeader = { type: 'journal-header', format: journalFormatVersion, journalId, createdAt };
  return encodeLine(JSON.stringify(header));
}

/** One framed line for `json` (the header; the hot path frames into its write buffer). */
export function encodeLine(json: string): Buffer {
  const scratch = Buffer.allocUnsafe(maxLineBytes(json));
  return Buffer.from(scratch.subarray(0, encodeLineInto(scratch, 0, json)));
}

/** The header in `bytes[start, end)` (a line without its newline), or null if it is not a valid header. */
export function decodeHeaderLine(bytes: Buffer, start: number, end: number): JournalHeader | null {
  if (!hasValidCrc(bytes, start, end)) return null;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8', start + linePrefixBytes, end));
  } catch {
    return null; // crc matched but the JSON did not parse: not a header we wrote
  }
  if (typeof value !== 'object' || value === null) return null;
  const header = value as Record<string, unknown>;
  if (header.type !== 'journal-header' || typeof header.format !== 'number') return null;
  if (typeof header.journalId !== 'string' || header.journalId.length === 0) return null;
  if (typeof header.createdAt !== 'number') return null;
  return { type: 'journal-header', format: header.format, journalId: header.journalId, createdAt: header.createdAt };
}
