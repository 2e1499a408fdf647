// protocol/v1 frames: a valid and several invalid examples for every frame in
// both directions and every record kind (the Record<…> tables make a missing
// frame type a compile error), the direction unions refusing the other
// direction's frames, and decodeFrame's error codes.
import { describe, expect, it } from 'vitest';
import {
  PROTOCOL_LIMITS_V1,
  PROTOCOL_VERSION_V1,
  bridgeFrameSchema,
  decodeFrame,
  errorCodeSchema,
  hostFrameSchema,
  isCompatibleProtocol,
  protocolMajor,
  recordSchema,
  type BridgeFrameType,
  type HostFrameType,
  type RecordKind,
} from '../../protocol/v1/index.ts';

type Examples = { valid: Record<string, unknown>[]; invalid: Array<[why: string, frame: unknown]> };

const launch = { argv: ['node', 'cli.mjs'] };

const hostFrames: Record<HostFrameType, Examples> = {
  attach: {
    valid: [
      { type: 'attach', protocolVersion: '1.0', cursor: 0 },
      { type: 'attach', id: 'a1', protocolVersion: '1.0', cursor: 42, journalId: 'j' },
    ],
    invalid: [
      ['negative cursor', { type: 'attach', protocolVersion: '1.0', cursor: -1 }],
      ['fractional cursor', { type: 'attach', protocolVersion: '1.0', cursor: 1.5 }],
      ['no protocolVersion', { type: 'attach', cursor: 0 }],
      ['empty id', { type: 'attach', id: '', protocolVersion: '1.0', cursor: 0 }],
    ],
  },
  start: {
    valid: [
      { type: 'start', turnId: 't1', launch },
      {
        type: 'start',
        id: 's',
        turnId: 't1',
        input: 'hi\n',
        tools: [{ name: 'weather', inputSchema: { type: 'object' } }],
        launch: {
          ...launch,
          env: { A: 'b' },
          cwd: '/w',
          stdin: 'pipe',
          io: { mode: 'pty', cols: 80, rows: 24 },
          lifetime: 'session',
          turnEnd: [{ json: { path: ['type'], equals: 'result' } }, { stream: 'stderr', regex: '^done$' }],
          inputAck: { inputId: ['uuid'], stream: 'stdout', when: [{ path: ['type'], equals: 'command_lifecycle' }, { path: ['state'], equals: 'started' }], ackId: ['command_uuid'] },
          interrupt: { input: '{"type":"interrupt"}\n' },
        },
      },
      { type: 'start', turnId: 't1', launch: { ...launch, inputAck: { inputId: ['id'], ackId: ['ack', 'id'] } } },
      { type: 'start', turnId: 't1', launch: { ...launch, inputAck: { inputId: ['id'], ackId: ['id'], maxWaitMs: 1 } } },
      { type: 'start', turnId: 't1', launch: { ...launch, inputAck: { inputId: ['id'], ackId: ['id'], maxWaitMs: 86_400_000 } } },
    ],
    invalid: [
      ['empty argv', { type: 'start', turnId: 't1', launch: { argv: [] } }],
      ['no turnId', { type: 'start', launch }],
      ['pty too narrow', { type: 'start', turnId: 't', launch: { ...launch, io: { mode: 'pty', cols: 2, rows: 24 } } }],
      ['unknown io mode', { type: 'start', turnId: 't', launch: { ...launch, io: { mode: 'socket' } } }],
      ['bad stdin', { type: 'start', turnId: 't', launch: { ...launch, stdin: 'inherit' } }],
      ['tool without name', { type: 'start', turnId: 't', launch, tools: [{ description: 'x' }] }],
      ['bad interrupt signal', { type: 'start', turnId: 't', launch: { ...launch, interrupt: { signal: 'SIGSTOP' } } }],
      ['inputAck without ackId', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['uuid'] } } }],
      ['inputAck with an empty inputId path', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: [], ackId: ['id'] } } }],
      ['inputAck on an unknown stream', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['u'], ackId: ['u'], stream: 'pty' } } }],
      ['inputAck condition with an object value', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['u'], ackId: ['u'], when: [{ path: ['a'], equals: {} }] } } }],
      ['inputAck with 9 conditions', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['u'], ackId: ['u'], when: Array(9).fill({ path: ['a'], equals: 1 }) } } }],
      ['inputAck maxWaitMs 0', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['u'], ackId: ['u'], maxWaitMs: 0 } } }],
      ['inputAck maxWaitMs fractional', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['u'], ackId: ['u'], maxWaitMs: 1.5 } } }],
      ['inputAck maxWaitMs over a day', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['u'], ackId: ['u'], maxWaitMs: 86_400_001 } } }],
      ['inputAck maxWaitMs as a string', { type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['u'], ackId: ['u'], maxWaitMs: '30000' } } }],
    ],
  },
  input: {
    valid: [{ type: 'input', turnId: 't1', text: 'more\n' }, { type: 'input', turnId: 't1', text: '{}\n', callId: 'c1' }],
    invalid: [
      ['no text', { type: 'input', turnId: 't1' }],
      ['text not a string', { type: 'input', turnId: 't1', text: 5 }],
    ],
  },
  signal: {
    valid: [{ type: 'signal', turnId: 't1', signal: 'SIGINT' }],
    invalid: [
      ['signal outside the allowed set', { type: 'signal', turnId: 't1', signal: 'SIGSTOP' }],
      ['empty turnId', { type: 'signal', turnId: '', signal: 'SIGINT' }],
    ],
  },
  abort: {
    valid: [{ type: 'abort', turnId: 't1' }, { type: 'abort', id: 'x', turnId: 't1', graceMs: 500 }],
    invalid: [
      ['graceMs too long', { type: 'abort', turnId: 't1', graceMs: 60_001 }],
      ['graceMs negative', { type: 'abort', turnId: 't1', graceMs: -1 }],
    ],
  },
  rerun: {
    valid: [{ type: 'rerun', turnId: 't2', of: 't1', launch, input: 'continue\n' }],
    invalid: [
      ['no `of`', { type: 'rerun', turnId: 't2', launch }],
      ['no launch', { type: 'rerun', turnId: 't2', of: 't1' }],
    ],
  },
  'tool-result': {
    valid: [
      { type: 'tool-result', callId: 'c1', output: { temp: 20 } },
      { type: 'tool-result', callId: 'c1', output: 'boom', isError: true },
    ],
    invalid: [
      ['no callId', { type: 'tool-result', output: 1 }],
      ['isError not boolean', { type: 'tool-result', callId: 'c1', output: 1, isError: 'yes' }],
    ],
  },
  approval: {
    valid: [{ type: 'approval', callId: 'c1', approved: false, reason: 'no' }],
    invalid: [['approved missing', { type: 'approval', callId: 'c1' }]],
  },
  expect: {
    valid: [
      { type: 'expect', launch: { argv: ['node', 'cli.js'] } },
      { type: 'expect', id: 'x', launch: { argv: ['node'], cwd: '/work', stdin: 'pipe', lifetime: 'session', survive: true } },
    ],
    invalid: [
      ['no launch', { type: 'expect' }],
      ['empty argv', { type: 'expect', launch: { argv: [] } }],
    ],
  },
  'journal-epoch': {
    valid: [{ type: 'journal-epoch', id: 'e', journalId: 'j', cursor: 12 }],
    invalid: [
      ['no cursor', { type: 'journal-epoch', journalId: 'j' }],
      ['empty journalId', { type: 'journal-epoch', journalId: '', cursor: 1 }],
    ],
  },
  'host-wait': {
    valid: [
      { type: 'host-wait', turnId: 't1', callId: 'c1', kind: 'tool-call', onTimeout: '{"type":"tool-result"}\n' },
      { type: 'host-wait', id: 'w', turnId: 't1', callId: 'c1', kind: 'approval-request', onTimeout: '' },
    ],
    invalid: [
      ['unknown kind', { type: 'host-wait', turnId: 't1', callId: 'c1', kind: 'question', onTimeout: '' }],
      ['onTimeout over 64 KiB', { type: 'host-wait', turnId: 't1', callId: 'c1', kind: 'tool-call', onTimeout: 'x'.repeat(64 * 1024 + 1) }],
      ['no callId', { type: 'host-wait', turnId: 't1', kind: 'tool-call', onTimeout: '' }],
    ],
  },
  stop: {
    valid: [{ type: 'stop' }, { type: 'stop', id: 'x', graceMs: 0 }],
    invalid: [['graceMs fractional', { type: 'stop', graceMs: 0.5 }]],
  },
  destroy: {
    valid: [{ type: 'destroy' }, { type: 'destroy', id: 'd' }],
    invalid: [['id too long', { type: 'destroy', id: 'x'.repeat(129) }]],
  },
  diagnostics: {
    valid: [{ type: 'diagnostics', enabled: true, level: 'debug' }, { type: 'diagnostics', enabled: false }],
    invalid: [
      ['unknown level', { type: 'diagnostics', enabled: true, level: 'verbose' }],
      ['enabled missing', { type: 'diagnostics' }],
    ],
  },
  ping: {
    valid: [{ type: 'ping' }, { type: 'ping', t: 123 }],
    invalid: [['t not a number', { type: 'ping', t: 'now' }]],
  },
  pong: {
    valid: [{ type: 'pong' }, { type: 'pong', t: 123 }],
    invalid: [['t not a number', { type: 'pong', t: null }]],
  },
};

