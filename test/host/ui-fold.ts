// The user's view of a turn, as the AI SDK builds it: UI message chunks through
// SSE and `ai`'s uiMessageChunkSchema (useChat's transport check), folded by
// readUIMessageStream with terminateOnError (a chunk the SDK cannot fold is an
// error, never swallowed; the turn's own error chunks are collected beside it). A continued turn is folded onto the message its
// earlier slices built, as useChat resumes the last assistant message; and
// `uiView` is what is compared with the uninterrupted turn's message
// (docs/guarantees.md#ui).
import { parseJsonEventStream } from '@ai-sdk/provider-utils';
import { JsonToSseTransformStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';

export type Folded = {
  /** Every chunk as sent. */
  chunks: unknown[];
  /** The chunks uiMessageChunkSchema refused. */
  invalid: unknown[];
  /** The message after the last chunk (`onto` continued), or after the last chunk folded before an error. */
  message: UIMessage | undefined;
  /** What readUIMessageStream threw (terminateOnError): a chunk it could not fold. */
  error: unknown;
  /** The turn's own `error` chunks' texts (what useChat shows as the chat's error), kept out of the fold so it goes on. */
  errors: string[];
};

/** Folds one stream of UI chunks, onto `onto` (the message earlier slices of the turn built) when given. */
export async function foldUI(stream: ReadableStream<UIMessageChunk>, onto?: UIMessage): Promise<Folded> {
  const chunks: unknown[] = [];
  const invalid: unknown[] = [];
  const errors: string[] = [];
  const sse = stream.pipeThrough(new JsonToSseTransformStream()).pipeThrough(new TextEncoderStream());
  const parsed = parseJsonEventStream({ stream: sse, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: boolean; value?: UIMessageChunk; rawValue: unknown }, UIMessageChunk>({
      transform(result, out) {
        chunks.push(result.rawValue);
        if (!result.success || !result.value) invalid.push(result.rawValue);
        else if (result.value.type === 'error') errors.push(result.value.errorText);
        else out.enqueue(result.value);
      },
    }),
  );
  let message: UIMessage | undefined = onto === undefined ? undefined : structuredClone(onto);
  let error: unknown;
  try {
    for await (const next of readUIMessageStream({ stream: parsed, terminateOnError: true, ...(message ? { message } : {}) })) message = next;
  } catch (caught) {
    error = caught;
  }
  return { chunks, invalid, message, error, errors };
}

type Part = UIMessage['parts'][number];

/**
 * A UI message as compared across slicings of one turn: the message id aside, and a block cut at a slice
 * boundary joined back. The continuing slice re-opens a text or reasoning block the earlier slice left
 * open, which the SDK folds as a new part right after the `step-start` of the continued stream: such a
 * step-start (one that follows a part still streaming) is dropped, and a streaming text/reasoning part
 * and the next part of the same kind become one (text joined, the later state). A tool part the
 * continued stream shows again (same toolCallId) replaces the earlier one in place. An empty step (a
 * step-start with no part after it before the next) shows nothing and is left out; the random ids the agent
 * gives file-change and compaction parts are numbered in order.
 */
export function uiView(message: UIMessage | undefined): { role: string; parts: Part[] } {
  const parts: Part[] = [];
  let generated = 0;
  for (const given of message?.parts ?? []) {
    const part = structuredClone(given);
    const last = parts.at(-1);
    const streaming = last !== undefined && 'state' in last && last.state === 'streaming' && (last.type === 'text' || last.type === 'reasoning');
    if (part.type === 'step-start' && streaming) continue;
    if (streaming && part.type === last.type && (part.type === 'text' || part.type === 'reasoning')) {
      parts[parts.length - 1] = { ...part, text: (last as { text: string }).text + part.text };
      continue;
    }
    // The agent names a file change or compaction by a random id of its own: numbered in order instead.
    if ('toolCallId' in part && /^harness-(file-change|compaction)-/.test(part.toolCallId)) {
      part.toolCallId = `${part.toolCallId.split('-').slice(0, -1).join('-')}-${(generated += 1)}`;
    }
    const toolCallId = 'toolCallId' in part ? part.toolCallId : undefined;
    const earlier = toolCallId === undefined ? -1 : parts.findIndex((p) => 'toolCallId' in p && p.toolCallId === toolCallId);
    if (earlier >= 0) {
      parts[earlier] = part;
      continue;
    }
    parts.push(part);
  }
  // A step-start with nothing after it before the next one shows nothing (a continued turn whose slice only finishes).
  const shown = parts.filter((part, i) => part.type !== 'step-start' || (parts[i + 1] !== undefined && parts[i + 1]!.type !== 'step-start'));
  return { role: message?.role ?? '', parts: shown };
}

/** The text parts of a UI message, joined. */
export function uiText(message: UIMessage | undefined): string {
  return (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
}
