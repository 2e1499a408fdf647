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

// Slice-by-8 tables: t0 is the classic byte table, tk[n] advances tk-1[n] by one more zero byte.
const crcTables = makeCrcTables();
const [t0, t1, t2, t3, t4, t5, t6, t7] = crcTables as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];

function makeCrcTables(): Int32Array[] {
  const first = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    first[n] = c;
  }
  const tables = [first];
  for (let k = 1; k < 8; k++) {
    const previous = tables[k - 1]!;
    const table = new Int32Array(256);
    for (let n = 0; n < 256; n++) table[n] = (previous[n]! >>> 8) ^ first[previous[n]! & 0xff]!;
    tables.push(table);
  }
  return tables;
}

/**
 * CRC-32 (IEEE, as zlib) of bytes[start, end). Table-driven JS, 8 bytes a step: for a ~150-byte journal line
 * as fast as zlib.crc32 with its call and subarray (measured), which Node 20 before 20.15 lacks anyway.
 */
export function crc32Bytes(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = -1;
  let i = start;
  for (const stop = end - 7; i < stop; i += 8) {
    const low = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    crc =
      t7[low & 0xff]! ^
      t6[(low >>> 8) & 0xff]! ^
      t5[(low >>> 16) & 0xff]! ^
      t4[low >>> 24]! ^
      t3[bytes[i + 4]!]! ^
      t2[bytes[i + 5]!]! ^
      t1[bytes[i + 6]!]! ^
      t0[bytes[i + 7]!]!;
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

/**
 * A record the hot path encodes by hand (encodeTextRecordInto): CLI output, whose `data` is a text with
 * optional `cont` and `off`, in that key order (as the supervisor builds it; other keys are not written).
 */
export type TextRecordDraft = Extract<RecordDraft, { kind: 'stdout' | 'stderr' | 'pty' }>;

/** Whether encodeTextRecordInto writes `draft`: stdout, stderr or pty with a string text, and `off` (if any) a safe integer. */
export function isTextRecord(draft: RecordDraft): draft is TextRecordDraft {
  const kind = draft.kind;
  if (kind !== 'stdout' && kind !== 'stderr' && kind !== 'pty') return false;
  const data = draft.data as { text: unknown; cont?: unknown; off?: unknown };
  if (typeof data.text !== 'string') return false;
  if (data.cont !== undefined && typeof data.cont !== 'boolean') return false;
  return data.off === undefined || (Number.isSafeInteger(data.off) && (data.off as number) >= 0);
}

const asciiBytes = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const seqKey = asciiBytes('{"seq":');
const contTrue = asciiBytes(',"cont":true');
const contFalse = asciiBytes(',"cont":false');
const offKey = asciiBytes(',"off":');

/**
 * What comes between the seq and the text's JSON: `,"turnId":…,"ts":…,"kind":"…","data":{"text":`, as
 * UTF-8 and its length in chars. The same for every record of a turn within one millisecond (hundreds of
 * lines), so it is built once for them.
 */
const middle = { turnId: null as string | null, ts: -1, kind: '', bytes: new Uint8Array(0), chars: 0 };

function middleOf(turnId: string | null, ts: number, kind: TextRecordDraft['kind']): typeof middle {
  if (turnId !== middle.turnId || ts !== middle.ts || kind !== middle.kind) {
    const json = `,"turnId":${JSON.stringify(turnId)},"ts":${ts},"kind":"${kind}","data":{"text":`;
    middle.bytes = Buffer.from(json);
    middle.chars = json.length;
    middle.turnId = turnId;
    middle.ts = ts;
    middle.kind = kind;
  }
  return middle;
}

/** Decimal digits of a non-negative safe integer, as JSON.stringify writes it. */
function digitCount(n: number): number {
  let count = 1;
  let rest = n;
  if (rest >= 1e8) {
    count += 8;
    rest = Math.floor(rest / 1e8);
  }
  if (rest >= 1e4) {
    count += 4;
    rest = Math.floor(rest / 1e4);
  }
  if (rest >= 100) {
    count += 2;
    rest = Math.floor(rest / 100);
  }
  return rest >= 10 ? count + 1 : count;
}

/** "00" to "99" as ASCII: two digits per division. */
const digitPairs = asciiBytes(Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).join(''));

function putDigits(target: Uint8Array, offset: number, n: number): number {
  const end = offset + digitCount(n);
  let i = end;
  let rest = n;
  while (rest >= 100) {
    const next = Math.floor(rest / 100);
    const pair = (rest - next * 100) * 2;
    target[--i] = digitPairs[pair + 1]!;
    target[--i] = digitPairs[pair]!;
    rest = next;
  }
  if (rest >= 10) {
    target[--i] = digitPairs[rest * 2 + 1]!;
    target[--i] = digitPairs[rest * 2]!;
  } else {
    target[--i] = 48 + rest;
  }
  return end;
}

function putBytes(target: Uint8Array, offset: number, bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) target[offset + i] = bytes[i]!;
  return offset + bytes.length;
}

/**
 * The length of serializeRecord(seq, ts, draft) for a text record whose text's JSON is `textJson`
 * (the limit on a record's size is in these chars).
 */
export function textRecordChars(seq: number, ts: number, draft: TextRecordDraft, textJson: string): number {
  const data = draft.data as { cont?: boolean; off?: number };
  let chars = seqKey.length + digitCount(seq) + middleOf(draft.turnId, ts, draft.kind).chars + textJson.length + 2;
  if (data.cont !== undefined) chars += data.cont ? contTrue.length : contFalse.length;
  if (data.off !== undefined) chars += offKey.length + digitCount(data.off);
  return chars;
}

/**
 * Frames a text record at target[offset], byte for byte what
 * encodeLineInto(target, offset, serializeRecord(seq, ts, draft)) writes, with
 * `textJson` = JSON.stringify(draft.data.text): the wrapper is written by hand
 * and only the text goes through JSON.stringify and Buffer#write, the bridge's
 * hot path (a CLI's output lines). Property-tested against serializeRecord.
 * Returns the offset after the line; the caller guarantees room for
 * linePrefixBytes + 3 * textRecordChars(…) + 1 bytes.
 */
export function encodeTextRecordInto(target: Buffer, offset: number, seq: number, ts: number, draft: TextRecordDraft, textJson: string): number {
  const data = draft.data as { cont?: boolean; off?: number };
  const start = offset + linePrefixBytes;
  let at = putDigits(target, putBytes(target, start, seqKey), seq);
  const between = middleOf(draft.turnId, ts, draft.kind).bytes;
  target.set(between, at); // one native copy of ~60 bytes
  at += between.length;
  at += target.write(textJson, at);
  if (data.cont !== undefined) at = putBytes(target, at, data.cont ? contTrue : contFalse);
  if (data.off !== undefined) at = putDigits(target, putBytes(target, at, offKey), data.off);
  target[at++] = 0x7d;
  target[at++] = 0x7d;
  writeLinePrefix(target, offset, crc32Bytes(target, start, at));
  target[at] = newline;
  return at + 1;
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
