// fastRecordsFrame against the schema it stands in for: for every frame it
// either defers (null) or returns exactly what recordsFrameSchema returns —
// same values, same key order — and it never accepts what the schema refuses.
import { describe, expect, it } from 'vitest';
import { bridgeFrameSchema, decodeFrame, fastRecordsFrame, recordsFrameSchema } from '../../protocol/v1/index.ts';

const line = (over: Record<string, unknown> = {}, data: Record<string, unknown> = { text: 'hello' }) => ({ seq: 7, turnId: 't1', ts: 1700000000000, kind: 'stdout', data, ...over });
const frame = (...records: unknown[]) => ({ type: 'records', records });

/** Frames as they come off the wire (JSON text), so values like 1e400 and "__proto__" keys are what JSON.parse makes of them. */
const texts: string[] = [
  JSON.stringify(frame(line())),
  JSON.stringify(frame(line({ kind: 'stderr', turnId: null }), line({ seq: 8 }, { text: '', cont: true }), line({ seq: 9 }, { text: 'x', off: 0 }))),
  JSON.stringify(frame(line({}, { text: 'x', cont: false, off: 12 }))),
  JSON.stringify(frame(line({ turnId: 'a'.repeat(200) }))),
  JSON.stringify(frame(line({ seq: 2 ** 53 - 1 }))),
  // refused by the schema
  JSON.stringify(frame()),
  JSON.stringify(frame(line({ seq: 0 }))),
  JSON.stringify(frame(line({ seq: 1.5 }))),
  JSON.stringify(frame(line({ seq: 2 ** 53 }))),
  JSON.stringify(frame(line({ seq: '7' }))),
  JSON.stringify(frame(line({ turnId: '' }))),
  JSON.stringify(frame(line({ turnId: 'a'.repeat(201) }))),
  JSON.stringify(frame(line({ ts: 'now' }))),
  JSON.stringify(frame(line({}, { text: 5 }))),
  JSON.stringify(frame(line({}, { text: 'x', cont: 'yes' }))),
  JSON.stringify(frame(line({}, { text: 'x', off: -1 }))),
  JSON.stringify(frame(line({}, { text: 'x', off: 1.5 }))),
  JSON.stringify(frame(line({}, { cont: true }))),
  JSON.stringify(frame(line({ data: null }))),
  JSON.stringify(frame(line({ data: ['x'] }))),
  JSON.stringify(frame(null)),
  JSON.stringify(frame([line()])),
  JSON.stringify({ type: 'records', records: 'x' }),
  '{"type":"records","records":[{"seq":7,"turnId":"t1","ts":1e400,"kind":"stdout","data":{"text":"x"}}]}',
  '{"type":"records","records":[{"seq":-0,"turnId":"t1","ts":1,"kind":"stdout","data":{"text":"x"}}]}',
  // accepted by the schema, but not in the fast path's exact shape: it must defer
  JSON.stringify({ records: [line()], type: 'records' }),
  JSON.stringify({ type: 'records', records: [line()], extra: 1 }),
  JSON.stringify(frame({ ...line(), extra: 1 })),
  JSON.stringify(frame({ kind: 'stdout', seq: 7, turnId: 't1', ts: 1, data: { text: 'x' } })),
  JSON.stringify(frame(line({}, { off: 3, text: 'x' }))),
  JSON.stringify(frame(line({}, { text: 'x', extra: 1 }))),
  JSON.stringify(frame(line({}, { text: 'x', off: 1, cont: true }))),
  '{"type":"records","records":[{"seq":7,"turnId":"t1","ts":1,"kind":"stdout","data":{"text":"x","__proto__":{}}}]}',
  '{"type":"records","records":[{"seq":-0,"turnId":"t1","ts":-0,"kind":"stdout","data":{"text":"x","off":-0}}]}',
  JSON.stringify(frame(line(), { seq: 8, turnId: 't1', ts: 1, kind: 'exit', data: { pid: 1, code: 0, signal: null } })),
  JSON.stringify(frame({ seq: 8, turnId: 't1', ts: 1, kind: 'pty', data: { text: 'x' } })),
  JSON.stringify({ type: 'replay-end', to: 3 }),
];

describe('fastRecordsFrame', () => {
  it.each(texts.map((text) => [text]))('agrees with recordsFrameSchema: %s', (text) => {
    const json = JSON.parse(text);
    const fast = fastRecordsFrame(json);
    const schema = recordsFrameSchema.safeParse(JSON.parse(text));
    if (fast === null) return;
    expect(schema.success).toBe(true);
    expect(JSON.stringify(fast)).toBe(JSON.stringify(schema.data));
    expect(fast).toStrictEqual(schema.data);
  });

  it('takes the common frames (so decodeFrame skips zod for them)', () => {
    expect(fastRecordsFrame(JSON.parse(texts[0]!))).not.toBeNull();
    expect(fastRecordsFrame(JSON.parse(texts[1]!))).not.toBeNull();
    expect(fastRecordsFrame(JSON.parse(texts[2]!))).not.toBeNull();
  });

  it('decodeFrame with the fast path decodes every frame as without it', () => {
    for (const text of texts) {
      const plain = decodeFrame(text, bridgeFrameSchema, 1 << 20);
      const fast = decodeFrame(text, bridgeFrameSchema, 1 << 20, undefined, fastRecordsFrame);
      expect(fast).toStrictEqual(plain);
    }
  });
});
