// A denied approval in the user's view: the REAL HarnessAgent of @ai-sdk/harness 1.0.x asks for the
// approval (its stream pauses), continueStream answers it denied, and useChat's path (uiMessageChunkSchema +
// readUIMessageStream, the second stream folded into the first message) shows the tool part as the SDK shows
// a denial the user gave: `approval-responded` with `approval.approved: false` and the reason (what
// convertToModelMessages reads as an execution-denied result), never a tool output or error. For the CLI's
// own approval (the fixture's APPROVE:) and a host tool under toolApproval 'user-approval'.
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { readUIMessageStream, tool, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgentKit, type AgentKit } from './harness-agent-helpers.ts';

let kit: AgentKit;
beforeAll(async () => {
  kit = await createAgentKit('denial');
});
afterAll(async () => {
  await kit?.cleanup();
});

/** Folds `stream` into `message` (useChat's continuation of one assistant message), every chunk checked by the schema. */
async function fold(stream: ReadableStream<UIMessageChunk>, message?: UIMessage): Promise<{ message: UIMessage | undefined; invalid: unknown[] }> {
  const invalid: unknown[] = [];
  const checked = stream.pipeThrough(
    new TransformStream<UIMessageChunk, UIMessageChunk>({
      async transform(chunk, out) {
        if (!(await uiMessageChunkSchema().validate!(chunk)).success) invalid.push(chunk);
        out.enqueue(chunk);
      },
    }),
  );
  let last = message;
  for await (const next of readUIMessageStream({ stream: checked, terminateOnError: true, ...(message ? { message } : {}) })) last = next;
  return { message: last, invalid };
}

type ToolPart = { type: string; state: string; approval?: { id: string; approved?: boolean; reason?: string }; output?: unknown; errorText?: string };
const toolPart = (message: UIMessage | undefined) => (message?.parts ?? []).find((part) => part.type.startsWith('tool-') || part.type === 'dynamic-tool') as ToolPart | undefined;

/** Streams `prompt`, which asks one approval, folds it, and denies it with `reason` in continueStream; the tool part before and after. */
async function denyFirstApproval(agent: HarnessAgent, session: Parameters<HarnessAgent['stream']>[0]['session'], prompt: string, reason: string) {
  const first = await agent.stream({ session, prompt });
  const asked = await fold(first.toUIMessageStream());
  expect(asked.invalid).toEqual([]);
  const requested = toolPart(asked.message);
  expect(requested?.state).toBe('approval-requested');
  const rest = await agent.continueStream({
    session,
    toolApprovalContinuations: [{ type: 'tool-approval-response', approvalId: requested!.approval!.id, approved: false, reason }],
  });
  const answered = await fold(rest.toUIMessageStream(), asked.message);
  expect(answered.invalid).toEqual([]);
  return { requested, denied: toolPart(answered.message), rest };
}

describe('a denied approval shows as the AI SDK shows a denial', () => {
  it("the CLI's own approval (builtin): approval-responded, approved false with the reason; no output, no error", async () => {
    const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider });
    const session = await agent.createSession();
    try {
      const { requested, denied, rest } = await denyFirstApproval(agent, session, 'guarded LINES:1 APPROVE:rm', 'not this one');
      expect(denied).toMatchObject({ state: 'approval-responded', approval: { approved: false, reason: 'not this one' } });
      // (The fixture's `rm` is no declared builtin, so the SDK flags its input when the call arrives: an errorText the denial leaves as it was.)
      expect([denied?.output, denied?.errorText], 'no output, no error from the denial').toEqual([undefined, requested?.errorText]);
      expect(await rest.finishReason).toBe('stop');
    } finally {
      await session.destroy();
    }
  });

  it("a host tool under toolApproval 'user-approval': approval-responded, approved false; the tool never runs, toolResults stays empty", async () => {
    let runs = 0;
    const lookup = tool({ description: 'looks up', inputSchema: z.object({ turn: z.number() }), execute: async () => (runs++, 'found') });
    const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider, tools: { lookup }, toolApproval: { lookup: 'user-approval' } } as never);
    const session = await agent.createSession();
    try {
      const { denied, rest } = await denyFirstApproval(agent, session, 'ask first LINES:1 TOOL:lookup', 'not now');
      expect(denied).toMatchObject({ state: 'approval-responded', approval: { approved: false, reason: 'not now' } });
      expect([denied?.output, denied?.errorText], 'no output, no error').toEqual([undefined, undefined]);
      expect(runs).toBe(0);
      expect(await rest.toolResults).toEqual([]);
      expect(await rest.finishReason).toBe('stop');
    } finally {
      await session.destroy();
    }
  });

  it("a host tool under toolApproval 'denied' (the SDK denies it in the stream): approval-responded, approved false; never output-available", async () => {
    let runs = 0;
    const lookup = tool({ description: 'looks up', inputSchema: z.object({ turn: z.number() }), execute: async () => (runs++, 'found') });
    const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider, tools: { lookup }, toolApproval: { lookup: { type: 'denied', reason: 'never' } } } as never);
    const session = await agent.createSession();
    try {
      const result = await agent.stream({ session, prompt: 'auto denied LINES:1 TOOL:lookup' });
      const { message, invalid } = await fold(result.toUIMessageStream());
      expect(invalid).toEqual([]);
      const denied = toolPart(message);
      expect(denied).toMatchObject({ state: 'approval-responded', approval: { approved: false, reason: 'never', isAutomatic: true } });
      expect([denied?.output, denied?.errorText], 'no output, no error').toEqual([undefined, undefined]);
      expect(runs).toBe(0);
      expect(await result.toolResults).toEqual([]);
      expect(await result.finishReason).toBe('stop');
    } finally {
      await session.destroy();
    }
  });
});
