// Generated host→bridge frames for the fuzz tests: malformed JSON, wrong
// types, huge values, unknown types, stale/ahead cursors, frames for turns and
// calls that do not exist, oversized frames — each with the answer the
// protocol requires, computed by the protocol's own decoder (size check, JSON,
// schema, id echo) plus the bridge's routing rules (ownership, attach checks).
import {
  PROTOCOL_LIMITS_V1,
  PROTOCOL_VERSION_V1,
  decodeFrame,
  hostFrameSchema,
  isCompatibleProtocol,
  type HostFrame,
} from '../../protocol/v1/index.ts';

export type Random = () => number;

/** mulberry32: reproducible from a printed seed. */
export function seeded(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const int = (random: Random, min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

/** The reply a frame must get. `none`: no reply (pong). `pong`: a pong echoing t. */
export type Expected =
  | { kind: 'error'; code: string; id?: string }
  | { kind: 'pong'; t?: number }
  | { kind: 'ack'; id: string }
  | { kind: 'none' };

export type Generated = { data: string | Buffer; category: string; expected: Expected };

export type FuzzContext = {
  /** Whether the fuzzing connection owns the stream. */
  owner: boolean;
  journalId: string;
  /** A turn that is running now (start → turn-busy). */
  runningTurnId: string | null;
  /** The journal's durable last seq is at most this (cursor-ahead is generated far beyond it). */
  lastSeqBound: number;
};

const launch = { argv: [process.execPath, '-e', '0'] };
const templates = (random: Random, id: string, ghostTurn: string): Record<HostFrame['type'], Record<string, unknown>> => ({
  attach: { type: 'attach', id, protocolVersion: PROTOCOL_VERSION_V1, cursor: 0 },
  start: { type: 'start', id, turnId: ghostTurn, launch, input: 'x' },
  input: { type: 'input', id, turnId: ghostTurn, text: 'hello\n' },
  signal: { type: 'signal', id, turnId: ghostTurn, signal: 'SIGINT' },
  abort: { type: 'abort', id, turnId: ghostTurn, graceMs: 10 },
  rerun: { type: 'rerun', id, turnId: `${ghostTurn}-r`, of: ghostTurn, launch },
  'tool-result': { type: 'tool-result', id, callId: `call-${int(random, 0, 1e6)}`, output: { ok: true }, isError: false },
  approval: { type: 'approval', id, callId: `call-${int(random, 0, 1e6)}`, approved: random() < 0.5 },
  'journal-epoch': { type: 'journal-epoch', id, journalId: 'not-this-journal', cursor: int(random, 0, 1e6) },
  'host-wait': { type: 'host-wait', id, turnId: ghostTurn, callId: `call-${int(random, 0, 1e6)}`, kind: 'tool-call', onTimeout: 'x\n' },
  stop: { type: 'stop', id },
  destroy: { type: 'destroy', id },
  diagnostics: { type: 'diagnostics', id, enabled: false },
  expect: { type: 'expect', id, launch },
  ping: { type: 'ping', t: int(random, 0, 1e9) },
  pong: { type: 'pong', t: int(random, 0, 1e9) },
});

const wrongValues = (random: Random): unknown[] => [
  null,
  true,
  -1,
  1.5,
  2 ** 60,
  1e308,
  '',
  'x'.repeat(int(random, 1, 300)),
  [],
  [1, 'a', null],
  {},
  { nested: { deeper: [1, 2, { x: 'y' }] } },
];

/** A generated frame whose answer the oracle can name (frames that would end the run or displace the owner are drawn again). */
export function generateSafe(random: Random, n: number, ctx: FuzzContext): Generated {
  for (let i = 0; i < 50; i++) {
    try {
      return generate(random, n, ctx);
    } catch (error) {
      if (!/not generated/.test((error as Error).message)) throw error;
    }
  }
  throw new Error('50 draws in a row were frames a fuzz run must not send');
}

/** One generated frame. Owner-only frames from a non-owner are refused with not-owner; attach and destroy/stop are never valid here (they would end the run). */
export function generate(random: Random, n: number, ctx: FuzzContext): Generated {
  const id = `f${n}`;
  const ghostTurn = `ghost-${int(random, 0, 1e9)}`;
  const roll = random();
  let category: string;
  let data: string | Buffer;
  if (roll < 0.12) {
    category = 'malformed-json';
    const valid = JSON.stringify(templates(random, id, ghostTurn)[pick(random, typeNames)]);
    data = pick(random, [
      () => valid.slice(0, int(random, 0, valid.length - 1)),
      () => `${valid}}`,
      () => valid.replace(/"/g, "'"),
      () => '{'.repeat(int(random, 1, 50)),
      () => String.fromCharCode(...Array.from({ length: int(random, 1, 64) }, () => int(random, 1, 0xd7ff))),
      () => '',
      () => 'NaN',
      () => '{"type":"ping","t":Infinity}',
    ])();
  } else if (roll < 0.17) {
    category = 'binary-garbage';
    data = Buffer.from(Array.from({ length: int(random, 1, 256) }, () => int(random, 0, 255)));
  } else if (roll < 0.22) {
    category = 'not-an-object';
    data = JSON.stringify(pick(random, [null, 1, 'attach', [], [{ type: 'ping' }], true]));
  } else if (roll < 0.32) {
    category = 'unknown-type';
    data = JSON.stringify({ type: pick(random, ['frobnicate', 'ATTACH', 'records', 'hello', 'replay-begin', 'ack', '', 'start ', 'error']), id, turnId: ghostTurn });
  } else if (roll < 0.55) {
    category = 'wrong-type';
    const frame = { ...templates(random, id, ghostTurn)[pick(random, typeNames)] };
    const keys = Object.keys(frame).filter((key) => key !== 'id' || random() < 0.2);
    const key = pick(random, keys);
    frame[key] = pick(random, wrongValues(random));
    if (random() < 0.3) frame[`extra${int(random, 0, 9)}`] = pick(random, wrongValues(random));
    data = JSON.stringify(frame);
  } else if (roll < 0.6) {
    category = 'huge-value';
    const frame = { ...templates(random, id, ghostTurn)[pick(random, ['input', 'tool-result', 'start', 'signal'] as const)] };
    const size = pick(random, [64 * 1024, 256 * 1024, 1024 * 1024]);
    const key = pick(random, ['text', 'turnId', 'output', 'input', 'id', 'callId']);
    frame[key] = 'h'.repeat(size);
    data = JSON.stringify(frame);
  } else if (roll < 0.65) {
    category = 'deep-nesting';
    const depth = int(random, 100, 5000);
    data = `{"type":"tool-result","id":"${id}","callId":"c1","output":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  } else if (roll < 0.72) {
    category = 'stale-or-ahead-cursor';
    const bad = pick(random, [
      { cursor: ctx.lastSeqBound + int(random, 1_000_000, 1e9) },
      { cursor: -int(random, 1, 100) },
      { cursor: 1.5 },
      { cursor: 2 ** 60 },
      { journalId: `not-${ctx.journalId}`, cursor: 0 },
      { cursor: '0' },
    ]);
    data = JSON.stringify({ type: 'attach', id, protocolVersion: PROTOCOL_VERSION_V1, ...bad });
  } else if (roll < 0.9) {
    category = 'unknown-turn-or-call';
    const type = pick(random, ['input', 'signal', 'abort', 'rerun', 'tool-result', 'approval'] as const);
    data = JSON.stringify(templates(random, id, ghostTurn)[type]);
  } else if (roll < 0.95) {
    category = 'ping-pong';
    data = JSON.stringify(templates(random, id, ghostTurn)[random() < 0.7 ? 'ping' : 'pong']);
  } else {
    category = ctx.owner ? 'diagnostics' : 'owner-only';
    const type = ctx.owner ? 'diagnostics' : pick(random, ['start', 'stop', 'destroy', 'diagnostics'] as const);
    data = JSON.stringify(templates(random, id, ghostTurn)[type]);
  }
  return { data, category, expected: expect(data, ctx) };
}

const typeNames = ['attach', 'start', 'input', 'signal', 'abort', 'rerun', 'tool-result', 'approval', 'stop', 'destroy', 'diagnostics', 'ping', 'pong'] as const;

/** An oversized frame: over maxFrameBytes, under ws's hard maxPayload (too-large, no id: size is checked before parsing). */
export function oversized(n: number): Generated {
  const data = JSON.stringify({ type: 'input', id: `f${n}`, turnId: 'x', text: 'o'.repeat(PROTOCOL_LIMITS_V1.maxFrameBytes) });
  return { data, category: 'oversized', expected: { kind: 'error', code: 'too-large' } };
}

/** The protocol's answer to `data` on a connection described by ctx. Throws for frames a fuzz run must never send. */
export function expect(data: string | Buffer, ctx: FuzzContext): Expected {
  const decoded = decodeFrame(data, hostFrameSchema, PROTOCOL_LIMITS_V1.maxFrameBytes);
  if (!decoded.ok) return { kind: 'error', code: decoded.code, ...(decoded.id === undefined ? {} : { id: decoded.id }) };
  const frame = decoded.frame;
  const idOf = 'id' in frame && frame.id !== undefined ? { id: frame.id } : {};
  switch (frame.type) {
    case 'ping':
      return { kind: 'pong', ...(frame.t === undefined ? {} : { t: frame.t }) };
    case 'pong':
      return { kind: 'none' };
    case 'attach':
      if (!isCompatibleProtocol(frame.protocolVersion)) throw new Error('version-mismatch attaches close the socket: not generated');
      if (frame.journalId !== undefined && frame.journalId !== ctx.journalId) return { kind: 'error', code: 'journal-mismatch', ...idOf };
      if (frame.cursor > ctx.lastSeqBound) return { kind: 'error', code: 'cursor-ahead', ...idOf };
      throw new Error(`a valid attach (cursor ${frame.cursor}) would displace the live session: not generated`);
  }
  if (!ctx.owner) return { kind: 'error', code: 'not-owner', ...idOf };
  switch (frame.type) {
    case 'input':
    case 'signal':
    case 'abort':
    case 'host-wait':
      return { kind: 'error', code: 'unknown-turn', ...idOf };
    case 'rerun':
      return { kind: 'error', code: 'unknown-turn', ...idOf };
    case 'start':
      if (ctx.runningTurnId === null) throw new Error('a valid start with no turn running would launch: not generated');
      return { kind: 'error', code: 'turn-busy', ...idOf };
    case 'tool-result':
    case 'approval':
      return { kind: 'error', code: 'unknown-call', ...idOf };
    case 'journal-epoch':
      if (frame.journalId === ctx.journalId) throw new Error('a journal-epoch naming this journal could renew its id: not generated');
      return { kind: 'error', code: 'journal-mismatch', ...idOf };
    case 'diagnostics':
    case 'expect':
      return frame.id === undefined ? { kind: 'none' } : { kind: 'ack', id: frame.id };
    case 'stop':
    case 'destroy':
      throw new Error(`${frame.type} would end the bridge: not generated for an owner`);
  }
}
