// The checks the adapter conformance cases (adapter-conformance.ts) make on a turn: run one and collect its parts,
// its shape (valid parts, one stream-start and one finish), a text turn's reply, a host tool's round trip, and what a
// failure says the host saw (error parts, raw stderr, a rejection).
import type { HarnessV1Session, HarnessV1ToolSpec, HarnessV1PromptControl } from '../../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { streamPartSchema } from '../../../protocol/harness-v1/stream-part-schema.ts';
import { ConformanceFailure } from './sandbox-provider-conformance.ts';

/** The first index where two lists differ (one running out counts), or -1. */
export function firstDifference(a: ReadonlyArray<string>, b: ReadonlyArray<string>): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}

/** An error's message: an Error's, a string, an error part's `{ message }`, else its JSON. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') return error.message;
  return JSON.stringify(error) ?? String(error);
}

export const clip = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** What the host was told besides the reply, in full: the rejection, error parts and raw parts (a CLI's stderr arrives raw). */
export function told(parts: ReadonlyArray<HarnessV1StreamPart>, rejection?: unknown): string[] {
  const out: string[] = [];
  if (rejection !== undefined) out.push(`the turn rejected: ${errorText(rejection)}`);
  for (const part of parts) {
    if (part.type === 'error') out.push(`error part: ${errorText(part.error)}`);
    else if (part.type === 'raw') out.push(`raw part: ${typeof part.rawValue === 'string' ? part.rawValue : JSON.stringify(part.rawValue) ?? ''}`);
  }
  return out;
}

/** `told`, shortened for a failure message: the rejection and error parts lead (the cause), raw parts follow. */
export function seen(parts: ReadonlyArray<HarnessV1StreamPart>, rejection?: unknown): string {
  const all = told(parts, rejection);
  const out = [...all.filter((line) => !line.startsWith('raw part: ')), ...all.filter((line) => line.startsWith('raw part: '))].map((line) => clip(line));
  return out.length > 0 ? out.slice(0, 8).join('; ') + (out.length > 8 ? `; … (${out.length - 8} more)` : '') : 'no error part, no raw part';
}

export const textOf = (parts: ReadonlyArray<HarnessV1StreamPart>) => parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');

/** Runs a turn to its end; a turn that cannot start or rejects is a failure that says what the host saw. */
export async function turn(session: HarnessV1Session, prompt: string, what: string, tools?: HarnessV1ToolSpec[]): Promise<HarnessV1StreamPart[]> {
  const parts: HarnessV1StreamPart[] = [];
  try {
    const control = await session.doPromptTurn({ prompt, ...(tools ? { tools } : {}), emit: (part) => parts.push(part) });
    await control.done;
  } catch (error) {
    throw new ConformanceFailure(`${what}: the turn failed: ${clip(errorText(error))} (${seen(parts)})`);
  }
  return parts;
}

export function checkTurnShape(parts: HarnessV1StreamPart[], what: string): void {
  check(parts[0]?.type === 'stream-start', `${what}: first part is ${parts[0]?.type ?? 'missing'}, expected stream-start`);
  check(parts.at(-1)?.type === 'finish', `${what}: last part is ${parts.at(-1)?.type ?? 'missing'}, expected finish (${seen(parts)})`);
  parts.forEach((part, i) => {
    const parsed = streamPartSchema.safeParse(part);
    check(parsed.success, `${what}: part ${i} (${part.type}) does not match HarnessV1StreamPart: ${parsed.error?.issues[0]?.message}`);
  });
}

/** The turn finished `stop`: anything else (error, other) fails with what the host was told. */
export function checkStopped(parts: HarnessV1StreamPart[], what: string): void {
  checkTurnShape(parts, what);
  const finish = parts.at(-1);
  const reason = finish?.type === 'finish' ? finish.finishReason : undefined;
  check(
    reason?.unified === 'stop',
    `${what}: finished ${reason?.unified ?? 'without a reason'}${reason?.raw === undefined ? '' : ` (raw ${JSON.stringify(reason.raw)})`}, expected stop; the host saw: ${seen(parts)}`,
  );
}

export function matches(text: string, want: string | RegExp | undefined): boolean {
  if (want === undefined) return text.length > 0;
  return typeof want === 'string' ? text === want : want.test(text);
}

