// End to end through the REAL HarnessAgent of @ai-sdk/harness 1.0.x: the real Claude Code 2.1.328 behind
// createBridgeHarness(claudeCodeAdapter), on the local sandbox provider inside the scripted model's
// loopback-only namespace (test/e2e/support.ts). The flow test/host/harness-agent.test.ts runs with the
// fixture: stream and generate; suspendTurn → continueFrom → continueStream in a new agent; stop and
// detach → resumeFrom; compact; an aborted turn through useChat's path; destroy. Every part the sessions
// emit is checked against the SDK's stream-part schema. The host tool holds the turn at its call, so
// the suspend lands mid-turn by construction.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { harnessV1StreamPartSchema } from '@ai-sdk/harness';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claudeCodeAdapter } from '../../host/adapters/claude-code/claude-code.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { recordingParts, throughUseChat, uiText } from '../host/harness-agent-helpers.ts';
import { useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'claude-agent',
  install: () => ensureCli('claude-code'),
  adapter: (bin, modelUrl) => withHostInstalledCli(claudeCodeAdapter({ binPath: bin, extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test' } })),
  requestPath: '/v1/messages',
});

const refused: HarnessV1StreamPart[] = [];
const emitted: HarnessV1StreamPart[] = [];
const harness = () =>
  recordingParts(env.harness(), (part) => {
    emitted.push(part);
    if (!harnessV1StreamPartSchema.safeParse(part).success) refused.push(part);
  });

const echoUpper = (execute: (text: string) => Promise<string>) =>
  tool({ description: 'Echo in upper case', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => execute(text) });

const agentWith = (tools: Record<string, ReturnType<typeof echoUpper>> = {}) =>
  new HarnessAgent({ harness: harness(), sandbox: env.agentSandbox(), permissionMode: 'allow-all', tools });

async function streamedText(result: { textStream: AsyncIterable<string> }): Promise<string> {
  let text = '';
  for await (const delta of result.textStream) text += delta;
  return text;
}

describe('claude-code through the real HarnessAgent', () => {
  it('stream and generate on one session; stop → resumeFrom and detach → resumeFrom in new agents keep the conversation', async () => {
    const agent = agentWith();
    const session = await agent.createSession();
    const streamed = await agent.stream({ session, prompt: 'SCENARIO:text remember the word apple' });
    expect(await streamedText(streamed)).toContain('remember the word apple');
    expect(await streamed.finishReason).toBe('stop');
    const generated = await agent.generate({ session, prompt: 'SCENARIO:text second turn' });
    expect(generated.text).toContain('second turn');

    const stopped = await session.stop();
    const afterStop = agentWith();
    const resumed = await afterStop.createSession({ sessionId: session.sessionId, resumeFrom: stopped });
    expect(resumed.isResume).toBe(true);
    const before = env.requests().length;
    expect((await afterStop.generate({ session: resumed, prompt: 'SCENARIO:text what was the word' })).finishReason).toBe('stop');
    expect(JSON.stringify(env.requests(before)[0]?.body), 'the resumed CLI sends the earlier conversation').toContain('apple');

    const detached = await resumed.detach();
    const afterDetach = agentWith();
    const again = await afterDetach.createSession({ sessionId: session.sessionId, resumeFrom: detached });
    expect((await afterDetach.generate({ session: again, prompt: 'SCENARIO:text after detach' })).text).toContain('after detach');
    await again.destroy();
    expect(refused).toEqual([]);
  }, 240_000);

  it('suspendTurn at a host tool call → continueFrom in a new agent: the tool result reaches Claude and the turn finishes once', async () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    let entered!: () => void;
    const inTool = new Promise<void>((resolve) => (entered = resolve));
    const first = agentWith({ echo_upper: echoUpper(async (text) => (entered(), await opened, `HOST SAYS HI ${text.toUpperCase()}`)) });
    const session = await first.createSession();
    const result = await first.stream({ session, prompt: 'SCENARIO:mcp call the host tool' });
    const reading = streamedText(result);
    await inTool;
    const suspending = session.suspendTurn();
    open();
    const state = await suspending;
    const head = await reading;
    expect(state.type).toBe('continue-turn');

    const second = agentWith({ echo_upper: echoUpper(async () => 'SHOULD NOT RUN AGAIN') });
    const continued = await second.createSession({ sessionId: session.sessionId, continueFrom: state });
    const rest = await second.continueStream({ session: continued });
    const tail = await streamedText(rest);
    expect(await rest.finishReason).toBe('stop');
    expect(head + tail).toMatch(/Last tool result was: .*HOST SAYS HI/);
    expect(head + tail).not.toContain('SHOULD NOT RUN AGAIN');
    expect(emitted.filter((part) => part.type === 'finish').length).toBeGreaterThan(0);
    await continued.destroy();
    expect(refused).toEqual([]);
  }, 240_000);

  it('compact runs (/compact) and the session takes the next turn; an aborted turn reaches useChat intact; destroy removes the sandbox', async () => {
    const agent = agentWith();
    const session = await agent.createSession();
    await agent.generate({ session, prompt: 'SCENARIO:text a turn to compact' });
    await session.compact();
    expect((await agent.generate({ session, prompt: 'SCENARIO:text after compact' })).text).toContain('after compact');

    const controller = new AbortController();
    const aborted = await agent.stream({ session, prompt: 'SCENARIO:slow INTERVAL:200 stream slowly', abortSignal: controller.signal });
    const { chunks, invalid, message } = await throughUseChat(aborted.toUIMessageStream(), (m) => {
      if (uiText(m).length > 0) controller.abort(); // after the first streamed text
    });
    expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
    expect(['abort', 'finish']).toContain((chunks.at(-1) as { type: string }).type);
    expect(uiText(message).length).toBeGreaterThan(0);
    expect((await agent.generate({ session, prompt: 'SCENARIO:text after the interrupt' })).text).toContain('after the interrupt');

    const dir = join(env.sandboxRoot(), session.sessionId);
    await session.destroy();
    expect(await stat(dir).catch(() => null)).toBeNull();
    expect(refused).toEqual([]);
  }, 240_000);
});
