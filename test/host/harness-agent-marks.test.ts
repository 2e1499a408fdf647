// The recomputed and re-delivered marks in the user's view (docs/guarantees.md#marks): through the REAL
// HarnessAgent of @ai-sdk/harness 1.0.x, which drops stream-start warnings and passes raw parts to fullStream
// only, the marks ride on harnessMetadata: the marked text part of the UI message (readUIMessageStream) has
// providerMetadata.harnessBridge, and so do the steps and the result (stream and generate()).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../host/sandbox/local/pids.ts';
import type { HarnessV1ResumeSessionState } from '../../protocol/harness-v1/session.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { createAgentKit, fixtureLines, throughUseChat, type AgentKit } from './harness-agent-helpers.ts';

let kit: AgentKit;
beforeAll(async () => {
  kit = await createAgentKit('marks');
});
afterAll(async () => {
  await kit?.cleanup();
});

async function bridgePidOf(sessionId: string): Promise<number> {
  const files = (await readdir(join(kit.root, 'sandboxes'), { recursive: true })).filter((path) => path.endsWith('bridge.json') && path.includes(sessionId));
  expect(files, `one bridge.json for ${sessionId}`).toHaveLength(1);
  return (JSON.parse(await readFile(join(kit.root, 'sandboxes', files[0]!), 'utf8')) as { pid: number }).pid;
}

type TextPart = { type: 'text'; text: string; providerMetadata?: { harnessBridge?: Record<string, unknown> } };
const textParts = (message: UIMessage | undefined) => (message?.parts ?? []).filter((part): part is TextPart & UIMessage['parts'][number] => part.type === 'text');
const lineCount = (message: UIMessage) => textParts(message).reduce((n, part) => n + part.text.split('\n').length - 1, 0);

describe('recomputed and re-delivered output is marked where the AI SDK keeps it', () => {
  it('recomputed (the bridge SIGKILLed, no survive: the turn is rerun): the rerun text part, the steps and the result carry harnessBridge.recomputed', { timeout: 90_000 }, async () => {
    const agent = new HarnessAgent({ harness: kit.harness(fixtureAdapter({ survive: false })), sandbox: kit.provider });
    const session = await agent.createSession();
    try {
      const prompt = 'rerun me LINES:200 INTERVAL:20';
      const result = await agent.stream({ session, prompt });
      let killing: Promise<void> | undefined;
      const { invalid, message } = await throughUseChat(result.toUIMessageStream(), (next) => {
        if (killing || lineCount(next) < 5) return;
        killing = (async () => {
          const pid = await bridgePidOf(session.sessionId);
          process.kill(pid, 'SIGKILL');
          while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 5));
        })();
      });
      await killing;
      expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
      const parts = textParts(message);
      const marked = parts.filter((part) => part.providerMetadata?.harnessBridge?.recomputed !== undefined);
      expect(marked.map((part) => part.text), 'the rerun text part: the whole turn again, marked').toEqual([fixtureLines(prompt, 200)]);
      expect(parts[0]!.providerMetadata?.harnessBridge, 'the text shown before the kill is not marked').toBeUndefined();
      expect(await result.finishReason).toBe('stop');
      const recomputed = (await result.providerMetadata)?.harnessBridge?.recomputed as { turnId: string; rerunOf: string } | undefined;
      expect(recomputed?.rerunOf, 'the result names the turn it recomputed').toMatch(/^turn-/);
      const steps = await result.steps;
      expect(steps.at(-1)?.providerMetadata?.harnessBridge?.recomputed).toEqual(recomputed);
    } finally {
      await session.destroy();
    }
  });

  it('re-delivered (a second host takes over from a checkpoint): the repeated range is marked on its text part and on the result', { timeout: 90_000 }, async () => {
    const checkpoints: HarnessV1ResumeSessionState[] = [];
    const first = new HarnessAgent({ harness: kit.harness(fixtureAdapter(), { onCheckpoint: (state) => void checkpoints.push(state) }), sandbox: kit.provider });
    const session = await first.createSession();
    const prompt = 'take me over LINES:30 INTERVAL:20';
    const result = await first.stream({ session, prompt });
    let lines = 0;
    const firstRead = (async () => {
      for await (const delta of result.textStream) if (delta.endsWith('\n') && ++lines === 5) return;
    })();
    await firstRead;
    // The first host is "lost" here: a second one resumes from the turn-start checkpoint, so the lines the first showed come again.
    const state = checkpoints[0]!;
    expect(state.continueFrom, 'the checkpoint holds the turn in flight').toBeDefined();
    const second = new HarnessAgent({ harness: kit.harness(fixtureAdapter()), sandbox: kit.provider });
    const resumed = await second.createSession({ sessionId: session.sessionId, resumeFrom: state as never });
    try {
      const rest = await second.continueStream({ session: resumed });
      const { invalid, message } = await throughUseChat(rest.toUIMessageStream());
      expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
      const parts = textParts(message);
      expect(parts.map((part) => part.text).join('')).toBe(fixtureLines(prompt, 30));
      const range = parts[0]?.providerMetadata?.harnessBridge?.redelivered as { afterSeq: number; throughSeq: number } | undefined;
      expect(range, 'the text part that opened in the re-delivered range is marked').toBeDefined();
      expect(range!.throughSeq).toBeGreaterThan(range!.afterSeq);
      const onResult = (await rest.providerMetadata)?.harnessBridge?.redelivered;
      expect(onResult, 'the result lists the range').toEqual([range]);
      expect(await rest.finishReason).toBe('stop');
    } finally {
      await resumed.destroy();
      await Promise.resolve(result.consumeStream()).catch(() => undefined); // the fenced first host's stream
    }
  });
});