const record = { seq: 7, turnId: 't1', ts: 1_700_000_000_000 };

const recordKinds: Record<RecordKind, Examples> = {
  'turn-start': {
    valid: [{ ...record, kind: 'turn-start', data: { input: 'hi', argv: ['x'], rerun: true, tools: [{ name: 'w' }] } }],
    invalid: [['rerun not boolean', { ...record, kind: 'turn-start', data: { rerun: 'y' } }]],
  },
  spawn: {
    valid: [{ ...record, kind: 'spawn', data: { pid: 12, argv: ['x'], pty: false } }],
    invalid: [['pid missing', { ...record, kind: 'spawn', data: { argv: ['x'], pty: false } }]],
  },
  stdout: {
    valid: [{ ...record, kind: 'stdout', data: { text: 'a' } }, { ...record, kind: 'stdout', data: { text: 'a', cont: true } }],
    invalid: [
      ['seq 0', { ...record, seq: 0, kind: 'stdout', data: { text: 'a' } }],
      ['text missing', { ...record, kind: 'stdout', data: {} }],
      ['turnId undefined (must be null or a string)', { seq: 1, ts: 1, kind: 'stdout', data: { text: 'a' } }],
    ],
  },
  stderr: {
    valid: [{ ...record, kind: 'stderr', data: { text: 'warn' } }],
    invalid: [['cont not boolean', { ...record, kind: 'stderr', data: { text: 'a', cont: 1 } }]],
  },
  pty: {
    valid: [{ ...record, kind: 'pty', data: { text: '\u001b[1m' } }],
    invalid: [['text missing', { ...record, kind: 'pty', data: {} }]],
  },
  stdin: {
    valid: [{ ...record, kind: 'stdin', data: { text: 'x\n' } }],
    invalid: [['data missing', { ...record, kind: 'stdin' }]],
  },
  signal: {
    valid: [{ ...record, kind: 'signal', data: { signal: 'SIGTERM', reason: 'abort' } }],
    invalid: [['unknown signal', { ...record, kind: 'signal', data: { signal: 'SIGWINCH' } }]],
  },
  exit: {
    valid: [
      { ...record, turnId: null, kind: 'exit', data: { pid: 1, code: null, signal: 'SIGKILL' } },
      { ...record, kind: 'exit', data: { pid: 1, code: 0, signal: null } },
    ],
    invalid: [['code fractional', { ...record, kind: 'exit', data: { pid: 1, code: 0.5, signal: null } }]],
  },
  'turn-end': {
    valid: [
      { ...record, kind: 'turn-end', data: { reason: 'exit', code: 0 } },
      { ...record, kind: 'turn-end', data: { reason: 'interrupted' } },
      { ...record, kind: 'turn-end', data: { reason: 'matched', unacknowledged: ['u1', 'u2'] } },
    ],
    invalid: [
      ['unknown reason', { ...record, kind: 'turn-end', data: { reason: 'done' } }],
      ['unacknowledged not a list', { ...record, kind: 'turn-end', data: { reason: 'matched', unacknowledged: 'u1' } }],
      ['unacknowledged with a non-string id', { ...record, kind: 'turn-end', data: { reason: 'matched', unacknowledged: [1] } }],
    ],
  },
  'tool-call': {
    valid: [{ ...record, kind: 'tool-call', data: { callId: 'c', name: 'w', input: { a: 1 } } }],
    invalid: [['empty callId', { ...record, kind: 'tool-call', data: { callId: '', name: 'w', input: null } }]],
  },
  'tool-result': {
    valid: [{ ...record, kind: 'tool-result', data: { callId: 'c', output: 1, isError: false } }],
    invalid: [['isError missing', { ...record, kind: 'tool-result', data: { callId: 'c', output: 1 } }]],
  },
  'approval-request': {
    valid: [{ ...record, kind: 'approval-request', data: { callId: 'c', toolName: 'Bash', input: { cmd: 'ls' } } }],
    invalid: [['toolName missing', { ...record, kind: 'approval-request', data: { callId: 'c', input: 1 } }]],
  },
  approval: {
    valid: [{ ...record, kind: 'approval', data: { callId: 'c', approved: true } }],
    invalid: [['approved not boolean', { ...record, kind: 'approval', data: { callId: 'c', approved: 'yes' } }]],
  },
  'bridge-start': {
    valid: [
      { ...record, turnId: null, kind: 'bridge-start', data: { bridgeId: 'b', version: '0.1.0' } },
      { ...record, turnId: null, kind: 'bridge-start', data: { bridgeId: 'b', version: '0.1.0', recovered: { droppedBytes: 3, droppedRecords: 0 } } },
    ],
    invalid: [
      ['negative droppedBytes', { ...record, turnId: null, kind: 'bridge-start', data: { bridgeId: 'b', version: '1', recovered: { droppedBytes: -1, droppedRecords: 0 } } }],
    ],
  },
};

