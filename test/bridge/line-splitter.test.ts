// Raw bytes into the line splitter: chunk boundaries at every offset, inside
// multi-byte chars, CRLF across chunks, the byte cap and its cont pieces.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter, utf8Cut } from '../../bridge/supervisor/line-splitter.ts';

type Piece = { text: string; cont: boolean };

function run(cap: number, chunks: Buffer[], end = true): Piece[] {
  const out: Piece[] = [];
  const s = new LineSplitter(cap, (text, cont) => out.push({ text, cont }));
  for (const c of chunks) s.push(c);
  if (end) s.end();
  return out;
}

/** Groups pieces into lines (a line is pieces up to and including the first cont:false). */
function lines(pieces: Piece[]): string[][] {
  const result: string[][] = [];
  let cur: string[] = [];
  for (const p of pieces) {
    cur.push(p.text);
    if (!p.cont) {
      result.push(cur);
      cur = [];
    }
  }
  expect(cur, 'stream ended inside a cont sequence').toEqual([]);
  return result;
}

/** The model: split on \n, strip one \r before each \n, keep an unterminated tail as is. */
function expectedLines(bytes: Buffer): string[] {
  const text = bytes.toString('utf8');
  const parts = text.split('\n');
  const tail = parts.pop()!;
  const out = parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (tail !== '') out.push(tail);
  return out;
}

function checkAgainstModel(cap: number, input: Buffer, chunks: Buffer[]): void {
  const pieces = run(cap, chunks);
  const grouped = lines(pieces);
  expect(grouped.map((g) => g.join(''))).toEqual(expectedLines(input));
  for (const g of grouped) {
    if (g.length > 1) for (const piece of g) expect(piece.length).toBeGreaterThan(0);
  }
  for (const p of pieces) {
    expect(Buffer.byteLength(p.text)).toBeLessThanOrEqual(cap);
    expect(p.text).not.toContain('\uFFFD');
  }
}

function splitAt(buf: Buffer, offsets: number[]): Buffer[] {
  const out: Buffer[] = [];
  let prev = 0;
  for (const o of [...offsets].sort((a, b) => a - b)) {
    out.push(buf.subarray(prev, o));
    prev = o;
  }
  out.push(buf.subarray(prev));
  return out;
}

describe('LineSplitter', () => {
  it('splits on \\n only and emits a final partial line at end()', () => {
    const input = Buffer.from('a\nbb\n\nc\u2028d\u2029e\rf\ntail');
    expect(run(1024, [input])).toEqual([
      { text: 'a', cont: false },
      { text: 'bb', cont: false },
      { text: '', cont: false },
      { text: 'c\u2028d\u2029e\rf', cont: false },
      { text: 'tail', cont: false },
    ]);
    expect(run(1024, [input], false).map((p) => p.text)).toEqual(['a', 'bb', '', 'c\u2028d\u2029e\rf']);
  });

  it('strips the \\r of CRLF, also when \\r and \\n arrive in different chunks', () => {
    expect(run(64, [Buffer.from('one\r'), Buffer.from('\ntwo\r\n')]).map((p) => p.text)).toEqual(['one', 'two']);
    expect(run(64, [Buffer.from('lone\r')]).map((p) => p.text)).toEqual(['lone\r']);
  });

  it('gives the same lines for a chunk boundary at every offset of the input', () => {
    const input = Buffer.from('{"type":"x","t":"héllo €uro 😀"}\r\nplain line\n\nlast é');
    const whole = run(1024, [input]);
    for (let i = 0; i <= input.length; i++) {
      expect(run(1024, splitAt(input, [i])), `split at ${i}`).toEqual(whole);
    }
    const bytewise = Array.from({ length: input.length }, (_, i) => input.subarray(i, i + 1));
    expect(run(1024, bytewise)).toEqual(whole);
  });

  it('cuts an over-long line into cap-sized cont pieces and the last piece without cont', () => {
    const line = 'x'.repeat(25);
    expect(run(10, [Buffer.from(line + '\n')])).toEqual([
      { text: 'x'.repeat(10), cont: true },
      { text: 'x'.repeat(10), cont: true },
      { text: 'x'.repeat(5), cont: false },
    ]);
    expect(run(10, [Buffer.from('y'.repeat(10) + '\n')])).toEqual([{ text: 'y'.repeat(10), cont: false }]);
    expect(run(10, [Buffer.from('z'.repeat(11) + '\n')])).toEqual([
      { text: 'z'.repeat(10), cont: true },
      { text: 'z', cont: false },
    ]);
  });

  it('keeps a line of exactly cap bytes + CRLF whole when the \\r and \\n are split (no empty piece)', () => {
    const body = 'q'.repeat(16);
    for (let i = 0; i <= 18; i++) {
      const input = Buffer.from(body + '\r\n');
      expect(run(16, splitAt(input, [i])), `split at ${i}`).toEqual([{ text: body, cont: false }]);
    }
  });

  it('never cuts inside a multi-byte char, whatever the cap and the chunking', () => {
    for (const ch of ['é', '€', '😀']) {
      const line = ch.repeat(40) + 'a' + ch.repeat(7);
      const input = Buffer.from(line + '\n' + line);
      for (const cap of [4, 5, 6, 7, 9, 16]) {
        for (let i = 0; i <= input.length; i += 3) checkAgainstModel(cap, input, splitAt(input, [i, Math.min(input.length, i + 5)]));
      }
    }
  });

  it('matches the model for random text, caps and chunkings (property)', () => {
    const alphabet = fc.constantFrom('a', 'b', ' ', '\n', '\r', 'é', '€', '😀', '\u2028', '{', '"');
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 200 }).map((a) => Buffer.from(a.join(''))),
        fc.integer({ min: 4, max: 40 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (input, cap, cuts) => {
          checkAgainstModel(cap, input, splitAt(input, cuts.map((c) => c % (input.length + 1))));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('does not throw on invalid UTF-8 (decoded with replacement chars)', () => {
    const bad = Buffer.from([0x61, 0x80, 0x80, 0x80, 0x80, 0x80, 0xff, 0x0a]);
    const pieces = run(4, [bad]);
    expect(pieces.at(-1)!.cont).toBe(false);
    expect(pieces.every((p) => Buffer.byteLength(p.text) <= 4 * 3)).toBe(true);
  });

  it('holds at most about one cap of an unterminated line', () => {
    const s = new LineSplitter(1000, () => {});
    for (let i = 0; i < 100; i++) s.push(Buffer.alloc(700, 0x61));
    expect(s.pendingBytes).toBeLessThanOrEqual(1001);
  });

  it('rejects a cap that cannot hold a 4-byte char', () => {
    expect(() => new LineSplitter(3, () => {})).toThrow(RangeError);
  });

  it('utf8Cut backs off to a char start', () => {
    const b = Buffer.from('a😀b');
    expect(utf8Cut(b, 0, 2)).toBe(1);
    expect(utf8Cut(b, 0, 4)).toBe(1);
    expect(utf8Cut(b, 0, 5)).toBe(5);
  });
});
