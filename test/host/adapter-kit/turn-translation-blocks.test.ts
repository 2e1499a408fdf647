// The kit's rule at a slice boundary (docs/guarantees.md#ui), part by part: a
// slice re-opens a block an earlier slice left open before the first part it
// delivers (before another part, a delta, or its end), from the snapshot or by replaying the turn;
// a snapshot that cannot say which blocks are open is declined (the session
// replays the turn). The UI-level proof is test/host/ui-every-cut.test.ts.
import { describe, expect, it } from 'vitest';
import { TurnTranslation, type TranslationSnapshot } from '../../../host/adapter-kit/turn-translation.ts';
import { journalOfLines } from '../../../host/testing/every-cut.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter } from '../../fixtures/fixture-adapter.ts';

const line = (value: unknown) => JSON.stringify(value);
const records = journalOfLines([
  line({ type: 'start', turn: 1, text: 'b' }),
  ...[0, 1, 2].map((n) => line({ type: 'delta', turn: 1, n, text: `b #${n}` })),
  line({ type: 'result', turn: 1, text: 'b', lines: 3 }),
]);
const turn = { turnId: 'turn-1', rerun: false };
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** The live translation's snapshot after record index k (k records pushed). */
function snapshotAfter(k: number): TranslationSnapshot {
  const live = new TurnTranslation(fixtureAdapter(), turn, 0, new Set());
  for (const record of records.slice(0, k)) live.push(record);
  return viaJson(live.snapshot(k === 0 ? 0 : records[k - 1]!.seq)!);
}

const types = (parts: HarnessV1StreamPart[]) => parts.map((part) => part.type);

