// The user's view of a real CLI's turn (docs/guarantees.md#ui), for every real-CLI suite: the REAL HarnessAgent
// of @ai-sdk/harness 1.0.x, its toUIMessageStream, and `ai`'s readUIMessageStream with terminateOnError
// (test/host/ui-fold.ts). A host-tool turn is run whole, then again suspended while the tool runs and continued
// by a fresh HarnessAgent: the message folded from both streams is the uninterrupted one, every chunk valid, the
// tool part output-available with the host's output, and the tool ran once. The host tool holds the turn at its
// call, so the cut lands mid-turn by construction.
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { tool, type UIMessage } from 'ai';
import { expect } from 'vitest';
import { z } from 'zod';
import { foldUI, uiView, type Folded } from '../host/ui-fold.ts';
import type { E2eEnv } from './support.ts';

const hostSays = (text: string) => `HOST SAYS HI ${text.toUpperCase()}`;

const echoUpper = (execute: (text: string) => Promise<string>) =>
  tool({ description: 'Echo in upper case', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => execute(text) });

/**
 * What the two runs must agree on: the message as uiView compares it, with
 * - tool call ids numbered in order (the CLI's own differ per session);
 * - Codex's `Wall time: N seconds` in an MCP result (which the scripted model quotes back) as `Wall time: T`;
 * - step boundaries left out: the SDK starts a step for every stream it folds, so a turn continued in a new stream
 *   shows one more step-start, at the cut, where the CLI reports no step boundary (ACP agents). Counted apart.
 */
function comparable(message: UIMessage | undefined) {
  const ids = new Map<string, string>();
  return uiView(message)
    .parts.filter((part) => part.type !== 'step-start')
    .map((part) => {
      if (part.type === 'text') return { ...part, text: part.text.replace(/Wall time: [\d.]+ seconds/g, 'Wall time: T') };
      if (!('toolCallId' in part)) return part;
      if (!ids.has(part.toolCallId)) ids.set(part.toolCallId, `call-${ids.size + 1}`);
      return { ...part, toolCallId: ids.get(part.toolCallId)! };
    });
}
const steps = (message: UIMessage | undefined) => uiView(message).parts.filter((part) => part.type === 'step-start').length;

function expectClean(folded: Folded, what: string): void {
  expect(folded.error, `${what}: readUIMessageStream folds every chunk`).toBeUndefined();
  expect(folded.invalid, `${what}: chunks uiMessageChunkSchema refused`).toEqual([]);
  expect(folded.errors, `${what}: error chunks`).toEqual([]);
}

/** The host tool's part in a folded message (the agent names it tool-<name>). */
const toolPart = (message: UIMessage | undefined) => message?.parts.find((part) => part.type === 'tool-echo_upper') as { state?: string; output?: unknown } | undefined;

export async function uiSuspendAtHostTool(env: E2eEnv, prompt: string): Promise<void> {
  const agentWith = (execute: (text: string) => Promise<string>) =>
    new HarnessAgent({ harness: env.harness(), sandbox: env.agentSandbox(), permissionMode: 'allow-all', tools: { echo_upper: echoUpper(execute) } });

  const whole = agentWith(async (text) => hostSays(text));
  const wholeSession = await whole.createSession();
  const uninterrupted = await foldUI((await whole.stream({ session: wholeSession, prompt })).toUIMessageStream());
  await wholeSession.destroy();
  expectClean(uninterrupted, 'uninterrupted');
  expect(toolPart(uninterrupted.message), 'the host tool part, uninterrupted').toMatchObject({ state: 'output-available', output: expect.stringContaining('HOST SAYS HI') });

  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let entered!: () => void;
  const inTool = new Promise<void>((resolve) => (entered = resolve));
  let runs = 0;
  const first = agentWith(async (text) => {
    runs += 1;
    entered();
    await opened;
    return hostSays(text);
  });
  const session = await first.createSession();
  const folding = foldUI((await first.stream({ session, prompt })).toUIMessageStream());
  await inTool;
  const suspending = session.suspendTurn();
  open();
  const state = await suspending;
  const head = await folding;
  expectClean(head, 'the first slice');
  expect(state.type).toBe('continue-turn');

  const second = agentWith(async (text) => ((runs += 1), hostSays(text)));
  const continued = await second.createSession({ sessionId: session.sessionId, continueFrom: state });
  const tail = await foldUI((await second.continueStream({ session: continued })).toUIMessageStream(), head.message);
  await continued.destroy();
  expectClean(tail, 'the continuation');
  expect(runs, 'the host tool ran once').toBe(1);
  expect(toolPart(tail.message), 'the host tool part, continued').toMatchObject({ state: 'output-available', output: expect.stringContaining('HOST SAYS HI') });
  expect(comparable(tail.message), 'suspended and continued, the message is the uninterrupted one').toEqual(comparable(uninterrupted.message));
  expect(steps(tail.message) - steps(uninterrupted.message), 'at most one step-start more: the continued stream\'s, at the cut').toBeOneOf([0, 1]);
}
