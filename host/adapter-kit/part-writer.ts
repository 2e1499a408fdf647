// Keeps a translator's output well-formed so an adapter only says what
// happened: stream-start before anything else, text/reasoning blocks opened,
// fed and closed one at a time, one finish per turn, and the generic ending of
// a turn the CLI never finished itself. The state is plain data kept inside the
// translator's state; steps, usage and ids are the adapter's.
// Raw parts that come before the stream starts (a stderr warning before the
// CLI's init line) are held until it does, so the stream-start that follows
// still carries the modelId the init line names.
import type { LanguageModelV4FinishReason, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { HarnessV1Metadata, HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';

export type StreamState = {
  started: boolean;
  finished: boolean;
  block: { type: 'text' | 'reasoning'; id: string } | null;
  /** rawValues of raw parts pushed before the stream started, in order; emitted right after stream-start. Absent when none. */
  held?: unknown[];
};

/**
 * At most this many raw parts wait for the stream to start; the next one starts it without a modelId.
 * A CLI that only ever prints stderr (it cannot start) is not held back for long, and the state stays small.
 */
export const maxHeldRawParts = 32;

export function createStreamState(): StreamState {
  return { started: false, finished: false, block: null };
}

const noUsage: LanguageModelV4Usage = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

export type PartWriter = ReturnType<typeof partWriter>;

/** A writer over `state` appending to `parts`; make one per translator step. */
export function partWriter(state: StreamState, parts: HarnessV1StreamPart[]) {
  const push = (part: HarnessV1StreamPart) => {
    if (!state.started) {
      if (part.type === 'raw' && (state.held?.length ?? 0) < maxHeldRawParts) {
        (state.held ??= []).push(part.rawValue);
        return;
      }
      parts.push(part.type === 'stream-start' ? part : { type: 'stream-start' });
      state.started = true;
      for (const rawValue of state.held ?? []) parts.push({ type: 'raw', rawValue });
      delete state.held;
      if (part.type === 'stream-start') return;
    }
    parts.push(part);
  };
  const close = () => {
    const block = state.block;
    state.block = null;
    if (block) push(block.type === 'text' ? { type: 'text-end', id: block.id } : { type: 'reasoning-end', id: block.id });
  };
  const open = (type: 'text' | 'reasoning', id: string) => {
    close();
    state.block = { type, id };
    push(type === 'text' ? { type: 'text-start', id } : { type: 'reasoning-start', id });
  };
  const delta = (text: string | undefined) => {
    const block = state.block;
    if (!block || !text) return;
    push(block.type === 'text' ? { type: 'text-delta', id: block.id, delta: text } : { type: 'reasoning-delta', id: block.id, delta: text });
  };
  const finish = (finishReason: LanguageModelV4FinishReason, totalUsage: LanguageModelV4Usage = noUsage, harnessMetadata?: HarnessV1Metadata) => {
    close();
    push({ type: 'finish', finishReason, totalUsage, ...(harnessMetadata ? { harnessMetadata } : {}) });
    state.finished = true;
  };
  return {
    push,
    /** stream-start, unless something already started the stream. */
    start: (modelId?: string) => state.started || push({ type: 'stream-start', ...(modelId ? { modelId } : {}) }),
    open,
    delta,
    close,
    /** A whole block in one go (a CLI that prints complete blocks). */
    block: (type: 'text' | 'reasoning', id: string, text: string | undefined) => {
      open(type, id);
      delta(text);
      close();
    },
    finishStep: (finishReason: LanguageModelV4FinishReason, usage: LanguageModelV4Usage) => {
      close();
      push({ type: 'finish-step', finishReason, usage });
    },
    finish,
    raw: (rawValue: unknown) => push({ type: 'raw', rawValue }),
    /** A line the translator leaves raw (readJsonLine's `json`): a stderr line as `{ stderr }`. */
    rawLine: (line: { stream: 'stdout' | 'stderr'; json: unknown }) => push({ type: 'raw', rawValue: line.stream === 'stderr' ? { stderr: line.json } : line.json }),
    /**
     * A turn-end record reached a turn the CLI never finished: aborted/stopped → finish unified 'other', raw the reason;
     * exit/spawn-failed/matched → error + finish 'error'; interrupted (the bridge died) → blocks closed
     * but no finish, because the kit re-drives the thread and that turn finishes the stream.
     */
    endTurn: (record: Extract<JournalRecord, { kind: 'turn-end' }>, cli: string) => {
      const { reason, code, message } = record.data;
      if (state.finished) return;
      if (reason === 'interrupted') {
        if (state.held) push({ type: 'stream-start' }); // what the CLI printed still reaches the consumer
        return close();
      }
      if (reason === 'aborted' || reason === 'stopped') return finish({ unified: 'other', raw: reason });
      push({ type: 'error', error: { message: message ?? `${cli} ended the turn without a result (${reason}${code == null ? '' : `, code ${code}`})` } });
      finish({ unified: 'error', raw: reason });
    },
  };
}

/**
 * A Translator.step from `write`, which says what one record means through a partWriter over `state.stream`
 * (and keeps the rest of its state in place). Once the stream finished, records yield nothing.
 */
export function writerStep<S extends { stream: StreamState }>(
  write: (state: S, record: JournalRecord, out: PartWriter) => void,
): (state: S, record: JournalRecord) => { state: S; parts: HarnessV1StreamPart[] } {
  return (state, record) => {
    const parts: HarnessV1StreamPart[] = [];
    if (!state.stream.finished) write(state, record, partWriter(state.stream, parts));
    return { state, parts };
  };
}
