// Codex app-server's JSON-RPC as the codex adapter speaks it: the stdin lines
// (requests with our fixed ids, answers to Codex's approval requests) and the
// zod shapes of the stdout lines the translator reads. Data and encoders only;
// what a line means for the stream is codex.ts's. Shapes: test/fixtures/codex/README.md.
import { z } from 'zod';

/** Our request ids: fixed, so turn-end matchers and the translator can recognise the answers. */
export const rpcIds = {
  initialize: 'hb-initialize',
  threadStart: 'hb-thread-start',
  threadResume: 'hb-thread-resume',
  turnStart: 'hb-turn-start',
  turnSteer: 'hb-turn-steer',
  turnInterrupt: 'hb-turn-interrupt',
  compactStart: 'hb-compact-start',
} as const;

const rpcId = z.union([z.string(), z.number()]);
const count = z.number().nullish();
const counts = z.object({ inputTokens: count, cachedInputTokens: count, cacheWriteInputTokens: count, outputTokens: count, reasoningOutputTokens: count });
const change = z.object({ path: z.string(), kind: z.object({ type: z.string() }), diff: z.string().optional() });
const item = z.object({
  type: z.string(),
  id: z.string(),
  ...{ text: z.string().optional(), summary: z.array(z.string()).optional(), content: z.array(z.string()).optional() },
  ...{ command: z.string().optional(), cwd: z.string().optional(), status: z.string().optional(), aggregatedOutput: z.string().nullish(), exitCode: z.number().nullish() },
  ...{ changes: z.array(change).optional(), server: z.string().optional(), tool: z.string().optional(), arguments: z.json().optional(), result: z.json().optional(), error: z.json().optional(), query: z.string().optional() },
});
export type Item = z.infer<typeof item>;
/** A stdout line: a notification or a request from Codex (method), or an answer to one of ours (id). Unknown keys are dropped. */
export const lineSchema = z.union([
  z.object({
    method: z.string(),
    id: rpcId.optional(),
    params: z.object({
      ...{ item: item.optional(), itemId: z.string().optional(), delta: z.string().optional(), threadId: z.string().optional() },
      turn: z.object({ id: z.string(), status: z.string(), error: z.object({ message: z.string(), codexErrorInfo: z.json().optional() }).nullish() }).optional(),
      tokenUsage: z.object({ last: counts }).optional(),
    }).optional(),
  }),
  z.object({ id: rpcId, result: z.object({ turn: z.object({ id: z.string() }).optional() }).optional(), error: z.object({ message: z.string() }).optional() }),
]);
export type Counts = z.infer<typeof counts>;

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const textInput = (text: string) => [{ type: 'text', text, text_elements: [] }];

/** initialize + initialized. A live process answers a second initialize with "Already initialized" (harmless). */
export const handshake = () =>
  line({ id: rpcIds.initialize, method: 'initialize', params: { clientInfo: { name: 'harness-bridge', title: null, version: '1' }, capabilities: { experimentalApi: false } } }) +
  line({ method: 'initialized' });

export const threadStart = () => handshake() + line({ id: rpcIds.threadStart, method: 'thread/start', params: {} });

export type ApprovalPolicy = 'never' | 'untrusted' | 'on-request';

/** Handshake and resume (no-ops for a live process already running the thread; a new process needs both), then the turn. */
export const turnStart = (threadId: string, text: string, approvalPolicy: ApprovalPolicy) =>
  handshake() +
  line({ id: rpcIds.threadResume, method: 'thread/resume', params: { threadId, excludeTurns: true } }) +
  line({ id: rpcIds.turnStart, method: 'turn/start', params: { threadId, input: textInput(text), approvalPolicy } });

/**
 * Handshake and resume (as for a turn), then `thread/compact/start`: Codex runs the compaction as a
 * turn of its own (turn/started, a `contextCompaction` item, turn/completed). It takes no instructions.
 */
export const compactStart = (threadId: string) =>
  handshake() +
  line({ id: rpcIds.threadResume, method: 'thread/resume', params: { threadId, excludeTurns: true } }) +
  line({ id: rpcIds.compactStart, method: 'thread/compact/start', params: { threadId } });

export const turnSteer = (threadId: string, turnId: string, text: string) =>
  line({ id: rpcIds.turnSteer, method: 'turn/steer', params: { threadId, expectedTurnId: turnId, input: textInput(text) } });

export const turnInterrupt = (threadId: string, turnId: string) => line({ id: rpcIds.turnInterrupt, method: 'turn/interrupt', params: { threadId, turnId } });

export const response = (id: string | number, result: unknown) => line({ id, result });

const threadAnswer = new RegExp(`^\\{"id":"(?:${rpcIds.threadStart}|${rpcIds.threadResume})","result":\\{"thread":\\{"id":"([^"]+)"`);

/** The thread id in our thread/start or thread/resume answer (read from the line's start: also the first `cont` piece of a long one). */
export const threadIdOf = (text: string): string | undefined => threadAnswer.exec(text)?.[1];