describe('TurnTranslation: blocks open at a cut', () => {
  it('mid-block: the restored slice re-sends the text-start (same part) first, once', () => {
    const k = 4; // turn-start, start, delta 0, delta 1
    const snapshot = snapshotAfter(k);
    expect(snapshot.openBlocks).toEqual([{ type: 'text-start', id: 'text-3' }]);
    const slice = TurnTranslation.restore(fixtureAdapter(), turn, snapshot, new Set())!;
    const parts = records.slice(k).flatMap((record) => slice.push(record));
    expect(types(parts)).toEqual(['text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(parts[0]).toEqual({ type: 'text-start', id: 'text-3' });
  });

  it('mid-block, replayed from the turn start (no snapshot): the same slice', () => {
    const k = 4;
    const restored = TurnTranslation.restore(fixtureAdapter(), turn, snapshotAfter(k), new Set())!;
    const replayed = new TurnTranslation(fixtureAdapter(), turn, records[k - 1]!.seq, new Set());
    expect(records.flatMap((record) => replayed.push(record))).toEqual(records.slice(k).flatMap((record) => restored.push(record)));
  });

  it('cut right before the end: the block is re-opened and closed (its UI part ends done), nothing else repeats', () => {
    const k = 5; // all deltas delivered; the result line closes the text
    const slice = TurnTranslation.restore(fixtureAdapter(), turn, snapshotAfter(k), new Set())!;
    const parts = records.slice(k).flatMap((record) => slice.push(record));
    expect(types(parts)).toEqual(['text-start', 'text-end', 'finish-step', 'finish']);
  });

  it('no block open at the cut: nothing is re-sent', () => {
    const k = 2; // turn-start, start line: no text yet
    const snapshot = snapshotAfter(k);
    expect(snapshot.openBlocks).toEqual([]);
    const slice = TurnTranslation.restore(fixtureAdapter(), turn, snapshot, new Set())!;
    expect(types(records.slice(k).flatMap((record) => slice.push(record))).filter((type) => type === 'text-start')).toHaveLength(1);
  });

  it("a snapshot without openBlocks (an earlier version's) is declined: the session replays the turn", () => {
    const { openBlocks: _open, ...old } = snapshotAfter(4);
    expect(TurnTranslation.restore(fixtureAdapter(), turn, old, new Set())).toBeNull();
  });
});

// A translator whose stdout lines are the parts themselves: a tool's input block ends, then its call comes.
const partsAdapter = {
  ...fixtureAdapter(),
  translator: {
    init: () => ({}),
    step: (state: object, record: (typeof records)[number]) => ({ state, parts: record.kind === 'stdout' ? [JSON.parse(record.data.text) as HarnessV1StreamPart] : [] }),
    snapshot: () => ({}),
    restore: () => ({}),
  },
} as unknown as ReturnType<typeof fixtureAdapter>;
const toolParts: HarnessV1StreamPart[] = [
  { type: 'tool-input-start', id: 'call-1', toolName: 'bash', providerExecuted: true },
  { type: 'tool-input-delta', id: 'call-1', delta: '{"command":"ls"}' },
  { type: 'tool-input-end', id: 'call-1' },
  { type: 'tool-call', toolCallId: 'call-1', toolName: 'bash', input: '{"command":"ls"}', providerExecuted: true },
  { type: 'tool-result', toolCallId: 'call-1', toolName: 'bash', result: 'ok', isError: false },
];
const toolRecords = journalOfLines(toolParts.map(line));

describe('TurnTranslation: a tool input ended before the cut, its call after', () => {
  const k = 4; // turn-start, input start, delta, end: the call comes after the cut
  const live = new TurnTranslation(partsAdapter, turn, 0, new Set());
  for (const record of toolRecords.slice(0, k)) live.push(record);
  const snapshot = viaJson(live.snapshot(toolRecords[k - 1]!.seq)!);

  it('the slice re-announces the input block (start, end) right before the call, so the agent types the part as the uninterrupted turn does', () => {
    expect(snapshot.inputsAwaitingCall).toEqual([toolParts[0]]);
    const slice = TurnTranslation.restore(partsAdapter, turn, snapshot, new Set())!;
    const parts = toolRecords.slice(k).flatMap((record) => slice.push(record));
    expect(parts.slice(0, 4)).toEqual([toolParts[0], { type: 'tool-input-end', id: 'call-1' }, toolParts[3], toolParts[4]]);
  });

  it('replayed from the turn start: the same slice; a cut after the call re-announces nothing', () => {
    const restored = TurnTranslation.restore(partsAdapter, turn, snapshot, new Set())!;
    const replayed = new TurnTranslation(partsAdapter, turn, toolRecords[k - 1]!.seq, new Set());
    expect(toolRecords.flatMap((record) => replayed.push(record))).toEqual(toolRecords.slice(k).flatMap((record) => restored.push(record)));
    const afterCall = new TurnTranslation(partsAdapter, turn, toolRecords[k]!.seq, new Set());
    expect(types(toolRecords.flatMap((record) => afterCall.push(record)))).not.toContain('tool-input-start');
  });
});

describe('TurnTranslation: CLI calls kept for a later approval request', () => {
  const callRecord = (n: number): HarnessV1StreamPart => ({ type: 'tool-call', toolCallId: `c-${n}`, toolName: 'bash', input: '{}', providerExecuted: true });

  it('an approval request for a call the slice did not show comes with that call; a call with a result is let go', () => {
    const parts: HarnessV1StreamPart[] = [callRecord(1), callRecord(2), { type: 'tool-result', toolCallId: 'c-2', toolName: 'bash', result: 'ok' }, { type: 'tool-approval-request', approvalId: 'a-1', toolCallId: 'c-1' }];
    const recs = journalOfLines(parts.map(line));
    const k = 4; // turn-start and the three parts before the request
    const live = new TurnTranslation(partsAdapter, turn, 0, new Set());
    for (const record of recs.slice(0, k)) live.push(record);
    const snapshot = viaJson(live.snapshot(recs[k - 1]!.seq)!);
    expect(snapshot.cliCalls).toEqual([parts[0]]);
    const slice = TurnTranslation.restore(partsAdapter, turn, snapshot, new Set())!;
    expect(recs.slice(k).flatMap((record) => slice.push(record)).slice(0, 2)).toEqual([parts[0], parts[3]]);
  });

  it('calls whose result never comes do not pile up: the snapshot keeps the last 32', () => {
    const recs = journalOfLines(Array.from({ length: 40 }, (_, n) => line(callRecord(n))));
    const live = new TurnTranslation(partsAdapter, turn, 0, new Set());
    for (const record of recs) live.push(record);
    const kept = viaJson(live.snapshot(recs.at(-1)!.seq)!).cliCalls as Array<{ toolCallId: string }>;
    expect(kept.map((part) => part.toolCallId)).toEqual(Array.from({ length: 32 }, (_, n) => `c-${n + 8}`));
  });
});
