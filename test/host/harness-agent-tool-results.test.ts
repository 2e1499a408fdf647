// Host tool results in the user's view: the REAL HarnessAgent of @ai-sdk/harness 1.0.x runs the host tool, submits
// its output, and takes the harness's echoed `tool-result` part as the call's outcome (docs/guarantees.md#ui).
// Folded by useChat's path (uiMessageChunkSchema + readUIMessageStream) the tool part must reach
// output-available, and generate() must list the result — for a call the CLI asked on its stdout (the fixture)
// and one it made over the bridge's MCP endpoint. Without the echo the UI part stays input-available.
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { tool, type UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CliAdapter } from '../../host/adapter-kit/adapter.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { echoUpperTool, mcpClientAdapter } from '../fixtures/mcp-client-adapter.ts';
import { createAgentKit, fixtureLines, throughUseChat, uiText, type AgentKit } from './harness-agent-helpers.ts';

let kit: AgentKit;
beforeAll(async () => {
  kit = await createAgentKit('tool-results');
});
afterAll(async () => {
  await kit?.cleanup();
});

/** The MCP stand-in's translator with the finish-step @ai-sdk/harness requires before its finish. */
function withFinishStep<S>(adapter: CliAdapter<S>): CliAdapter<S> {
  const step: CliAdapter<S>['translator']['step'] = (state, record) => {
    const out = adapter.translator.step(state, record);
    const parts = out.parts.flatMap((part): HarnessV1StreamPart[] =>
      part.type === 'finish' ? [{ type: 'finish-step', finishReason: part.finishReason, usage: part.totalUsage }, part] : [part],
    );
    return { state: out.state, parts };
  };
  return { ...adapter, translator: { ...adapter.translator, step } };
}

function toolParts(message: UIMessage | undefined) {
  return (message?.parts ?? []).filter((part) => part.type.startsWith('tool-') || part.type === 'dynamic-tool') as Array<{
    type: string;
    toolCallId: string;
    state: string;
    output?: unknown;
    errorText?: string;
  }>;
}

describe('host tool results reach the UI message and generate()', () => {
  it('a stdin tool call (fixture): the UI tool part is output-available with the output, once; generate() lists it', async () => {
    let calls = 0;
    const gate = tool({ description: 'answers', inputSchema: z.object({ turn: z.number() }), execute: async () => (calls++, 'opened') });
    const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider, tools: { gate } });
    const session = await agent.createSession();
    const prompt = 'tool turn LINES:2 TOOL:gate';
    const result = await agent.stream({ session, prompt });
    const { invalid, message } = await throughUseChat(result.toUIMessageStream());
    expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
    expect(uiText(message)).toContain(fixtureLines(prompt, 2));
    const parts = toolParts(message);
    expect(parts.map((part) => [part.type, part.state, part.output])).toEqual([['tool-gate', 'output-available', 'opened']]);
    expect(calls).toBe(1);

    const generated = await agent.generate({ session, prompt: 'again LINES:1 TOOL:gate' });
    expect(generated.toolResults.map((entry) => [entry.toolName, entry.output])).toEqual([['gate', 'opened']]);
    expect(calls).toBe(2);
    await session.destroy();
  });

  it('a failing execute: the CLI reads the error, and the UI tool part is settled (not left input-available)', async () => {
    const gate = tool({
      description: 'fails',
      inputSchema: z.object({ turn: z.number() }),
      execute: async (): Promise<string> => {
        throw new Error('lookup failed');
      },
    });
    const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider, tools: { gate } });
    const session = await agent.createSession();
    const result = await agent.stream({ session, prompt: 'failing LINES:1 TOOL:gate' });
    const { invalid, message } = await throughUseChat(result.toUIMessageStream());
    expect(invalid).toEqual([]);
    const parts = toolParts(message);
    expect(parts).toHaveLength(1);
    expect(parts[0]!.state).not.toBe('input-available');
    expect(JSON.stringify(parts[0]!.output ?? parts[0]!.errorText)).toContain('lookup failed');
    await session.destroy();
  });

  it('a host tool over MCP (bridge-relayed call): echoed from the journaled tool-result record', async () => {
    let calls = 0;
    const echo_upper = tool({ description: echoUpperTool.description, inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => (calls++, text.toUpperCase()) });
    const agent = new HarnessAgent({ harness: kit.harness(withFinishStep(mcpClientAdapter())), sandbox: kit.provider, tools: { echo_upper } });
    const session = await agent.createSession();
    const generated = await agent.generate({ session, prompt: 'call it' });
    expect(calls).toBe(1);
    expect(generated.toolResults.map((entry) => [entry.toolName, entry.output])).toEqual([['echo_upper', 'X']]);
    await session.destroy();
  });
});
