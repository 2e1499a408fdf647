// server.ts through the built bridge over real sockets: a turn end to end,
// auth, every refused-frame error code, ownership, acks, diagnostics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { PROTOCOL_VERSION_V1, type JournalRecord } from '../../protocol/v1/index.ts';
import { HttpRefusal, connectClient, fixtureLaunch, seqProblem, startBridge, type RunningBridge, type TestClient } from './helpers.ts';

let bridge: RunningBridge;
const clients: TestClient[] = [];

async function connect(options?: Parameters<typeof connectClient>[1]) {
  const connected = await connectClient(bridge, options);
  clients.push(connected.client);
  return connected;
}

beforeAll(async () => {
  bridge = await startBridge();
});

afterAll(async () => {
  for (const client of clients) expect(client.invalid).toEqual([]);
  await Promise.all(clients.map((client) => client.close()));
  await bridge.kill();
});

describe('a turn end to end over a plain ws client', () => {
  it('start → records (turn-start, spawn, stdout, exit, turn-end) live, acked, then hello reports the turn', async () => {
    const { client, hello } = await connect();
    expect(hello).toMatchObject({ protocolVersion: PROTOCOL_VERSION_V1, bridgeId: bridge.ready.bridgeId, journalId: bridge.ready.journalId, state: 'idle' });
    expect(hello.runningTurnId).toBeUndefined();
    const { records: replayed } = await client.attach(0);
    expect(seqProblem(replayed, 1, hello.lastSeq)).toBeNull();
    expect(replayed[0]).toMatchObject({ kind: 'bridge-start', turnId: null });

    const ack = await client.request({ type: 'start', id: 'r1', turnId: 't1', launch: fixtureLaunch(['--json', '--lines', '5']) });
    expect(ack).toMatchObject({ type: 'ack', id: 'r1', of: 'start' });
    const end = await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1');
    expect(end.data).toMatchObject({ reason: 'exit', code: 0 });

    const records = client.records();
    expect(seqProblem(records, 1, end.seq)).toBeNull();
    const turn = records.filter((r) => r.turnId === 't1');
    expect(turn.map((r) => r.kind)).toEqual(['turn-start', 'spawn', ...Array(7).fill('stdout'), 'exit', 'turn-end']);
    const lines = turn.filter((r): r is Extract<JournalRecord, { kind: 'stdout' }> => r.kind === 'stdout').map((r): unknown => JSON.parse(r.data.text));
    expect(lines[1]).toEqual({ type: 'line', n: 0, text: 'line 0' });
    expect(lines[6]).toEqual({ type: 'done', n: 5 });

    const { hello: later } = await connect();
    expect(later.lastSeq).toBe(end.seq);
    expect(later.turns.at(-1)).toEqual({ turnId: 't1', firstSeq: turn[0]!.seq, lastSeq: end.seq, status: 'ended' });
  });

  it('a long-lived CLI: turns end on a matched line, input goes to its stdin, the process lives on', async () => {
    const { client, hello } = await connect();
    await client.attach(hello.lastSeq);
    const launch = fixtureLaunch(['--echo'], { stdin: 'pipe', lifetime: 'session', turnEnd: [{ json: { path: ['type'], equals: 'result' } }] });
    const prompt = (text: string) => `${JSON.stringify({ type: 'prompt', text, lines: 2 })}\n`;
    expect(await client.request({ type: 'start', id: 's1', turnId: 'e1', launch, input: prompt('one') })).toMatchObject({ type: 'ack' });
    const first = await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'e1');
    expect(first).toMatchObject({ data: { reason: 'matched' } });
    expect(await client.request({ type: 'start', id: 's2', turnId: 'e2', launch, input: prompt('two') })).toMatchObject({ type: 'ack' });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'e2');
    const e2 = client.records().filter((r) => r.turnId === 'e2');
    expect(e2.some((r) => r.kind === 'spawn')).toBe(false); // same process
    expect(e2.some((r) => r.kind === 'stdin' && r.data.text === prompt('two'))).toBe(true);
    // input mid-turn to a turn that ended → unknown-turn
    expect(await client.request({ type: 'input', id: 'i1', turnId: 'e1', text: 'x\n' })).toMatchObject({ type: 'error', code: 'unknown-turn' });
  });

  it('launch.inputAck over the wire: an input frame queued behind the running turn is answered inside that turn', async () => {
    const { client, hello } = await connect();
    await client.attach(hello.lastSeq);
    const launch = fixtureLaunch(['--echo'], {
      stdin: 'pipe',
      lifetime: 'session',
      turnEnd: [{ json: { path: ['type'], equals: 'result' } }],
      inputAck: { inputId: ['uuid'], when: [{ path: ['type'], equals: 'taken' }], ackId: ['uuid'] },
    });
    const prompt = (text: string, more: object) => `${JSON.stringify({ type: 'prompt', text, uuid: text, ...more })}\n`;
    expect(await client.request({ type: 'start', id: 'g1', turnId: 'g1', launch, input: prompt('slow', { lines: 4, intervalMs: 60 }) })).toMatchObject({ type: 'ack' });
    await client.waitForRecord((r) => r.kind === 'stdout' && r.turnId === 'g1' && r.data.text.includes('"type":"delta"'));
    expect(await client.request({ type: 'input', id: 'g2', turnId: 'g1', text: prompt('queued', { lines: 1 }) })).toMatchObject({ type: 'ack' });
    const end = await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'g1');
    expect(end.data).toEqual({ reason: 'matched' });
    const results = client
      .records()
      .filter((r): r is Extract<JournalRecord, { kind: 'stdout' }> => r.kind === 'stdout' && r.turnId === 'g1' && r.data.text.startsWith('{"type":"result"'))
      .map((r) => (JSON.parse(r.data.text) as { text: string }).text);
    expect(results, 'both answers, the queued one included').toEqual(['slow', 'queued']);
    // A schema-invalid inputAck is refused like any bad launch.
    const bad = { ...launch, inputAck: { inputId: [], ackId: ['uuid'] } };
    expect(await client.request({ type: 'start', id: 'g3', turnId: 'g3', launch: bad })).toMatchObject({ type: 'error', id: 'g3', code: 'bad-frame' });
  });

  it('a second start while a turn runs gets turn-busy; abort ends the turn as aborted', async () => {
    const { client, hello } = await connect();
    await client.attach(hello.lastSeq);
    expect(await client.request({ type: 'start', id: 'h1', turnId: 'hang', launch: fixtureLaunch(['--json', '--sigint-interrupts', '--lines', '1000000', '--interval-ms', '50']) })).toMatchObject({ type: 'ack' });
    expect(await client.request({ type: 'start', id: 'h2', turnId: 'other', launch: fixtureLaunch(['--json']) })).toMatchObject({ type: 'error', id: 'h2', code: 'turn-busy' });
    // A host deciding whether its start reached the bridge sees the running turn, durable or not.
    const { hello: running } = await connect();
    expect(running).toMatchObject({ state: 'running', runningTurnId: 'hang' });
    expect(await client.request({ type: 'abort', id: 'h3', turnId: 'hang', graceMs: 200 })).toMatchObject({ type: 'ack', of: 'abort' });
    const end = await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'hang');
    expect(end).toMatchObject({ data: { reason: 'aborted' } });
  });

  it('rerun of a known turn starts a turn marked rerun; of an unknown one gets unknown-turn', async () => {
    const { client, hello } = await connect();
    await client.attach(hello.lastSeq);
    expect(await client.request({ type: 'rerun', id: 'x1', turnId: 'rr', of: 'nope', launch: fixtureLaunch(['--json']) })).toMatchObject({ type: 'error', id: 'x1', code: 'unknown-turn' });
    expect(await client.request({ type: 'rerun', id: 'x2', turnId: 'rr', of: 't1', launch: fixtureLaunch(['--json']) })).toMatchObject({ type: 'ack', of: 'rerun' });
    const start = await client.waitForRecord((r) => r.kind === 'turn-start' && r.turnId === 'rr');
    expect(start.data).toMatchObject({ rerun: true });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'rr');
    const { hello: after } = await connect();
    expect(after.turns.find((t) => t.turnId === 'rr')).toMatchObject({ status: 'ended', rerun: true });
  });
});

