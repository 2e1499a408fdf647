// The part writer's bookkeeping for translators (docs/writing-an-adapter.md): blocks keyed by the
// CLI's own id, streaming tool inputs, builtin tool calls with their file-change, and steps whose
// usage sums into the turn's total. Each check writes through one writer and compares the parts; the
// state after each call round-trips through streamStateSchema, as a translator snapshot would.
import { describe, expect, it } from 'vitest';
import { createStreamState, partWriter, type StreamState } from '../../../host/adapter-kit/part-writer.ts';
import { streamStateSchema } from '../../../host/adapter-kit/snapshot.ts';
import { usageFromCounts } from '../../../host/adapter-kit/usage.ts';
import type { HarnessV1StreamPart as Part } from '../../../protocol/harness-v1/stream-part.ts';

/** A writer whose state is replaced by its snapshot copy after every call (what a suspended turn resumes from). */
function writer() {
  let state: StreamState = createStreamState();
  const parts: Part[] = [];
  const call = <K extends keyof ReturnType<typeof partWriter>>(name: K, ...args: Parameters<ReturnType<typeof partWriter>[K]>) => {
    const out = partWriter(state, parts);
    const result = (out[name] as (...a: unknown[]) => unknown)(...args);
    state = streamStateSchema.parse(JSON.parse(JSON.stringify(state)));
    return result;
  };
  return { call, parts, state: () => state };
}

describe('part writer bookkeeping', () => {
  it('blocks keyed by the CLI id: a delta for another block is dropped; endBlock adds the whole text only to a block that did not stream', () => {
    const w = writer();
    w.call('open', 'text', 't1', 'item-a');
    w.call('delta', 'He', 'item-a');
    w.call('delta', 'lost', 'item-b');
    w.call('delta', 'llo', 'item-a');
    expect(w.call('isOpen', 'item-a')).toBe(true);
    w.call('endBlock', 'text', 't1', 'item-a', 'Hello');
    w.call('endBlock', 'reasoning', 'r2', 7, 'thought whole');
    expect(w.parts.filter((p) => p.type !== 'stream-start')).toEqual([
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'He' },
      { type: 'text-delta', id: 't1', delta: 'llo' },
      { type: 'text-end', id: 't1' },
      { type: 'reasoning-start', id: 'r2' },
      { type: 'reasoning-delta', id: 'r2', delta: 'thought whole' },
      { type: 'reasoning-end', id: 'r2' },
    ]);
    expect(w.state().block).toBeNull();
  });

  it('streaming tool inputs interleave by key; a piece or end for a key not streaming yields nothing; the state holds nothing after', () => {
    const w = writer();
    w.call('inputStart', 0, 'call-a', 'bash');
    w.call('inputStart', 1, 'call-b', 'write');
    w.call('inputDelta', 1, '{"path"');
    w.call('inputDelta', 0, '{"command"');
    w.call('inputDelta', 2, 'nobody');
    w.call('inputEnd', 0);
    w.call('inputEnd', 0);
    w.call('inputEnd', 1);
    expect(w.parts.filter((p) => p.type !== 'stream-start')).toEqual([
      { type: 'tool-input-start', id: 'call-a', toolName: 'bash', providerExecuted: true },
      { type: 'tool-input-start', id: 'call-b', toolName: 'write', providerExecuted: true },
      { type: 'tool-input-delta', id: 'call-b', delta: '{"path"' },
      { type: 'tool-input-delta', id: 'call-a', delta: '{"command"' },
      { type: 'tool-input-end', id: 'call-a' },
      { type: 'tool-input-end', id: 'call-b' },
    ]);
    expect(w.state().inputs).toBeUndefined();
  });

  it('a remembered call gets its result under its name; a file tool that succeeded brings file-change, one that failed does not; an unknown id yields nothing', () => {
    const w = writer();
    w.call('toolCall', { toolCallId: 'c1', toolName: 'write', input: { path: 'a.txt' }, path: 'a.txt', fileEvent: 'create' });
    w.call('toolCall', { toolCallId: 'c2', toolName: 'edit', input: undefined, nativeName: 'Edit', path: 'b.txt', fileEvent: 'modify' });
    expect(w.call('call', 'c1')).toEqual({ toolName: 'write', path: 'a.txt', fileEvent: 'create' });
    expect(w.call('toolResult', 'c1', { result: 'ok', isError: false })).toMatchObject({ toolName: 'write' });
    w.call('toolResult', 'c2', { result: 'no match', isError: true });
    expect(w.call('toolResult', 'c1', { result: 'again', isError: false })).toBeUndefined();
    expect(w.parts.filter((p) => p.type !== 'stream-start')).toEqual([
      { type: 'tool-call', toolCallId: 'c1', toolName: 'write', input: '{"path":"a.txt"}', providerExecuted: true, nativeName: 'write' },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'edit', input: '{}', providerExecuted: true, nativeName: 'Edit' },
      { type: 'tool-result', toolCallId: 'c1', toolName: 'write', result: 'ok', isError: false },
      { type: 'file-change', event: 'create', path: 'a.txt' },
      { type: 'tool-result', toolCallId: 'c2', toolName: 'edit', result: 'no match', isError: true },
    ]);
    expect(w.state().calls).toBeUndefined();
  });

  it('steps: a held step ends as tool-calls when the next is held, with the turn reason when released; finish reports the summed total', () => {
    const w = writer();
    w.call('endStep', { unified: 'tool-calls', raw: 'toolUse' }, { noCache: 10, output: 2 });
    w.call('holdStep', { noCache: 5, cacheRead: 100, output: 3 });
    w.call('holdStep', { noCache: 1, output: 4 });
    w.call('releaseStep', { unified: 'stop', raw: undefined });
    w.call('releaseStep');
    w.call('finish', { unified: 'stop', raw: 'completed' });
    const steps = w.parts.filter((p) => p.type === 'finish-step');
    expect(steps.map((p) => [p.finishReason.unified, p.usage.outputTokens.total])).toEqual([
      ['tool-calls', 2],
      ['tool-calls', 3],
      ['stop', 4],
    ]);
    const finish = w.parts.at(-1);
    expect(finish).toEqual({ type: 'finish', finishReason: { unified: 'stop', raw: 'completed' }, totalUsage: usageFromCounts({ noCache: 16, cacheRead: 100, output: 9 }) });
  });
});
