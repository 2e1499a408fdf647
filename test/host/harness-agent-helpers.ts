// What the HarnessAgent tests share: the fixture adapter behind the REAL
// HarnessAgent of @ai-sdk/harness 1.0.x (its `agent` entry), on our local
// sandbox provider; a harness wrapper that validates every part our sessions
// emit against the SDK's own stream-part schema; the `gate` host tool, which
// holds the fixture CLI at its tool call until the test opens it (so a
// suspend or an abort lands mid-turn by construction, never by timing); and
// the UI path useChat takes (SSE, uiMessageChunkSchema, readUIMessageStream).
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { harnessV1StreamPartSchema } from '@ai-sdk/harness';
import { parseJsonEventStream } from '@ai-sdk/provider-utils';
import { JsonToSseTransformStream, readUIMessageStream, tool, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { z } from 'zod';
import type { CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { createBridgeHarness, type BridgeHarness, type BridgeHarnessSettings } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import type { HarnessV1, HarnessV1Session, HarnessV1StartOptions } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';

export type AgentKit = {
  root: string;
  provider: LocalSandboxProvider;
  /** Every part any session of this kit emitted, with the SDK schema's verdict on it. */
  parts: Array<{ part: HarnessV1StreamPart; valid: boolean }>;
  /** A new harness over `adapter` (default: the fixture), as a fresh host process builds it, recording parts. */
  harness(adapter?: CliAdapter<any>, settings?: BridgeHarnessSettings): BridgeHarness;
  cleanup(): Promise<void>;
};

export async function createAgentKit(name: string): Promise<AgentKit> {
  const root = await mkdtemp(join(tmpdir(), `hb-agent-${name}-`));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
  const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
  const parts: AgentKit['parts'] = [];
  const record = (part: HarnessV1StreamPart) => parts.push({ part, valid: harnessV1StreamPartSchema.safeParse(part).success });
  return {
    root,
    provider,
    parts,
    harness: (adapter = fixtureAdapter(), settings = {}) => recordingParts(createBridgeHarness(adapter, { probeTimeoutMs: 3_000, ...settings }), record),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The harness with every session's emitted parts passed to `record` on their way to the framework. */
export function recordingParts<H extends HarnessV1>(harness: H, record: (part: HarnessV1StreamPart) => void): H {
  const wrapSession = (session: HarnessV1Session): HarnessV1Session => ({
    get sessionId() {
      return session.sessionId;
    },
    get isResume() {
      return session.isResume;
    },
    doPromptTurn: (options) => session.doPromptTurn({ ...options, emit: (part) => (record(part), options.emit(part)) }),
    doContinueTurn: (options) => session.doContinueTurn({ ...options, emit: (part) => (record(part), options.emit(part)) }),
    doCompact: (instructions) => session.doCompact(instructions),
    doSuspendTurn: () => session.doSuspendTurn(),
    doDetach: () => session.doDetach(),
    doStop: () => session.doStop(),
    doDestroy: () => session.doDestroy(),
  });
  return { ...harness, doStart: async (options: HarnessV1StartOptions) => wrapSession(await harness.doStart(options)) };
}

/**
 * The `gate` host tool: its execute holds until `open()` (or the call's abort), so the fixture CLI waits at its
 * tool call. `calls` counts executions; `entered` resolves on the first.
 */
export function gateTool() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let enter!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const state = { calls: 0 };
  const gate = tool({
    description: 'waits until the test opens it',
    inputSchema: z.object({ turn: z.number() }),
    execute: async (_input, { abortSignal }) => {
      state.calls += 1;
      enter();
      await new Promise<void>((resolve, reject) => {
        void opened.then(resolve);
        abortSignal?.addEventListener('abort', () => reject(new Error('gate aborted')), { once: true });
      });
      return 'opened';
    },
  });
  return { gate, open, entered, state };
}

/** A `gate` tool that opens at once (the same name and input, for the slice that continues the turn). */
export const openGate = tool({ description: 'opens at once', inputSchema: z.object({ turn: z.number() }), execute: async () => 'opened' });

/**
 * What useChat does with a turn: its UI message stream as SSE, parsed back with `ai`'s uiMessageChunkSchema
 * (DefaultChatTransport's check: a chunk the schema rejects is an error), read into messages with
 * readUIMessageStream. Returns every chunk, whether each validated, and the last message.
 */
export async function throughUseChat(
  stream: ReadableStream<UIMessageChunk>,
  onMessage?: (message: UIMessage) => void,
): Promise<{ chunks: unknown[]; invalid: unknown[]; message: UIMessage | undefined }> {
  const chunks: unknown[] = [];
  const invalid: unknown[] = [];
  const sse = stream.pipeThrough(new JsonToSseTransformStream()).pipeThrough(new TextEncoderStream());
  const parsed = parseJsonEventStream({ stream: sse, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: boolean; value?: UIMessageChunk; rawValue: unknown }, UIMessageChunk>({
      transform(result, out) {
        chunks.push(result.rawValue);
        if (result.success && result.value) out.enqueue(result.value);
        else invalid.push(result.rawValue);
      },
    }),
  );
  let message: UIMessage | undefined;
  for await (const next of readUIMessageStream({ stream: parsed })) {
    message = next;
    onMessage?.(next);
  }
  return { chunks, invalid, message };
}

/** The text parts of a UI message, joined. */
export function uiText(message: UIMessage | undefined): string {
  return (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
}

/** The lines the fixture CLI prints for `prompt` with LINES:n: `<prompt> #i\n`. */
export function fixtureLines(prompt: string, count: number, instructions?: string): string {
  const text = instructions ? `${instructions}\n${prompt}` : prompt;
  return Array.from({ length: count }, (_, i) => `${text} #${i}\n`).join('');
}