const hello = {
  type: 'hello',
  protocolVersion: PROTOCOL_VERSION_V1,
  bridgeVersion: '0.1.0',
  bridgeId: 'b1',
  journalId: 'j1',
  state: 'idle',
  firstSeq: 1,
  lastSeq: 10,
  turns: [{ turnId: 't1', firstSeq: 2, lastSeq: 10, status: 'ended' }],
};

const bridgeFrames: Record<BridgeFrameType, Examples> = {
  hello: {
    valid: [hello, { ...hello, firstSeq: 0, lastSeq: 0, turns: [], recipeIdentity: 'sha256:x', mcpUrl: 'http://127.0.0.1:1/mcp' }],
    invalid: [
      ['unknown state', { ...hello, state: 'busy' }],
      ['turn with unknown status', { ...hello, turns: [{ turnId: 't', firstSeq: 1, lastSeq: 1, status: 'done' }] }],
      ['no journalId', { ...hello, journalId: undefined }],
    ],
  },
  records: {
    valid: [{ type: 'records', records: Object.values(recordKinds).flatMap((e) => e.valid) }],
    invalid: [
      ['empty batch', { type: 'records', records: [] }],
      ['unknown record kind', { type: 'records', records: [{ ...record, kind: 'stdweird', data: {} }] }],
      ['seq as a string', { type: 'records', records: [{ ...record, seq: '7', kind: 'stdout', data: { text: 'a' } }] }],
    ],
  },
  'replay-begin': {
    valid: [{ type: 'replay-begin', from: 11, to: 10 }],
    invalid: [['to missing', { type: 'replay-begin', from: 1 }]],
  },
  'replay-end': {
    valid: [{ type: 'replay-end', to: 10 }],
    invalid: [['to negative', { type: 'replay-end', to: -1 }]],
  },
  ack: {
    valid: [{ type: 'ack', id: 'r1', of: 'start', lastSeq: 12 }, { type: 'ack', id: 'r1', of: 'stop' }],
    invalid: [
      ['id missing', { type: 'ack', of: 'start' }],
      ['of missing', { type: 'ack', id: 'r1' }],
    ],
  },
  error: {
    valid: [
      ...errorCodeSchema.options.map((code): Record<string, unknown> => ({ type: 'error', code, message: code })),
      { type: 'error', id: 'r1', code: 'cursor-expired', message: 'old', firstSeq: 100, lastSeq: 200 },
    ],
    invalid: [
      ['code outside the closed list', { type: 'error', code: 'oops', message: 'x' }],
      ['message missing', { type: 'error', code: 'internal' }],
    ],
  },
  diagnostic: {
    valid: [{ type: 'diagnostic', level: 'warn', subsystem: 'journal', message: 'slow fsync', attrs: { ms: 300 }, ts: 1 }],
    invalid: [['ts missing', { type: 'diagnostic', level: 'warn', subsystem: 'journal', message: 'x' }]],
  },
  ping: { valid: [{ type: 'ping', t: 1 }], invalid: [['t a string', { type: 'ping', t: '1' }]] },
  pong: { valid: [{ type: 'pong' }], invalid: [['t a string', { type: 'pong', t: '1' }]] },
};

