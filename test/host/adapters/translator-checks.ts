// Checks every adapter's translator tests share: the stream shape every turn
// must have (messages say which rule broke), id normalisation for comparing
// translations of differently split journals, and the snapshot property
// (translate, snapshot, restore in a fresh translator, translate the rest).
import type { JSONValue } from '@ai-sdk/provider';
import { expect } from 'vitest';
import type { CliAdapter } from '../../../host/adapter-kit/adapter.ts';
import { TurnTranslation } from '../../../host/adapter-kit/turn-translation.ts';
import { blockProblem, checkEveryCutResumes, joinSlices } from '../../../host/testing/every-cut.ts';
import { streamPartSchema } from '../../../protocol/harness-v1/stream-part-schema.ts';
import type { HarnessV1StreamPart as Part } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';

export const ofType = <T extends Part['type']>(parts: Part[], type: T) =>
  parts.filter((p): p is Extract<Part, { type: T }> => p.type === type);

export const textOf = (parts: Part[]) => ofType(parts, 'text-delta').map((p) => p.delta).join('');

/** Stream shape every turn must have; messages say which rule broke. */
export function expectWellFormed(parts: Part[], where: string): void {
  parts.forEach((part, i) => {
    const parsed = streamPartSchema.safeParse(part);
    expect(parsed.success, `${where}: part ${i} (${part.type}) fails streamPartSchema: ${parsed.error?.message}`).toBe(true);
  });
  expect(parts[0]?.type, `${where}: the first part is stream-start`).toBe('stream-start');
  expect(ofType(parts, 'stream-start'), `${where}: exactly one stream-start`).toHaveLength(1);
  expect(parts.at(-1)?.type, `${where}: the last part is finish`).toBe('finish');
  expect(ofType(parts, 'finish'), `${where}: exactly one finish`).toHaveLength(1);
  const open = new Set<string>();
  for (const part of parts) {
    if (part.type === 'text-start' || part.type === 'reasoning-start') {
      expect(open.has(part.id), `${where}: ${part.id} started twice`).toBe(false);
      open.add(part.id);
    } else if (part.type === 'text-delta' || part.type === 'reasoning-delta') {
      expect(open.has(part.id), `${where}: delta for ${part.id} outside its start/end`).toBe(true);
    } else if (part.type === 'text-end' || part.type === 'reasoning-end') {
      expect(open.delete(part.id), `${where}: end for ${part.id} that is not open`).toBe(true);
    } else if (part.type === 'finish-step' || part.type === 'finish' || part.type === 'tool-call') {
      expect([...open], `${where}: ${part.type} while a text/reasoning block is open`).toEqual([]);
    }
  }
  const calls = new Set(ofType(parts, 'tool-call').map((p) => p.toolCallId));
  for (const result of ofType(parts, 'tool-result')) expect(calls.has(result.toolCallId), `${where}: result ${result.toolCallId} before its call`).toBe(true);
  for (const request of ofType(parts, 'tool-approval-request')) {
    expect(calls.has(request.toolCallId), `${where}: approval ${request.approvalId} for an unseen call`).toBe(true);
  }
}

/** Part ids that depend on seq are renamed by first appearance, so differently split journals compare equal. */
export function normalizeIds(parts: Part[]): Part[] {
  const names = new Map<string, string>();
  return parts.map((part) => {
    if (!('id' in part)) return part;
    if (!names.has(part.id)) names.set(part.id, `id-${names.size}`);
    return { ...part, id: names.get(part.id)! };
  });
}

/**
 * The snapshot property at EVERY cut point (the kit's public check, host/testing/every-cut.ts): a cut
 * anywhere, restored by a new adapter instance or through the kit's TurnTranslation, continues exactly.
 */
export function expectEveryCutResumes<S>(makeAdapter: () => CliAdapter<S>, records: JournalRecord[], where: string, rerun = false): void {
  expect(checkEveryCutResumes(makeAdapter, records, where, rerun)).toBe(records.length + 1);
}

/**
 * A slice after a cut (docs/guarantees.md#ui): its parts stand alone (every block they touch is opened in
 * them: a block open at the cut is re-opened before its next part), and joined to `head` they are `all`.
 */
export function expectSliceResumes(head: Part[], slice: Part[], all: Part[], where: string): void {
  expect(blockProblem(slice), `${where}: the slice stands alone`).toBeNull();
  expect(joinSlices([head, slice]), `${where}: joined to the parts before the cut`).toEqual(all);
}

/** The kit's parts of each record of an uninterrupted turn (a TurnTranslation from the start), by seq. */
export function kitBySeq<S>(adapter: CliAdapter<S>, records: ReadonlyArray<JournalRecord>): Map<number, Part[]> {
  const live = new TurnTranslation(adapter, { turnId: records[0]?.turnId ?? 'turn-1', rerun: false }, 0, new Set());
  return new Map(records.map((record) => [record.seq, live.push(record)]));
}
