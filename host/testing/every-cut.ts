// The snapshot property an adapter's translator must have at every cut point
// (docs/writing-an-adapter.md "The translator"), framework-free for authors
// outside this repo: `checkEveryCutResumes` throws an Error naming the first
// cut that differs (each kit slice must also stand alone: blockProblem, and
// join back to the uninterrupted parts: joinSlices). And `journalOfLines`: the records a bridge journals for one
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
 * a replay): its slice must stand alone (a block open at the cut is re-opened before its next part) and,
 * joined to the kit's parts before the cut, equal the kit's uninterrupted ones. Every snapshot must fit HOST_SESSION_LIMITS.maxSnapshotChars. Returns the number of cuts checked.
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
  // The kit's own parts of the uninterrupted turn (it splits a text block around a part shown apart: block-split.ts).
  const live = new TurnTranslation(adapter, turn, 0, new Set());
  const kitSnapshots = [viaJson(live.snapshot(0)!)];
  const kitBySeq = new Map<number, HarnessV1StreamPart[]>();
  for (const record of records) {
    kitBySeq.set(record.seq, live.push(record));
    kitSnapshots.push(viaJson(live.snapshot(record.seq)!));
  }
  const kitAll = records.flatMap((r) => kitBySeq.get(r.seq)!);
  records.forEach((_, k) => {
    const cursor = k === 0 ? 0 : records[k - 1]!.seq;
    const slice = TurnTranslation.restore(makeAdapter(), turn, { ...kitSnapshots[k]!, seq: cursor }, new Set());
    if (!slice) throw new Error(`${where}: the kit could not restore the snapshot after ${k} records (it would replay)`);
    const got = records.slice(k).flatMap((record) => slice.push(record));
    const head = records.slice(0, k).flatMap((r) => kitBySeq.get(r.seq)!);
    const problem = blockProblem(got);
    if (problem) throw new Error(`${where}: the kit's slice after seq ${cursor} does not stand alone: ${problem}`);
    const joined = joinSlices([head, got]);
    if (!isDeepStrictEqual(joined, kitAll)) throw differ(`${where}: the kit's slice after seq ${cursor}, joined to the parts before it`, joined, kitAll);
  });
  return records.length + 1;
}

type BlockRole = { key: string; role: 'start' | 'delta' | 'end' };

/** The text, reasoning or tool-input block a part opens, continues or closes. */
function blockOf(part: HarnessV1StreamPart): BlockRole | undefined {
  const match = /^(text|reasoning|tool-input)-(start|delta|end)$/.exec(part.type);
  return match && 'id' in part ? { key: `${match[1]}:${part.id}`, role: match[2] as BlockRole['role'] } : undefined;
}

/**
 * Why one slice's parts would not fold on their own (docs/guarantees.md#ui): a block's delta or end
 * without its start earlier in the same slice, or a start while that block is already open. Null: none.
 */
export function blockProblem(parts: ReadonlyArray<HarnessV1StreamPart>): string | null {
  const open = new Set<string>();
  for (const [i, part] of parts.entries()) {
    const block = blockOf(part);
    if (!block) continue;
    if (block.role === 'start') {
      if (open.has(block.key)) return `part ${i}: ${part.type} for ${block.key}, already open`;
      open.add(block.key);
    } else if (!open.has(block.key)) return `part ${i}: ${part.type} for ${block.key} with no start in this slice`;
    else if (block.role === 'end') open.delete(block.key);
  }
  return null;
}

/**
 * The parts of consecutive slices of one turn as one stream: a start a slice re-sent for a block an
 * earlier slice left open, a tool-input block (start and end) a slice re-announced before a tool-call
 * whose input an earlier slice showed, and a CLI tool call an earlier slice showed delivered again right
 * before its approval request (the kit's rules at a slice boundary), are dropped. What remains must
 * be the uninterrupted turn's parts: anything else is lost or doubled.
 */
export function joinSlices(slices: ReadonlyArray<ReadonlyArray<HarnessV1StreamPart>>): HarnessV1StreamPart[] {
  const open = new Set<string>();
  /** Tool-input blocks ended whose tool-call has not come yet. */
  const awaiting = new Set<string>();
  /** The CLI's own tool calls earlier slices showed: one a later slice delivers again right before its approval request is dropped. */
  const cliCalls = new Set<string>();
  const out: HarnessV1StreamPart[] = [];
  for (const slice of slices) {
    const reopened = new Set<string>();
    const reannounced = new Set<string>();
    const shown = new Set(cliCalls);
    const resent = new Set<number>();
    for (const [index, part] of slice.entries()) {
      const block = blockOf(part);
      if (block?.role === 'start' && open.has(block.key) && !reopened.has(block.key)) {
        reopened.add(block.key);
        continue;
      }
      // A CLI call an earlier slice showed, sent again before its approval request: input block and call dropped.
      if (resent.has(index)) continue;
      if (part.type === 'tool-input-start' && shown.has(part.id)) {
        const [end, call, request] = slice.slice(index + 1, index + 4);
        if (end?.type === 'tool-input-end' && end.id === part.id && call?.type === 'tool-call' && call.toolCallId === part.id && request?.type === 'tool-approval-request' && request.toolCallId === part.id) {
          resent.add(index + 1).add(index + 2);
          continue;
        }
      }
      if (part.type === 'tool-input-start' && awaiting.has(part.id) && !reannounced.has(part.id)) {
        reannounced.add(part.id);
        continue;
      }
      if (part.type === 'tool-input-end' && reannounced.has(part.id) && awaiting.has(part.id)) {
        awaiting.delete(part.id);
        continue;
      }
      if (block?.role === 'start') open.add(block.key);
      if (block?.role === 'end') {
        open.delete(block.key);
        if (part.type === 'tool-input-end') awaiting.add(part.id);
      }
      if (part.type === 'tool-call' && part.providerExecuted === true) {
        const next = slice[index + 1];
        if (shown.has(part.toolCallId) && next?.type === 'tool-approval-request' && next.toolCallId === part.toolCallId) continue;
        cliCalls.add(part.toolCallId);
      }
      if (part.type === 'tool-call') awaiting.delete(part.toolCallId);
      out.push(part);
    }
  }
  return out;
}
