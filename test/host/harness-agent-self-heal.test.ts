// The user's view of a bridge crash: the REAL HarnessAgent of @ai-sdk/harness 1.0.x streaming a turn
// through useChat's path (SSE, uiMessageChunkSchema, readUIMessageStream) while the bridge is SIGKILLed
// at the host tool call, and the tool's answer given while no bridge runs. No application recovery code:
// the session revives the bridge (launch survive: the CLI is adopted), the message text is the
// uninterrupted one, the tool ran once, one finish. The gate holds the CLI at its tool call, so the kill
// lands mid-turn by construction.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../host/sandbox/local/pids.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { createAgentKit, fixtureLines, gateTool, throughUseChat, uiText, type AgentKit } from './harness-agent-helpers.ts';

let kit: AgentKit;
beforeAll(async () => {
  kit = await createAgentKit('self-heal');
});
afterAll(async () => {
  await kit?.cleanup();
});

/** The pid in the bridge.json of `sessionId` (under the kit's sandboxes). */
async function bridgePidOf(sessionId: string): Promise<number> {
  const files = (await readdir(join(kit.root, 'sandboxes'), { recursive: true })).filter((path) => path.endsWith('bridge.json') && path.includes(sessionId));
  expect(files, `one bridge.json for ${sessionId}`).toHaveLength(1);
  return (JSON.parse(await readFile(join(kit.root, 'sandboxes', files[0]!), 'utf8')) as { pid: number }).pid;
}

describe('HarnessAgent over a bridge that dies mid-turn', () => {
  it('useChat sees the uninterrupted message: the bridge SIGKILLed at the tool call, the answer given while none runs', { timeout: 60_000 }, async () => {
    const { gate, open, entered, state } = gateTool();
    const agent = new HarnessAgent({ harness: kit.harness(fixtureAdapter({ survive: true })), sandbox: kit.provider, tools: { gate } });
    const session = await agent.createSession();
    const prompt = 'healed LINES:4 TOOL:gate';
    const result = await agent.stream({ session, prompt });
    let killed = 0;
    void entered.then(async () => {
      killed = await bridgePidOf(session.sessionId);
      process.kill(killed, 'SIGKILL');
      while (isAlive(killed)) await new Promise((resolve) => setTimeout(resolve, 5));
      open(); // the tool's answer goes out while no bridge runs
    });
    const { chunks, invalid, message } = await throughUseChat(result.toUIMessageStream());
    expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
    expect(uiText(message)).toBe(fixtureLines(prompt, 4));
    expect(chunks.filter((chunk) => (chunk as { type: string }).type === 'finish')).toHaveLength(1);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(state.calls, 'the tool ran once').toBe(1);
    const revived = await bridgePidOf(session.sessionId);
    expect([killed > 0, revived !== killed, isAlive(revived)], 'a bridge the session started runs now').toEqual([true, true, true]);
    expect(kit.parts.filter((entry) => !entry.valid).map((entry) => entry.part)).toEqual([]);
    expect((await agent.generate({ session, prompt: 'next LINES:1' })).text).toBe(fixtureLines('next LINES:1', 1));
    await session.destroy();
  });
});
