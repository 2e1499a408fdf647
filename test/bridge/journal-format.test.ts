// journal-format: crc32, the one-pass UTF-8 + crc line encoder, record
// serialization, line checks. Equivalence claims are property-tested.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';
import {
  crc32Bytes,
  decodeHeaderLine,
  encodeHeaderLine,
  encodeLine,
  encodeLineInto,
  encodeTextRecordInto,
  hasValidCrc,
  isTextRecord,
  linePrefixBytes,
  maxLineBytes,
  readRecordSeq,
  serializeRecord,
  textRecordChars,
} from '../../protocol/journal/line-format.ts';

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const anyText = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: codeUnit }), fc.string());

describe('crc32Bytes', () => {
  it('matches the standard check value and zlib', async () => {
    expect(crc32Bytes(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32Bytes(Buffer.alloc(0))).toBe(0);
    const zlib = (await import('node:zlib')) as { crc32?: (data: Uint8Array) => number };
    if (zlib.crc32 === undefined) return; // Node 18 has none: the check value above stands alone
    const crc32 = zlib.crc32;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(8), (bytes, skip) => {
        const start = Math.min(skip, bytes.length);
        expect(crc32Bytes(bytes, start)).toBe(crc32(bytes.subarray(start)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('encodeLineInto', () => {
  it('writes exactly Buffer.from(json) framed by its crc32 and a newline', () => {
    fc.assert(
      fc.property(anyText, fc.nat(16), (json, offset) => {
        const target = Buffer.alloc(offset + maxLineBytes(json));
        const end = encodeLineInto(target, offset, json);
        const utf8 = Buffer.from(json, 'utf8');
        expect(end - offset).toBe(linePrefixBytes + utf8.length + 1);
        const body = target.subarray(offset + linePrefixBytes, end - 1);
        expect(body.equals(utf8)).toBe(true);
        expect(target.toString('latin1', offset, offset + 9)).toBe(`${crc32Bytes(utf8).toString(16).padStart(8, '0')}\t`);
        expect(target[end - 1]).toBe(0x0a);
        // hasValidCrc refuses JSON shorter than `{}`, which no record is.
        expect(hasValidCrc(target, offset, end - 1)).toBe(utf8.length >= 2);
      }),
      { numRuns: 2000 },
    );
  });

  it('every single-bit flip in a line fails the crc check', () => {
    const line = encodeLine('{"seq":1,"turnId":"t","ts":1,"kind":"stdout","data":{"text":"héllo 🌍"}}');
    const body = line.subarray(0, line.length - 1);
    for (let bit = 0; bit < body.length * 8; bit++) {
      const copy = Buffer.from(body);
      copy[bit >> 3]! ^= 1 << (bit & 7);
      expect(hasValidCrc(copy, 0, copy.length), `bit ${bit}`).toBe(false);
    }
  });
});

describe('serializeRecord', () => {
  it('equals JSON.stringify of {seq, turnId, ts, kind, data}', () => {
    const kinds = ['stdout', 'stderr', 'stdin', 'pty', 'tool-call', 'turn-end'] as const;
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.option(fc.string({ unit: 'binary' }), { nil: null }),
        fc.constantFrom(...kinds),
        fc.jsonValue(),
        (seq, ts, turnId, kind, data) => {
          const draft = { turnId, kind, data } as unknown as RecordDraft;
          expect(serializeRecord(seq, ts, draft)).toBe(JSON.stringify({ seq, turnId, ts, kind, data }));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('encodeTextRecordInto', () => {
  /** Text records as the supervisor builds them: `data` keys in the order text, cont, off. */
  const textDraft = fc.record({
    kind: fc.constantFrom('stdout', 'stderr', 'pty'),
    turnId: fc.option(fc.oneof(anyText, fc.constantFrom('t1', 'turn-ü', 'r"1\\')), { nil: null }),
    text: anyText,
    cont: fc.option(fc.boolean(), { nil: undefined }),
    off: fc.option(fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER)), { nil: undefined }),
  });
  const safeSeq = fc.oneof(fc.nat(), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.constantFrom(0, 9, 10, 99, 100, 1e15));

  it('writes the very line encodeLineInto(serializeRecord(…)) does, within the room it asks for', () => {
    fc.assert(
      fc.property(textDraft, safeSeq, safeSeq, fc.nat(16), (t, seq, ts, offset) => {
        const data: { text: string; cont?: boolean; off?: number } = { text: t.text };
        if (t.cont !== undefined && t.kind !== 'pty') data.cont = t.cont;
        if (t.off !== undefined) data.off = t.off;
        const draft = { kind: t.kind, turnId: t.turnId, data } as RecordDraft;
        expect(isTextRecord(draft)).toBe(true);
        if (!isTextRecord(draft)) return;
        const json = serializeRecord(seq, ts, draft);
        const textJson = JSON.stringify(t.text);
        const chars = textRecordChars(seq, ts, draft, textJson);
        expect(chars).toBe(json.length);
        const room = linePrefixBytes + 3 * chars + 1;
        const fast = Buffer.alloc(offset + room, 0xee);
        const end = encodeTextRecordInto(fast, offset, seq, ts, draft, textJson);
        expect(end - offset).toBeLessThanOrEqual(room);
        const general = Buffer.alloc(offset + maxLineBytes(json), 0xee);
        const generalEnd = encodeLineInto(general, offset, json);
        expect(fast.subarray(0, end).equals(general.subarray(0, generalEnd))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('takes only output records with a string text and a safe integer offset', () => {
    const text = (kind: string, data: unknown) => isTextRecord({ kind, turnId: null, data } as unknown as RecordDraft);
    expect(text('stdout', { text: 'a' })).toBe(true);
    expect(text('pty', { text: 'a', off: 3 })).toBe(true);
    expect(text('stdin', { text: 'a' })).toBe(false);
    expect(text('turn-end', { reason: 'exit' })).toBe(false);
    expect(text('stdout', { text: 1 })).toBe(false);
    expect(text('stdout', { text: 'a', off: -1 })).toBe(false);
    expect(text('stdout', { text: 'a', off: 1.5 })).toBe(false);
    expect(text('stdout', { text: 'a', off: 2 ** 53 })).toBe(false);
    expect(text('stderr', { text: 'a', cont: 'yes' })).toBe(false);
  });
});

describe('line checks', () => {
  it('reads the seq of a well-formed record line and refuses others', () => {
    const seqOf = (json: string): number => {
      const line = encodeLine(json);
      return readRecordSeq(line, 0, line.length - 1);
    };
    expect(seqOf('{"seq":42,"turnId":null,"ts":1,"kind":"stdout","data":{"text":""}}')).toBe(42);
    expect(seqOf('{"seq":042,"turnId":null}')).toBe(-1);
    expect(seqOf('{"seq":,"turnId":null}')).toBe(-1);
    expect(seqOf('{"ts":1,"seq":4}')).toBe(-1);
    expect(seqOf('{"seq":4,"x":1')).toBe(-1);
  });

  it('round-trips the header and refuses a non-header line', () => {
    const header = encodeHeaderLine('abc', 7);
    expect(decodeHeaderLine(header, 0, header.length - 1)).toEqual({ type: 'journal-header', format: 1, journalId: 'abc', createdAt: 7 });
    const other = encodeLine('{"type":"something-else"}');
    expect(decodeHeaderLine(other, 0, other.length - 1)).toBeNull();
    const notJson = encodeLine('{not json');
    expect(decodeHeaderLine(notJson, 0, notJson.length - 1)).toBeNull();
  });
});
