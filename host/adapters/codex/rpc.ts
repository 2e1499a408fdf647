// Codex app-server's JSON-RPC as the codex adapter writes it: the stdin lines
// (requests with our fixed ids, answers to Codex's approval requests). The
// stdout lines' shapes are lines.ts's; what a line means for the stream is codex.ts's.
import { jsonLine } from '../../adapter-kit/stdin-encoders.ts';

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

const textInput = (text: string) => [{ type: 'text', text, text_elements: [] }];

/** initialize + initialized. A live process answers a second initialize with "Already initialized" (harmless). */
export const handshake = () =>
  jsonLine({ id: rpcIds.initialize, method: 'initialize', params: { clientInfo: { name: 'harness-bridge', title: null, version: '1' }, capabilities: { experimentalApi: false } } }) +
  jsonLine({ method: 'initialized' });

export const threadStart = () => handshake() + jsonLine({ id: rpcIds.threadStart, method: 'thread/start', params: {} });

export type ApprovalPolicy = 'never' | 'untrusted' | 'on-request';

/** Handshake and resume (no-ops for a live process already running the thread; a new process needs both), then the turn. */
export const turnStart = (threadId: string, text: string, approvalPolicy: ApprovalPolicy) =>
  handshake() +
  jsonLine({ id: rpcIds.threadResume, method: 'thread/resume', params: { threadId, excludeTurns: true } }) +
  jsonLine({ id: rpcIds.turnStart, method: 'turn/start', params: { threadId, input: textInput(text), approvalPolicy } });

/**
 * Handshake and resume (as for a turn), then `thread/compact/start`: Codex runs the compaction as a
 * turn of its own (turn/started, a `contextCompaction` item, turn/completed). It takes no instructions.
 */
export const compactStart = (threadId: string) =>
  handshake() +
  jsonLine({ id: rpcIds.threadResume, method: 'thread/resume', params: { threadId, excludeTurns: true } }) +
  jsonLine({ id: rpcIds.compactStart, method: 'thread/compact/start', params: { threadId } });

export const turnSteer = (threadId: string, turnId: string, text: string) =>
  jsonLine({ id: rpcIds.turnSteer, method: 'turn/steer', params: { threadId, expectedTurnId: turnId, input: textInput(text) } });

export const turnInterrupt = (threadId: string, turnId: string) => jsonLine({ id: rpcIds.turnInterrupt, method: 'turn/interrupt', params: { threadId, turnId } });

export const response = (id: string | number, result: unknown) => jsonLine({ id, result });

const threadAnswer = new RegExp(`^\\{"id":"(?:${rpcIds.threadStart}|${rpcIds.threadResume})","result":\\{"thread":\\{"id":"([^"]+)"`);

/** The thread id in our thread/start or thread/resume answer (read from the line's start: also the first `cont` piece of a long one). */
export const threadIdOf = (text: string): string | undefined => threadAnswer.exec(text)?.[1];
