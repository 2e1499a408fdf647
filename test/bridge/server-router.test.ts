// BridgeServer in-process with a fake journal and supervisor: the cases the
// real journal cannot produce (a journal whose head was dropped → cursor-expired),
// the pendingCalls seam, ack ordering and the heartbeat.
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION_V1, type RecordDraft } from '../../protocol/v1/index.ts';
import { createBridgeLogger } from '../../bridge/logger.ts';
import { createBridgeServer, type BridgeServer, type CommandResult, type JournalPort, type SupervisorPort } from '../../bridge/server/server.ts';
import { TurnLog } from '../../bridge/journal/turn-log.ts';
import { connectClient, randomToken, seqProblem, tempDir, type TestClient } from './helpers.ts';

/** Holds records firstSeq..lastSeq in memory; append makes them durable on the next tick. */
class FakeJournal implements JournalPort {
  readonly journalId = 'fake-journal';
  lines: string[] = [];
  onDurable: (batch: { firstSeq: number; lastSeq: number; lines: string[] }) => void = () => {};
  constructor(readonly firstSeq: number) {}

  get durableSeq(): number {
    return this.firstSeq + this.lines.length - 1;
  }

  append(draft: RecordDraft): number {
    const seq = this.durableSeq + 1;
    const line = JSON.stringify({ seq, turnId: draft.turnId, ts: 1, kind: draft.kind, data: draft.data });
    this.lines.push(line);
    this.onDurable({ firstSeq: seq, lastSeq: seq, lines: [line] });
    return seq;
  }

  async flush(): Promise<void> {}

  async *read(fromSeq: number, toSeq: number, maxBatchRecords: number): AsyncIterable<string[]> {
    for (let seq = Math.max(fromSeq, this.firstSeq); seq <= Math.min(toSeq, this.durableSeq); seq += maxBatchRecords) {
      yield this.lines.slice(seq - this.firstSeq, Math.min(seq + maxBatchRecords, toSeq + 1) - this.firstSeq);
    }
  }
}

class FakeSupervisor implements SupervisorPort {
  state: 'idle' | 'running' | 'stopping' = 'idle';
  turnId: string | null = null;
  constructor(private readonly journal: FakeJournal) {}
  start(turnId: string): CommandResult {
    this.journal.append({ kind: 'turn-start', turnId, data: {} });
    return { ok: true };
  }
  write(): CommandResult {
    return { ok: false, code: 'no-process', message: 'no process' };
  }
  signal(): CommandResult {
    return { ok: false, code: 'no-process', message: 'no process' };
  }
  abort(): CommandResult {
    return { ok: false, code: 'unknown-turn', message: 'no turn' };
  }
}

const servers: BridgeServer[] = [];
const clients: TestClient[] = [];

afterEach(async () => {
  for (const client of clients) expect(client.invalid).toEqual([]);
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function setup(options: { firstSeq?: number; records?: number; heartbeatMs?: number } = {}) {
  const journal = new FakeJournal(options.firstSeq ?? 1);
  for (let i = 0; i < (options.records ?? 0); i++) journal.append({ kind: 'stdout', turnId: null, data: { text: `line ${i}` } });
  const token = randomToken();
  const server = await createBridgeServer({
    host: '127.0.0.1',
    port: 0,
    token,
    bridgeId: 'fake-bridge',
    bridgeVersion: '0.0.0-test',
    journal,
    supervisor: new FakeSupervisor(journal),
    turns: new TurnLog({ maxHelloTurns: 4, maxKnownTurns: 16 }),
    logger: createBridgeLogger({ stateDir: tempDir(), token }),
    lifecycle: { stop: async () => {}, destroy: async () => {}, exit: () => {} },
    ...(options.heartbeatMs === undefined ? {} : { limits: { heartbeatMs: options.heartbeatMs } }),
  });
  journal.onDurable = (batch) => server.onDurable(batch);
  servers.push(server);
  const connect = async () => {
    const connected = await connectClient({ port: server.port, token });
    clients.push(connected.client);
    return connected;
  };
  return { journal, server, connect };
}

describe('cursors against a journal whose head is gone', () => {
  it('a cursor older than firstSeq-1 gets cursor-expired with the journal bounds; firstSeq-1 replays everything', async () => {
    const { connect } = await setup({ firstSeq: 101, records: 50 });
    const { client, hello } = await connect();
    expect(hello).toMatchObject({ firstSeq: 101, lastSeq: 150 });
    expect(await client.request({ type: 'attach', id: 'old', protocolVersion: PROTOCOL_VERSION_V1, cursor: 99 })).toMatchObject({
      type: 'error',
      code: 'cursor-expired',
      firstSeq: 101,
      lastSeq: 150,
    });
    const { begin, records } = await client.attach(100);
    expect(begin).toEqual({ type: 'replay-begin', from: 101, to: 150 });
    expect(seqProblem(records, 101, 150)).toBeNull();
  });
});

describe('routing', () => {
  it('answers a pending tool call through the pendingCalls seam, then forgets it', async () => {
    const { server, connect } = await setup();
    const { client } = await connect();
    await client.attach(0);
    const answers: unknown[] = [];
    server.pendingCalls.set('call-1', { kind: 'tool-call', answer: (frame) => answers.push(frame.output) });
    server.pendingCalls.set('call-2', { kind: 'approval-request', answer: (frame) => answers.push(frame.approved) });
    expect(await client.request({ type: 'approval', id: 'w', callId: 'call-1', approved: true })).toMatchObject({ code: 'unknown-call' });
    expect(await client.request({ type: 'tool-result', id: 'a', callId: 'call-1', output: { ok: 1 } })).toMatchObject({ type: 'ack', of: 'tool-result' });
    expect(await client.request({ type: 'approval', id: 'b', callId: 'call-2', approved: false })).toMatchObject({ type: 'ack', of: 'approval' });
    expect(await client.request({ type: 'tool-result', id: 'c', callId: 'call-1', output: 2 })).toMatchObject({ code: 'unknown-call' });
    expect(answers).toEqual([{ ok: 1 }, false]);
  });

  it('acks a command after its records went out to the owner', async () => {
    const { connect } = await setup({ records: 3 });
    const { client } = await connect();
    await client.attach(3);
    const ack = await client.request({ type: 'start', id: 's', turnId: 't', launch: { argv: ['x'] } });
    expect(ack).toMatchObject({ type: 'ack', lastSeq: 4 });
    const ackAt = client.frames.indexOf(ack);
    expect(client.records().map((r) => r.seq)).toEqual([4]);
    expect(client.frames.findIndex((f) => f.type === 'records')).toBeLessThan(ackAt);
  });
});

describe('heartbeat', () => {
  it('terminates a socket that answers no ws ping for two intervals', async () => {
    const { connect } = await setup({ heartbeatMs: 50 });
    const { client } = await connect();
    const { client: healthy } = await connect();
    client.ws.pause(); // reads nothing, so it never answers pings
    await new Promise((resolve) => setTimeout(resolve, 400));
    client.ws.resume(); // and now finds its connection gone
    const closed = await client.closed;
    expect(closed.code).toBe(1006); // terminated, no close handshake
    expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
  });
});
