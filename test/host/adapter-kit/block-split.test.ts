// A text or reasoning block is never left open across a part the UI shows apart
// (host/adapter-kit/block-split.ts): the kit ends it before that part, drops the
// adapter's later end, and re-opens it (id `<id>.<seq>`) when the adapter goes on
// with it; through a snapshot the same. The UI-level proof: pi's compact-mid-turn
// turn, every cut folded (test/host/adapters/pi.test.ts).
import { describe, expect, it } from 'vitest';
import { BlockSplit } from '../../../host/adapter-kit/block-split.ts';
import type { HarnessV1StreamPart as Part } from '../../../protocol/harness-v1/stream-part.ts';

const compaction: Part = { type: 'compaction', trigger: 'auto', summary: 'earlier turns' } as Part;
const call: Part = { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: '{}', providerExecuted: true };
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('BlockSplit', () => {
  it('a block open across a compaction ends before it; the adapter\'s later end is dropped', () => {
    const split = new BlockSplit();
    const parts = [
      ...split.apply([{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'a' }], 1),
      ...split.apply([compaction], 2),
      ...split.apply([{ type: 'text-end', id: 't' }, { type: 'finish-step' } as Part], 3),
    ];
    expect(parts.map((part) => `${part.type}${'id' in part ? `:${part.id}` : ''}`)).toEqual(['text-start:t', 'text-delta:t', 'text-end:t', 'compaction', 'finish-step']);
  });

  it('text and reasoning open across a tool call, then continued: ended before it, re-opened after it with ids derived from the record', () => {
    const split = new BlockSplit();
    const parts = [
      ...split.apply([{ type: 'reasoning-start', id: 'r', harnessMetadata: { x: { y: 1 } } }, { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'a' }], 1),
      ...split.apply([call], 2),
      ...split.apply([{ type: 'text-delta', id: 't', delta: 'b' }, { type: 'reasoning-delta', id: 'r', delta: 'c' }], 3),
      ...split.apply([{ type: 'text-end', id: 't' }, { type: 'reasoning-end', id: 'r' }], 4),
    ];
    expect(parts).toEqual([
      { type: 'reasoning-start', id: 'r', harnessMetadata: { x: { y: 1 } } },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-end', id: 't' },
      call,
      { type: 'text-start', id: 't.3' },
      { type: 'text-delta', id: 't.3', delta: 'b' },
      { type: 'reasoning-start', id: 'r.3', harnessMetadata: { x: { y: 1 } } },
      { type: 'reasoning-delta', id: 'r.3', delta: 'c' },
      { type: 'text-end', id: 't.3' },
      { type: 'reasoning-end', id: 'r.3' },
    ]);
  });

  it('through a snapshot (JSON) at every point: the same parts as uninterrupted', () => {
    const batches: Part[][] = [
      [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'a' }],
      [call],
      [{ type: 'text-delta', id: 't', delta: 'b' }],
      [compaction],
      [{ type: 'text-end', id: 't' }],
    ];
    const whole = new BlockSplit();
    const want = batches.flatMap((batch, i) => whole.apply(batch, i + 1));
    for (let k = 0; k <= batches.length; k++) {
      const head = new BlockSplit();
      const got = batches.slice(0, k).flatMap((batch, i) => head.apply(batch, i + 1));
      const resumed = new BlockSplit(viaJson(head.snapshot()));
      got.push(...batches.slice(k).flatMap((batch, i) => resumed.apply(batch, k + i + 1)));
      expect(got, `cut after ${k}`).toEqual(want);
    }
  });
});
