import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { streamPartSchema, type HarnessV1StreamPart } from '../../protocol/harness-v1/index.ts';

type Inferred = z.infer<typeof streamPartSchema>;

describe('HarnessV1StreamPart zod mirror', () => {
  it('type-checks against the declared contract in both directions', () => {
    // Compile-time: each function only type-checks if the types are mutually assignable.
    const toDeclared = (part: Inferred): HarnessV1StreamPart => part;
    const toInferred = (part: HarnessV1StreamPart): Inferred => part;
    expect(toInferred(toDeclared({ type: 'raw', rawValue: 1 }))).toEqual({ type: 'raw', rawValue: 1 });
  });

  it('accepts a representative part of every type', () => {
    const usage = {
      inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 5, text: 5, reasoning: undefined },
    };
    const parts: HarnessV1StreamPart[] = [
      { type: 'stream-start', warnings: [{ type: 'other', message: 'rerun' }], modelId: 'm' },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'hi' },
      { type: 'text-end', id: 't1' },
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'hmm' },
      { type: 'reasoning-end', id: 'r1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: '{}', nativeName: 'Bash', providerExecuted: true },
      { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
      { type: 'tool-result', toolCallId: 'c1', toolName: 'bash', result: { out: 'x' }, isError: false },
      { type: 'finish-step', finishReason: { unified: 'stop', raw: 'end_turn' }, usage },
      { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, totalUsage: usage },
      { type: 'file-change', event: 'create', path: '/a' },
      { type: 'compaction', trigger: 'manual', summary: 's' },
      { type: 'error', error: new Error('x') },
      { type: 'raw', rawValue: { any: 1 } },
    ];
    for (const part of parts) expect(streamPartSchema.safeParse(part).success, part.type).toBe(true);
  });

  it('rejects a part with an unknown type or a missing field', () => {
    expect(streamPartSchema.safeParse({ type: 'text-delta', id: 't' }).success).toBe(false);
    expect(streamPartSchema.safeParse({ type: 'nope' }).success).toBe(false);
  });
});