describe('auth: refused with HTTP 401 before any frame', () => {
  it.each([
    ['a wrong token in the header', { token: 'x'.repeat(32) }, 'header'],
    ['a token of the wrong length', { token: 'short' }, 'header'],
    ['no token', {}, 'none'],
    ['a wrong token in the query string', { token: 'y'.repeat(32) }, 'query'],
  ] as const)('%s', async (_name, override, tokenIn) => {
    const attempt = connectClient({ port: bridge.port, token: 'token' in override ? override.token : bridge.token }, { tokenIn });
    await expect(attempt).rejects.toBeInstanceOf(HttpRefusal);
    await expect(attempt).rejects.toMatchObject({ status: 401 });
  });

  it('the right token in the query string (fallback for proxies) is accepted', async () => {
    const { hello } = await connect({ tokenIn: 'query' });
    expect(hello.type).toBe('hello');
  });
});

describe('refused frames get their error code and the connection stays usable', () => {
  it('oversized, malformed, schema-invalid, unknown type; then ping still works', async () => {
    const { client } = await connect();
    client.send('x'.repeat(8 * 1024 * 1024 + 1));
    expect(await client.next('error')).toMatchObject({ code: 'too-large' });
    client.send('{not json');
    expect(await client.next('error')).toMatchObject({ code: 'bad-frame' });
    client.send({ type: 'start', id: 'bad-1', turnId: 5 });
    expect(await client.next('error')).toMatchObject({ code: 'bad-frame', id: 'bad-1' });
    client.send({ type: 'teleport', id: 'bad-2' });
    expect(await client.next('error')).toMatchObject({ code: 'bad-frame', id: 'bad-2' });
    client.send({ type: 'ping', t: 42 });
    expect(await client.next('pong')).toEqual({ type: 'pong', t: 42 });
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('commands from a socket that is not the owner get not-owner', async () => {
    const { client } = await connect();
    expect(await client.request({ type: 'start', id: 'n1', turnId: 'nope', launch: fixtureLaunch(['--json']) })).toMatchObject({ code: 'not-owner', id: 'n1' });
    expect(await client.request({ type: 'diagnostics', id: 'n2', enabled: true })).toMatchObject({ code: 'not-owner' });
  });

  it('a different protocol major gets version-mismatch and close 4001', async () => {
    const { client } = await connect();
    client.send({ type: 'attach', id: 'v1', protocolVersion: '2.0', cursor: 0 });
    expect(await client.reply('v1')).toMatchObject({ type: 'error', code: 'version-mismatch' });
    expect((await client.closed).code).toBe(4001);
  });

  it('tool-result / approval for a call that is not pending get unknown-call', async () => {
    const { client, hello } = await connect();
    await client.attach(hello.lastSeq);
    expect(await client.request({ type: 'tool-result', id: 'c1', callId: 'call-9', output: 1 })).toMatchObject({ code: 'unknown-call' });
    expect(await client.request({ type: 'approval', id: 'c2', callId: 'call-9', approved: true })).toMatchObject({ code: 'unknown-call' });
  });
});

describe('ownership and cursors', () => {
  it('a newer attach displaces the older owner, who is told (not-owner) and closed with 4000', async () => {
    const { client: first, hello } = await connect();
    await first.attach(hello.lastSeq);
    const { client: second } = await connect();
    await second.attach(hello.lastSeq);
    expect(await first.waitFor((f) => f.type === 'error' && f.code === 'not-owner')).toBeTruthy();
    expect((await first.closed).code).toBe(4000);
    expect(await second.request({ type: 'diagnostics', id: 'd0', enabled: false })).toMatchObject({ type: 'ack' });
  });

  it('cursor beyond the journal → cursor-ahead (with firstSeq/lastSeq); journalId mismatch → journal-mismatch', async () => {
    const { client, hello } = await connect();
    client.send({ type: 'attach', id: 'a1', protocolVersion: PROTOCOL_VERSION_V1, cursor: hello.lastSeq + 10 });
    expect(await client.reply('a1')).toMatchObject({ code: 'cursor-ahead', firstSeq: 1, lastSeq: hello.lastSeq });
    client.send({ type: 'attach', id: 'a2', protocolVersion: PROTOCOL_VERSION_V1, cursor: 0, journalId: 'another' });
    expect(await client.reply('a2')).toMatchObject({ code: 'journal-mismatch' });
    const ok = await client.request({ type: 'attach', id: 'a3', protocolVersion: PROTOCOL_VERSION_V1, cursor: hello.lastSeq, journalId: hello.journalId });
    expect(ok).toMatchObject({ type: 'ack', of: 'attach', lastSeq: hello.lastSeq });
  });
});

describe('diagnostics', () => {
  it('forwards bridge log events to the owner only after diagnostics {enabled:true}, never the token', async () => {
    const { client, hello } = await connect();
    await client.attach(hello.lastSeq);
    expect(client.frames.some((f) => f.type === 'diagnostic')).toBe(false);
    expect(await client.request({ type: 'diagnostics', id: 'g1', enabled: true, level: 'debug' })).toMatchObject({ type: 'ack' });
    // A refused connection logs a warning in the server subsystem.
    await expect(connectClient({ port: bridge.port, token: 'z'.repeat(40) })).rejects.toBeInstanceOf(HttpRefusal);
    const diagnostic = await client.waitFor((f) => f.type === 'diagnostic' && f.subsystem === 'server' && f.level === 'warn');
    expect(diagnostic).toMatchObject({ type: 'diagnostic', level: 'warn', subsystem: 'server' });
    expect(JSON.stringify(client.frames)).not.toContain(bridge.token);
    expect(await client.request({ type: 'diagnostics', id: 'g2', enabled: false })).toMatchObject({ type: 'ack' });
    const count = client.frames.filter((f) => f.type === 'diagnostic').length;
    await expect(connectClient({ port: bridge.port, token: 'q'.repeat(40) })).rejects.toBeInstanceOf(HttpRefusal);
    client.send({ type: 'ping', t: 1 });
    await client.next('pong');
    expect(client.frames.filter((f) => f.type === 'diagnostic').length).toBe(count);
  });
});
