// The snapshot property an adapter's translator must have at every cut point
// (docs/writing-an-adapter.md "The translator"), framework-free for authors
// outside this repo: `checkEveryCutResumes` throws an Error naming the first
// cut that differs. And `journalOfLines`: the records a bridge journals for one
// turn of captured CLI output, optionally split into `cont` pieces, to feed it.
import type { JSONValue } from '@ai-sdk/provider';
import { isDeepStrictEqual } from 'node:util';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import { TurnTranslation } from '../adapter-kit/turn-translation.ts';
import { HOST_SESSION_LIMITS } from '../limits.ts';

type TurnEnd = Extract<JournalRecord, { kind: 'turn-end' }>['data'];

/**
 * One turn as the bridge journals it: turn-start, each stdout line (in pieces of `piece` characters, all
 * but the last marked `cont`, when given), each stderr line, turn-end (default `{ reason: 'matched' }`).
 */
export function journalOfLines(
  stdout: ReadonlyArray<string>,
  options: { piece?: number; stderr?: ReadonlyArray<string>; end?: TurnEnd; turnId?: string; firstSeq?: number } = {},
): JournalRecord[] {
  const turnId = options.turnId ?? 'turn-1';
  let seq = options.firstSeq ?? 1;
  const records: JournalRecord[] = [{ seq: seq++, turnId, ts: 0, kind: 'turn-start', data: { input: '' } }];
  for (const line of stdout) {
    const pieces = options.piece && line.length > 0 ? (line.match(new RegExp(`[\\s\\S]{1,${options.piece}}`, 'g')) ?? [line]) : [line];
    pieces.forEach((text, i) => records.push({ seq: seq++, turnId, ts: 0, kind: 'stdout', data: i < pieces.length - 1 ? { text, cont: true } : { text } }));
  }
  for (const text of options.stderr ?? []) records.push({ seq: seq++, turnId, ts: 0, kind: 'stderr', data: { text } });
  records.push({ seq: seq++, turnId, ts: 0, kind: 'turn-end', data: options.end ?? { reason: 'matched' } });
  return records;
}

/** Through JSON text and back, as a resume payload stores it. */
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function differ(where: string, got: unknown, want: unknown): Error {
  return new Error(`${where}:\n got ${JSON.stringify(got).slice(0, 600)}\nwant ${JSON.stringify(want).slice(0, 600)}`);
}

/**
 * At EVERY cut point k (0..n): records [0..k) through one translator, its snapshot through JSON, restored by
 * the translator of a NEW adapter instance, records [k..n) through that one: the parts must deep-equal the
 * uninterrupted translation's. The same through the kit's TurnTranslation (it must attach, not fall back to
 * a replay). Every snapshot must fit HOST_SESSION_LIMITS.maxSnapshotChars. Returns the number of cuts checked.
 */
export function checkEveryCutResumes<S>(makeAdapter: () => CliAdapter<S>, records: ReadonlyArray<JournalRecord>, where: string, rerun = false): number {
  const turn = { turnId: records[0]?.turnId ?? 'turn-1', rerun };
  const adapter = makeAdapter();
  const { snapshot } = adapter.translator;
  if (!snapshot || !adapter.translator.restore) throw new Error(`${where}: the translator has no snapshot/restore`);
  const bySeq = new Map<number, HarnessV1StreamPart[]>();
  let state = adapter.translator.init(turn);
  const snapshots: JSONValue[] = [];
  for (const record of records) {
    snapshots.push(viaJson(snapshot(state)));
    const out = adapter.translator.step(state, record);
    state = out.state;
    bySeq.set(record.seq, [...out.parts]);
  }
  snapshots.push(viaJson(snapshot(state)));
  const partsOf = (slice: ReadonlyArray<JournalRecord>) => slice.flatMap((r) => bySeq.get(r.seq)!);
  const all = partsOf(records);
  for (let k = 0; k <= records.length; k++) {
    const size = JSON.stringify(snapshots[k]).length;
    if (size > HOST_SESSION_LIMITS.maxSnapshotChars) throw new Error(`${where}: the snapshot after ${k} records is ${size} chars, over ${HOST_SESSION_LIMITS.maxSnapshotChars}`);
    const fresh = makeAdapter();
    let resumed = fresh.translator.restore!(snapshots[k]!);
    const tail: HarnessV1StreamPart[] = [];
    for (const record of records.slice(k)) {
      const out = fresh.translator.step(resumed, record);
      resumed = out.state;
      tail.push(...out.parts);
    }
    const got = [...partsOf(records.slice(0, k)), ...tail];
    if (!isDeepStrictEqual(got, all)) throw differ(`${where}: cut after ${k} of ${records.length} records`, got, all);
  }
  const live = new TurnTranslation(adapter, turn, 0, new Set());
  const kitSnapshots = [viaJson(live.snapshot(0)!)];
  for (const record of records) {
    live.push(record);
    kitSnapshots.push(viaJson(live.snapshot(record.seq)!));
  }
  records.forEach((_, k) => {
    const cursor = k === 0 ? 0 : records[k - 1]!.seq;
    const slice = TurnTranslation.restore(makeAdapter(), turn, { ...kitSnapshots[k]!, seq: cursor }, new Set());
    if (!slice) throw new Error(`${where}: the kit could not restore the snapshot after ${k} records (it would replay)`);
    const got = records.slice(k).flatMap((record) => slice.push(record));
    const want = partsOf(records.slice(k));
    if (!isDeepStrictEqual(got, want)) throw differ(`${where}: the kit's slice after seq ${cursor}`, got, want);
  });
  return records.length + 1;
}