describe('host → bridge frames', () => {
  for (const [type, examples] of Object.entries(hostFrames)) {
    it(`${type}: valid examples parse, invalid ones are refused`, () => {
      for (const frame of examples.valid) expect(hostFrameSchema.safeParse(frame).error).toBeUndefined();
      for (const [why, frame] of examples.invalid) expect(hostFrameSchema.safeParse(frame).success, why).toBe(false);
    });
  }

  it('a launch spec gets its defaults filled on parse', () => {
    const parsed = hostFrameSchema.parse({ type: 'start', turnId: 't', launch });
    expect(parsed).toMatchObject({ launch: { stdin: 'null', io: { mode: 'pipes' }, lifetime: 'turn', turnEnd: [], interrupt: { signal: 'SIGINT' } } });
    expect(parsed.type === 'start' && 'inputAck' in parsed.launch, 'inputAck is optional and gets no default').toBe(false);
    const gated = hostFrameSchema.parse({ type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['uuid'], ackId: ['uuid'] } } });
    expect(gated).toMatchObject({ launch: { inputAck: { inputId: ['uuid'], ackId: ['uuid'], stream: 'stdout', when: [] } } });
    expect(gated.type === 'start' && 'maxWaitMs' in gated.launch.inputAck!, 'maxWaitMs is optional and gets no default (the bridge applies its own)').toBe(false);
    const bounded = hostFrameSchema.parse({ type: 'start', turnId: 't', launch: { ...launch, inputAck: { inputId: ['uuid'], ackId: ['uuid'], maxWaitMs: 500 } } });
    expect(bounded).toMatchObject({ launch: { inputAck: { maxWaitMs: 500 } } });
  });

  it('turn-end keeps unacknowledged ids; a turn-end without them (every 1.0 bridge) still parses', () => {
    const base = { seq: 3, turnId: 't', ts: 1, kind: 'turn-end' };
    expect(recordSchema.parse({ ...base, data: { reason: 'matched', unacknowledged: ['lost'] } })).toMatchObject({ data: { reason: 'matched', unacknowledged: ['lost'] } });
    expect(recordSchema.parse({ ...base, data: { reason: 'matched' } }).data).toEqual({ reason: 'matched' });
  });
});

