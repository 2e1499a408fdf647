// Keeps a translator's output well-formed so an adapter only says what
// happened: stream-start before anything else, text/reasoning blocks opened,
// fed and closed one at a time, one finish per turn, and the generic ending of
// a turn the CLI never finished itself. It also keeps the bookkeeping most
// CLIs need: blocks and streaming tool inputs keyed by the CLI's own ids,
// builtin calls until their result, held steps and the turn's summed usage.
// The state is plain data kept inside the translator's state (streamStateSchema
// in snapshot.ts); when a step ends and what ids mean is the adapter's.
// Raw parts that come before the stream starts (a stderr warning before the
// CLI's init line) are held until it does, so the stream-start that follows
// still carries the modelId the init line names.
import type { JSONValue, LanguageModelV4FinishReason, LanguageModelV4ToolResult, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { HarnessV1Metadata, HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import { addCounts, usageFromCounts, type TokenCounts } from './usage.ts';

export type StreamState = {
  started: boolean;
  finished: boolean;
  /** The open block; `key` is the CLI's own id for it when the adapter gave one, `fed` whether a delta reached it. */
  block: { type: 'text' | 'reasoning'; id: string; key?: string; fed?: boolean } | null;
  /** rawValues of raw parts pushed before the stream started, in order; emitted right after stream-start. Absent when none. */
  held?: unknown[];
  /** Tool inputs streaming now (tool-input-start sent, tool-input-end not yet): the CLI's key → toolCallId. Absent when none. */
  inputs?: Record<string, string>;
  /** Builtin tool calls awaiting their result: toolCallId → name (and the file it names). Absent when none. */
  calls?: Record<string, ToolCallMemo>;
  /** Counts of a model response whose finish-step waits until it is known whether more steps follow (holdStep). */
  heldStep?: TokenCounts;
  /** The turn's counts so far, summed over endStep and holdStep: finish's total usage unless it is given one. */
  total?: TokenCounts;
  /** True while the current step has content (a delta, a tool call or result, an approval) no finish-step closed yet. Absent: none. */
  stepContent?: true;
};

/** The parts the AI SDK's HarnessAgent collects into a step: a finish with one of them not closed by finish-step is an error there. */
// A file-change or compaction part is one too: the agent shows each as a tool-call and tool-result of its own.
const stepContentTypes = new Set<HarnessV1StreamPart['type']>(['text-delta', 'reasoning-delta', 'tool-call', 'tool-approval-request', 'tool-result', 'file-change', 'compaction']);

/** What the writer keeps of a builtin tool call until its result: the name, and the file a file tool names and what it does to it. */
export type ToolCallMemo = { toolName: string; path?: string; fileEvent?: 'create' | 'modify' | 'delete' };

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
    if (stepContentTypes.has(part.type)) state.stepContent = true;
    else if (part.type === 'finish-step') delete state.stepContent;
  };
  const close = () => {
    const block = state.block;
    state.block = null;
    if (block) push(block.type === 'text' ? { type: 'text-end', id: block.id } : { type: 'reasoning-end', id: block.id });
  };
  /** Opens a block (closing any open one); `key` is the CLI's id for it, for isOpen, delta and endBlock. */
  const open = (type: 'text' | 'reasoning', id: string, key?: string | number) => {
    close();
    state.block = { type, id, ...(key === undefined ? {} : { key: String(key) }) };
    push(type === 'text' ? { type: 'text-start', id } : { type: 'reasoning-start', id });
  };
  const isOpen = (key: string | number) => state.block?.key === String(key);
  /** Feeds the open block; with `key`, only if it is that block (a delta for a block not open is dropped). */
  const delta = (text: string | undefined, key?: string | number) => {
    const block = state.block;
    if (!block || !text || (key !== undefined && !isOpen(key))) return;
    if (block.key !== undefined) block.fed = true;
    push(block.type === 'text' ? { type: 'text-delta', id: block.id, delta: text } : { type: 'reasoning-delta', id: block.id, delta: text });
  };
  const finishStep = (finishReason: LanguageModelV4FinishReason, usage: LanguageModelV4Usage) => {
    close();
    push({ type: 'finish-step', finishReason, usage });
  };
  const releaseStep = (finishReason: LanguageModelV4FinishReason = { unified: 'tool-calls', raw: undefined }) => {
    const counts = state.heldStep;
    delete state.heldStep;
    if (counts) finishStep(finishReason, usageFromCounts(counts));
  };
  const inputEnd = (key: string | number) => {
    const id = state.inputs?.[key];
    if (id === undefined) return;
    push({ type: 'tool-input-end', id });
    dropEntry(state, 'inputs', String(key));
  };
  const finish = (finishReason: LanguageModelV4FinishReason, totalUsage = state.total ? usageFromCounts(state.total) : noUsage, harnessMetadata?: HarnessV1Metadata) => {
    close();
    // A step the CLI never closed (a turn that ends without a last usage report, aborted, failed) ends here: the
    // HarnessAgent takes content after the last finish-step at the finish as an invalid stream, an error in the UI.
    if (state.heldStep) releaseStep(finishReason);
    if (state.stepContent) finishStep(finishReason, noUsage);
    push({ type: 'finish', finishReason, totalUsage, ...(harnessMetadata ? { harnessMetadata } : {}) });
    state.finished = true;
  };
  return {
    push,
    /** stream-start, unless something already started the stream. */
    start: (modelId?: string) => state.started || push({ type: 'stream-start', ...(modelId ? { modelId } : {}) }),
    open,
    isOpen,
    delta,
    close,
    /**
     * The CLI's end of block `key`, with its whole text: a block that streamed closes as it is; one that
     * did not (no deltas, or never opened) gets `text` in one delta first.
     */
    endBlock: (type: 'text' | 'reasoning', id: string, key: string | number, text: string | undefined) => {
      if (!isOpen(key)) open(type, id, key);
      if (!state.block!.fed) delta(text);
      close();
    },
    /** A builtin tool's input starts streaming (tool-input-start); `key` is the CLI's id for the streaming call. */
    inputStart: (key: string | number, toolCallId: string, toolName: string) => {
      (state.inputs ??= {})[key] = toolCallId;
      push({ type: 'tool-input-start', id: toolCallId, toolName, providerExecuted: true });
    },
    /** A piece of the streaming input `key`; nothing if that input is not streaming. */
    inputDelta: (key: string | number, text: string | undefined) => {
      const id = state.inputs?.[key];
      if (id !== undefined && text) push({ type: 'tool-input-delta', id, delta: text });
    },
    /** The streaming input `key` is complete (tool-input-end); nothing if it is not streaming. */
    inputEnd,
    /**
     * A builtin tool call the CLI runs itself (providerExecuted), remembered until toolResult. A file tool
     * names its `path` and `fileEvent`: its successful result then brings the file-change part.
     */
    toolCall: (call: { toolCallId: string; toolName: string; input: unknown; nativeName?: string } & Omit<ToolCallMemo, 'toolName'>) => {
      const { toolCallId, toolName, input, nativeName = toolName, path, fileEvent } = call;
      (state.calls ??= {})[toolCallId] = { toolName, ...(path === undefined ? {} : { path }), ...(fileEvent === undefined ? {} : { fileEvent }) };
      push({ type: 'tool-call', toolCallId, toolName, input: JSON.stringify(input ?? {}), providerExecuted: true, nativeName });
    },
    /** The call toolCall remembered under this id, if its result has not come yet. */
    call: (toolCallId: string): ToolCallMemo | undefined => state.calls?.[toolCallId],
    /** The result of a call toolCall remembered (its tool-result, under the remembered name); the memo, or undefined for a call it does not know. */
    toolResult: (toolCallId: string, result: Omit<LanguageModelV4ToolResult, 'type' | 'toolCallId' | 'toolName'>): ToolCallMemo | undefined => {
      const memo = state.calls?.[toolCallId];
      if (!memo) return undefined;
      dropEntry(state, 'calls', toolCallId);
      push({ type: 'tool-result', toolCallId, toolName: memo.toolName, ...result });
      if (!result.isError && memo.path !== undefined && memo.fileEvent) push({ type: 'file-change', event: memo.fileEvent, path: memo.path });
      return memo;
    },
    /** A whole block in one go (a CLI that prints complete blocks). */
    block: (type: 'text' | 'reasoning', id: string, text: string | undefined) => {
      open(type, id);
      delta(text);
      close();
    },
    finishStep,
    /**
     * For CLIs that report a response's usage before saying whether the turn goes on: holds its finish-step
     * (a step already held ends first, as 'tool-calls': another response followed it).
     */
    holdStep: (counts: TokenCounts) => {
      releaseStep();
      state.heldStep = counts;
      state.total = addCounts(state.total ?? {}, counts);
    },
    /** A step ends with these counts (`raw`: the CLI's own usage object): finish-step, and the counts join the turn's total. */
    endStep: (finishReason: LanguageModelV4FinishReason, counts: TokenCounts | undefined, raw?: Record<string, JSONValue>) => {
      state.total = addCounts(state.total ?? {}, counts);
      finishStep(finishReason, usageFromCounts(counts, raw));
    },
    /** Ends the held step, if any: 'tool-calls' when another step begins, the turn's reason when it ends. */
    releaseStep,
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

/** Removes `key` from one of the state's optional maps, and the map once empty (absent when none, as snapshots expect). */
function dropEntry(state: StreamState, map: 'inputs' | 'calls', key: string): void {
  const entries = state[map];
  if (!entries) return;
  delete entries[key];
  if (Object.keys(entries).length === 0) delete state[map];
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
