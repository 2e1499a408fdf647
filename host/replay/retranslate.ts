// Offline re-translation (docs/design.md#d4): a journal's records through an adapter's
// translator, exactly as an uninterrupted live session would have run them
// (one TurnTranslation per turn, the kit's own tool-call/approval records, the
// rerun marker), with no CLI and no network. Each part keeps the seq and turn
// of the record that produced it, for timelines and diffs. Streams: parts come
// out record by record; only per-turn translator state is kept.
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import { markRecomputed, TurnTranslation } from '../adapter-kit/turn-translation.ts';

export type TranslatedPart = { readonly seq: number; readonly turnId: string; readonly part: HarnessV1StreamPart };

/** A host tool call or approval the translation saw, and the record that raised it. */
export type HostCall = {
  readonly id: string;
  readonly turnId: string;
  readonly seq: number;
  readonly kind: 'tool-call' | 'tool-approval-request';
  /** 'bridge': over the MCP endpoint (answered by tool-result/approval records); 'cli': on the CLI's stdout (answered on stdin). */
  readonly source: 'bridge' | 'cli';
};

export type Translation = {
  readonly parts: ReadonlyArray<TranslatedPart>;
  readonly hostCalls: ReadonlyArray<HostCall>;
};

/** Translates records one at a time (seq order); records outside a turn produce no parts, as in a live session. */
export class TranslationStream<S> {
  readonly #turns = new Map<string, TurnTranslation<S>>();
  constructor(private readonly adapter: CliAdapter<S>) {}

  /** The parts `record` produces; `onHostCall` hears of each host tool call or approval among them. */
  push(record: JournalRecord, onHostCall?: (call: HostCall) => void): TranslatedPart[] {
    const turnId = record.turnId;
    if (turnId === null) return [];
    let turn = this.#turns.get(turnId);
    if (!turn) {
      const rerun = record.kind === 'turn-start' && record.data.rerun === true;
      turn = new TurnTranslation(this.adapter, { turnId, rerun }, 0, new Set());
      this.#turns.set(turnId, turn);
    }
    let out = turn.push(record);
    if (turn.rerun && record.kind === 'turn-start') out = markRecomputed(out, turnId);
    const parts: TranslatedPart[] = [];
    for (const part of out) {
      parts.push({ seq: record.seq, turnId, part });
      if (onHostCall && ((part.type === 'tool-call' && part.providerExecuted !== true) || part.type === 'tool-approval-request')) {
        const id = part.type === 'tool-call' ? part.toolCallId : part.approvalId;
        const source = record.kind === 'tool-call' || record.kind === 'approval-request' ? 'bridge' : 'cli';
        onHostCall({ id, turnId, seq: record.seq, kind: part.type, source });
      }
    }
    return parts;
  }
}

/** The parts of `records`, as a stream. */
export function* translateStream<S>(adapter: CliAdapter<S>, records: Iterable<JournalRecord>): Generator<TranslatedPart, void, undefined> {
  const translation = new TranslationStream(adapter);
  for (const record of records) yield* translation.push(record);
}

/** Translates every turn in `records` (seq order), keeping every part and host call (small sources, tests). */
export function translateRecords<S>(adapter: CliAdapter<S>, records: Iterable<JournalRecord>): Translation {
  const translation = new TranslationStream(adapter);
  const parts: TranslatedPart[] = [];
  const hostCalls: HostCall[] = [];
  for (const record of records) parts.push(...translation.push(record, (call) => hostCalls.push(call)));
  return { parts, hostCalls };
}

/** Parts as plain JSON values (undefined keys dropped), the form recordings and diffs compare. */
export function normalizeParts(parts: ReadonlyArray<HarnessV1StreamPart>): unknown[] {
  return parts.map((part) => JSON.parse(JSON.stringify(part)) as unknown);
}