/** A text turn's outcome: finish `stop` with the reply the runner expects. */
/** A host-tool turn as the runner gives it (AdapterConformanceContext's prompts.hostTool). */
export type HostToolSpec = { prompt: string; tools: HarnessV1ToolSpec[]; output: unknown; reply?: string | RegExp };

export function checkTextTurn(ctx: { readonly prompts: { readonly textReply?: string | RegExp } }, parts: HarnessV1StreamPart[], what: string): void {
  checkStopped(parts, what);
  const text = textOf(parts);
  const want = ctx.prompts.textReply;
  check(matches(text, want), `${what}: the reply reads ${JSON.stringify(clip(text))}, expected ${want === undefined ? 'some text' : typeof want === 'string' ? JSON.stringify(want) : String(want)}`);
}

/** The turn's control, for answers to parts emitted before doPromptTurn returned it. */
export function deferredControl() {
  let controlled!: (control: HarnessV1PromptControl) => void;
  const controlling = new Promise<HarnessV1PromptControl>((resolve) => (controlled = resolve));
  return { controlled, controlling };
}

/** A host tool turn to its end: exactly one host tool-call naming `spec.tools[0]`, answered, finish stop, the reply after it. */
export async function hostToolTurn(session: HarnessV1Session, spec: HostToolSpec, what: string): Promise<void> {
  const parts: HarnessV1StreamPart[] = [];
  const answers: Array<Promise<unknown>> = [];
  const { controlled, controlling } = deferredControl();
  try {
    const control = await session.doPromptTurn({
      prompt: spec.prompt,
      tools: spec.tools,
      emit: (part) => {
        parts.push(part);
        if (part.type === 'tool-call' && part.providerExecuted !== true) {
          answers.push(controlling.then((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: spec.output })));
        }
      },
    });
    controlled(control);
    await control.done;
  } catch (error) {
    throw new ConformanceFailure(`${what}: the turn failed: ${clip(errorText(error))} (${seen(parts)})`);
  }
  const calls = parts.filter((p): p is Extract<HarnessV1StreamPart, { type: 'tool-call' }> => p.type === 'tool-call' && p.providerExecuted !== true);
  check(calls.length === 1, `${what}: expected exactly one host tool-call part, got ${calls.length}; the text reads ${JSON.stringify(clip(textOf(parts)))} (${seen(parts)})`);
  const call = calls[0]!;
  check(call.toolName === spec.tools[0]?.name, `${what}: the tool-call names ${JSON.stringify(call.toolName)}, expected ${JSON.stringify(spec.tools[0]?.name)}`);
  const refused = (await Promise.allSettled(answers)).find((answer) => answer.status === 'rejected');
  check(!refused, `${what}: the tool's result was refused: ${refused?.status === 'rejected' ? clip(errorText(refused.reason)) : ''}`);
  checkStopped(parts, what);
  if (spec.reply !== undefined) {
    const after = textOf(parts.slice(parts.indexOf(call) + 1));
    check(matches(after, spec.reply), `${what}: after the tool call the reply reads ${JSON.stringify(clip(after))}, expected ${typeof spec.reply === 'string' ? JSON.stringify(spec.reply) : String(spec.reply)}: the tool's output did not reach the model`);
  }
}

/**
 * Parts with their ids renamed by order of first appearance, so two runs of
 * the same prompt in different sessions (different seqs) compare equal. Raw
 * parts keep only their type: they pass CLI output through verbatim, and CLIs
 * print per-session uuids and timings in it.
 */
export function normalizeIds(parts: ReadonlyArray<HarnessV1StreamPart>): unknown[] {
  const ids = new Map<string, string>();
  const rename = (id: string) => {
    if (!ids.has(id)) ids.set(id, `#${ids.size}`);
    return ids.get(id)!;
  };
  return parts.map((part) => {
    if (part.type === 'raw') return { type: 'raw' };
    const copy: Record<string, unknown> = { ...part };
    for (const key of ['id', 'toolCallId', 'approvalId']) if (typeof copy[key] === 'string') copy[key] = rename(copy[key] as string);
    return copy;
  });
}
