// Stop means stop, in the user's view (docs/guarantees.md#stop): the REAL HarnessAgent of @ai-sdk/harness
// 1.0.x stops a session mid-turn (session.stop(): it suspends the turn, then stops the sandbox), and a new
// agent resumes it with resumeFrom. Folded by useChat's path (uiMessageChunkSchema + readUIMessageStream),
// a continueStream of the stopped turn shows no line the first stream showed, re-runs nothing, and ends
// the turn with finish 'other'; the next prompt runs. A resumeFrom without its continueFrom takes the next
// prompt at once. The fixture CLI prints a line every 20 ms of a 200-line turn: stopped after 5, the
// turn cannot have reached its end, whatever the machine's load.
import { HarnessAgent, type HarnessAgentSession } from '@ai-sdk/harness/agent';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentKit, fixtureLines, throughUseChat, uiText, type AgentKit } from './harness-agent-helpers.ts';

let kit: AgentKit;
beforeAll(async () => {
  kit = await createAgentKit('stop');
});
afterAll(async () => {
  await kit?.cleanup();
});

const agentOf = () => new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider });
const prompt = 'stop me LINES:200 INTERVAL:20';
const wholeTurn = fixtureLines(prompt, 200);

/** A turn stopped by session.stop() after its 5th delta: the text the user saw, and the state stop() returned. */
async function stoppedTurn() {
  const agent = agentOf();
  const session = await agent.createSession();
  const result = await agent.stream({ session, prompt });
  let shown = '';
  let deltas = 0;
  let stopping: ReturnType<typeof session.stop> | undefined;
  for await (const delta of result.textStream) {
    shown += delta;
    if (++deltas === 5) stopping = session.stop();
  }
  const state = await stopping!;
  expect(wholeTurn.startsWith(shown), 'the first stream is a prefix of the turn').toBe(true);
  return { sessionId: session.sessionId, shown, state };
}

async function destroyed(session: HarnessAgentSession, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } finally {
    await session.destroy();
  }
}

describe('a turn the user stopped (HarnessAgent session.stop() mid-turn)', () => {
  it('resumeFrom → continueStream shows no line again, re-runs nothing and ends the turn; the next prompt runs', async () => {
    const { sessionId, shown, state } = await stoppedTurn();
    expect(state.continueFrom?.type, '@ai-sdk/harness keeps the stopped turn as unfinished').toBe('continue-turn');
    const agent = agentOf();
    const resumed = await agent.createSession({ sessionId, resumeFrom: state });
    await destroyed(resumed, async () => {
      // @ai-sdk/harness's own rule (HarnessAgentSession.requirePromptableTurn): a state with a continueFrom is continued first.
      await expect(agent.generate({ session: resumed, prompt: 'too early LINES:1' })).rejects.toThrow(/unfinished turn and must be continued/);
      const rest = await agent.continueStream({ session: resumed });
      const { invalid, message } = await throughUseChat(rest.toUIMessageStream());
      expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
      const tail = uiText(message);
      expect(wholeTurn.startsWith(shown + tail), 'the continuation repeats nothing and skips nothing').toBe(true);
      expect((shown + tail).length, 'the stopped turn was not re-run').toBeLessThan(wholeTurn.length);
      expect(await rest.finishReason).toBe('other');
      // The bridge's stop hands the CLI its interrupt: the CLI's own word for the end (the fixture says 'interrupted'), or the bridge's 'stopped'.
      expect(['stopped', 'interrupted']).toContain(await rest.rawFinishReason);
      const next = await agent.generate({ session: resumed, prompt: 'after the stop LINES:2' });
      expect(next.text).toBe(fixtureLines('after the stop LINES:2', 2));
    });
  });

  it('resumeFrom without its continueFrom: the next prompt runs at once, and the stopped turn shows nothing', async () => {
    const { sessionId, state } = await stoppedTurn();
    const { continueFrom: _unfinished, ...parked } = state;
    const agent = agentOf();
    const resumed = await agent.createSession({ sessionId, resumeFrom: parked });
    await destroyed(resumed, async () => {
      const next = await agent.stream({ session: resumed, prompt: 'right after the stop LINES:2' });
      const { invalid, message } = await throughUseChat(next.toUIMessageStream());
      expect(invalid).toEqual([]);
      expect(uiText(message)).toBe(fixtureLines('right after the stop LINES:2', 2));
      expect(await next.finishReason).toBe('stop');
    });
  });
});