describe('bridge → host frames', () => {
  for (const [type, examples] of Object.entries(bridgeFrames)) {
    it(`${type}: valid examples parse, invalid ones are refused`, () => {
      for (const frame of examples.valid) expect(bridgeFrameSchema.safeParse(frame).error).toBeUndefined();
      for (const [why, frame] of examples.invalid) expect(bridgeFrameSchema.safeParse(frame).success, why).toBe(false);
    });
  }
});

describe('records', () => {
  for (const [kind, examples] of Object.entries(recordKinds)) {
    it(`${kind}: valid examples parse, invalid ones are refused`, () => {
      for (const r of examples.valid) expect(recordSchema.safeParse(r).error).toBeUndefined();
      for (const [why, r] of examples.invalid) expect(recordSchema.safeParse(r).success, why).toBe(false);
    });
  }
});

describe('direction unions', () => {
  it('refuse frames of the other direction and unknown types', () => {
    const hostOnly = (Object.keys(hostFrames) as HostFrameType[]).filter((t) => t !== 'ping' && t !== 'pong');
    for (const type of hostOnly) {
      const example = hostFrames[type].valid[0];
      expect(bridgeFrameSchema.safeParse(example).success, type).toBe(false);
    }
    const bridgeOnly = (Object.keys(bridgeFrames) as BridgeFrameType[]).filter((t) => t !== 'ping' && t !== 'pong');
    for (const type of bridgeOnly) {
      const example = bridgeFrames[type].valid[0];
      expect(hostFrameSchema.safeParse(example).success, type).toBe(false);
    }
    expect(hostFrameSchema.safeParse({ type: 'teleport' }).success).toBe(false);
    expect(bridgeFrameSchema.safeParse({ cursor: 1 }).success).toBe(false);
  });
});

