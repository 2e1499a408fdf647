// Checks every adapter's translator tests share: the stream shape every turn
// must have (messages say which rule broke), id normalisation for comparing
// translations of differently split journals, and the snapshot property
// (translate, snapshot, restore in a fresh translator, translate the rest).
import type { JSONValue } from '@ai-sdk/provider';
import { expect } from 'vitest';
import type { CliAdapter } from '../../../host/adapter-kit/adapter.ts';
import { HOST_SESSION_LIMITS } from '../../../host/limits.ts';
import { TurnTranslation } from '../../../host/adapter-kit/turn-translation.ts';
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

/** Through JSON text and back, as a resume payload stores it. */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * The snapshot property at EVERY cut point k (0..n): records [0..k) through one translator, its
 * snapshot through JSON, restored by a translator of a NEW adapter instance (nothing shared), records
 * [k..n) through that one — the parts must be exactly (toStrictEqual) the uninterrupted translation's.
 * The same through the kit (TurnTranslation.snapshot / restore: it must attach, not fall back to a
 * replay, and emit exactly the tail). Every snapshot must fit the resume payload's snapshot limit.
 */
export function expectEveryCutResumes<S>(makeAdapter: () => CliAdapter<S>, records: JournalRecord[], where: string, rerun = false): void {
  const turn = { turnId: 'turn-1', rerun };
  const adapter = makeAdapter();
  const { snapshot, restore } = adapter.translator;
  if (!snapshot || !restore) throw new Error(`${where}: the translator has no snapshot/restore`);
  const bySeq = new Map<number, Part[]>();
  let state = adapter.translator.init(turn);
  const snapshots: JSONValue[] = [];
  for (const record of records) {
    snapshots.push(viaJson(snapshot(state)));
    const out = adapter.translator.step(state, record);
    state = out.state;
    bySeq.set(record.seq, [...out.parts]);
  }
  snapshots.push(viaJson(snapshot(state)));
  const all = records.flatMap((r) => bySeq.get(r.seq)!);
  for (let k = 0; k <= records.length; k++) {
    const size = JSON.stringify(snapshots[k]).length;
    expect(size, `${where}: snapshot after ${k} records is ${size} chars`).toBeLessThanOrEqual(HOST_SESSION_LIMITS.maxSnapshotChars);
    const fresh = makeAdapter();
    let resumed = fresh.translator.restore!(snapshots[k]!);
    const tail: Part[] = [];
    for (const record of records.slice(k)) {
      const out = fresh.translator.step(resumed, record);
      resumed = out.state;
      tail.push(...out.parts);
    }
    const head = records.slice(0, k).flatMap((r) => bySeq.get(r.seq)!);
    expect([...head, ...tail], `${where}: cut after ${k} of ${records.length} records`).toStrictEqual(all);
  }

  // Through the kit: a slice ending at seq k leaves a TranslationSnapshot; the next slice restores it.
  const live = new TurnTranslation(adapter, turn, 0, new Set());
  const kitSnapshots = [viaJson(live.snapshot(0)!)];
  for (const record of records) {
    live.push(record);
    kitSnapshots.push(viaJson(live.snapshot(record.seq)!));
  }
  records.forEach((_, k) => {
    const cursor = k === 0 ? 0 : records[k - 1]!.seq;
    const slice = TurnTranslation.restore(makeAdapter(), turn, { ...kitSnapshots[k]!, seq: cursor }, new Set());
    expect(slice, `${where}: the kit restores the snapshot after ${k} records (no replay fallback)`).not.toBeNull();
    const got = records.slice(k).flatMap((record) => slice!.push(record));
    expect(got, `${where}: kit slice after seq ${cursor}`).toStrictEqual(records.slice(k).flatMap((r) => bySeq.get(r.seq)!));
  });
}
