// Stop means stop, in the user's view (docs/guarantees.md#stop): the REAL HarnessAgent of @ai-sdk/harness
// 1.0.x stops a session mid-turn (session.stop(): it suspends the turn, then stops the sandbox), and a new
// agent resumes it with resumeFrom. Folded by useChat's path (uiMessageChunkSchema + readUIMessageStream),
// a continueStream of the stopped turn shows no line the first stream showed, re-runs nothing, and ends
// the turn with finish 'other'; the next prompt runs. A resumeFrom without its continueFrom takes the next
// prompt at once; so does a session resumed after the HarnessV1 contract's doStop mid-turn. The fixture CLI
// prints a line every 20 ms of a 200-line turn: stopped after 5, the turn cannot have reached its end.
import { HarnessAgent, type HarnessAgentSession } from '@ai-sdk/harness/agent';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeSessionState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createAgentKit, fixtureLines, throughUseChat, uiText, type AgentKit } from './harness-agent-helpers.ts';
import { createKit, runTurn, textOf } from './session-helpers.ts';

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

describe('a turn stopped through the HarnessV1 contract (doStop mid-turn)', () => {
  it('the turn stops in its stream; a resumed session takes the next prompt and shows nothing of the stopped turn', async () => {
    const kit2 = await createKit('stop-v1');
    try {
      const { session } = await kit2.start('v1-stop');
      const parts: HarnessV1StreamPart[] = [];
      let stopping: Promise<unknown> | undefined;
      const control = await session.doPromptTurn({
        prompt,
        emit: (part) => {
          parts.push(part);
          if (part.type === 'text-delta' && parts.filter((p) => p.type === 'text-delta').length === 5) stopping = Promise.resolve(session.doStop());
        },
      });
      await control.done;
      const state = (await stopping!) as HarnessV1ResumeSessionState;
      const shown = textOf(parts);
      expect(wholeTurn.startsWith(shown) && shown.length < wholeTurn.length).toBe(true);
      // The turn ends stopped: its finish reaches this stream when its records got out before the bridge closed, else the state keeps the turn.
      const last = parts.at(-1);
      if ((state.data as { turn?: unknown }).turn === undefined) expect(last).toMatchObject({ type: 'finish', finishReason: { unified: 'other' } });
      const resumed = await kit2.resume('v1-stop', state);
      const next = await runTurn(resumed.session, 'after the v1 stop LINES:1');
      expect(textOf(next)).toBe(fixtureLines('after the v1 stop LINES:1', 1));
      await resumed.session.doDestroy();
    } finally {
      await kit2.cleanup();
    }
  });
});