describe('decodeFrame', () => {
  const max = PROTOCOL_LIMITS_V1.maxFrameBytes;

  it('decodes a valid frame from a string or a Buffer', () => {
    const text = JSON.stringify({ type: 'attach', protocolVersion: '1.0', cursor: 3 });
    expect(decodeFrame(text, hostFrameSchema, max)).toEqual({ ok: true, frame: { type: 'attach', protocolVersion: '1.0', cursor: 3 } });
    expect(decodeFrame(Buffer.from(text), hostFrameSchema, max)).toMatchObject({ ok: true });
  });

  it('too-large: checked before parsing, in bytes (not UTF-16 units)', () => {
    const text = JSON.stringify({ type: 'input', turnId: 't', text: 'é'.repeat(40) });
    const bytes = Buffer.byteLength(text);
    expect(text.length).toBeLessThan(bytes);
    expect(decodeFrame(text, hostFrameSchema, bytes)).toMatchObject({ ok: true });
    const refused = decodeFrame(text, hostFrameSchema, bytes - 1);
    expect(refused).toMatchObject({ ok: false, code: 'too-large' });
    expect(decodeFrame('{not json but huge', hostFrameSchema, 4)).toMatchObject({ ok: false, code: 'too-large' });
  });

  it('bad-frame: not JSON', () => {
    expect(decodeFrame('{"type":', hostFrameSchema, max)).toMatchObject({ ok: false, code: 'bad-frame' });
    expect(decodeFrame('', bridgeFrameSchema, max)).toMatchObject({ ok: false, code: 'bad-frame' });
  });

  it('bad-frame: schema mismatch names the frame type and the path, and echoes a usable id', () => {
    const decoded = decodeFrame(JSON.stringify({ type: 'start', id: 'r9', turnId: 't', launch: { argv: [] } }), hostFrameSchema, max);
    expect(decoded).toMatchObject({ ok: false, code: 'bad-frame', id: 'r9' });
    if (!decoded.ok) expect(decoded.message).toMatch(/^invalid start frame at launch\.argv/);
    const longId = decodeFrame(JSON.stringify({ type: 'stop', id: 'x'.repeat(200) }), hostFrameSchema, max);
    expect(longId).toMatchObject({ ok: false, code: 'bad-frame' });
    expect('id' in longId).toBe(false); // an id the schema would refuse is not echoed
    expect(decodeFrame('[1,2]', hostFrameSchema, max)).toMatchObject({ ok: false, code: 'bad-frame' });
    expect(decodeFrame('null', hostFrameSchema, max)).toMatchObject({ ok: false, code: 'bad-frame' });
  });

  it('is what both ends use: every decode failure code is in the closed error-code list', () => {
    for (const code of ['bad-frame', 'too-large'] as const) expect(errorCodeSchema.options).toContain(code);
  });
});

describe('protocol version', () => {
  it('compatible = same major', () => {
    expect(protocolMajor(PROTOCOL_VERSION_V1)).toBe(1);
    expect(isCompatibleProtocol('1.7')).toBe(true);
    expect(isCompatibleProtocol('2.0')).toBe(false);
    expect(isCompatibleProtocol('garbage')).toBe(false);
    expect(protocolMajor('')).toBe(-1);
  });
});
