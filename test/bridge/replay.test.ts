// server/record-stream.ts through the built bridge: attach at every cursor, drops during a
// live stream, and a slow consumer that must not grow the bridge's memory.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeFrame, JournalRecord } from '../../protocol/v1/index.ts';
import { connectClient, eventually, fixtureLaunch, seqProblem, startBridge, type RunningBridge, type TestClient } from './helpers.ts';

const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];

async function bridgeOn(stateDir?: string): Promise<RunningBridge> {
  const bridge = await startBridge(stateDir === undefined ? {} : { stateDir });
  bridges.push(bridge);
  return bridge;
}

async function connect(bridge: RunningBridge) {
  const connected = await connectClient(bridge);
  clients.push(connected.client);
  return connected;
}

afterEach(async () => {
  for (const client of clients) expect(client.invalid).toEqual([]);
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
});

/** Runs one turn of the fixture to its end; returns the turn-end record. */
async function runTurn(client: TestClient, turnId: string, args: string[]): Promise<JournalRecord> {
  const ack = await client.request({ type: 'start', id: `start-${turnId}`, turnId, launch: fixtureLaunch(args) });
  expect(ack.type).toBe('ack');
  return client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === turnId, 60_000);
}

/** Resident set size of a process, in bytes (Linux). */
function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

describe('attach at every cursor', () => {
  it('of a 1,000-record turn yields exactly the missing records once (from memory, then from disk after a restart)', async () => {
    const bridge = await bridgeOn();
    const { client } = await connect(bridge);
    await client.attach(0);
    // bridge-start is seq 1; the turn is turn-start, spawn, session line, 994 lines, done, exit, turn-end = 1,000 records.
    const end = await runTurn(client, 'k', ['--json', '--lines', '994']);
    const turnRecords = client.records().filter((r) => r.turnId === 'k');
    expect(turnRecords).toHaveLength(1000);
    const lastSeq = end.seq;

    const check = async (target: RunningBridge) => {
      let { client: attacher } = await connect(target);
      for (let cursor = 0; cursor <= lastSeq; cursor++) {
        if (cursor % 100 === 99) {
          // Mix fresh connections in with re-attaches on one socket.
          await attacher.close();
          attacher = (await connect(target)).client;
        }
        const { begin, records } = await attacher.attach(cursor);
        expect(begin).toEqual({ type: 'replay-begin', from: cursor + 1, to: lastSeq });
        const problem = seqProblem(records, cursor + 1, lastSeq);
        if (problem !== null) throw new Error(`cursor ${cursor}: ${problem}`);
      }
    };
    await check(bridge);

    // A restarted bridge holds nothing in memory: every replay now streams from disk.
    // (Its own bridge-start adds one record after lastSeq, so compare up to the turn's end.)
    await bridge.kill('SIGTERM');
    const restarted = await bridgeOn(bridge.stateDir);
    const { client: reader, hello } = await connect(restarted);
    expect(hello.lastSeq).toBe(lastSeq + 1);
    for (const cursor of [0, 1, 2, 500, 999, lastSeq - 1, lastSeq, lastSeq + 1]) {
      const { records } = await reader.attach(cursor);
      expect(seqProblem(records, cursor + 1, lastSeq + 1)).toBeNull();
      expect(records.filter((r) => r.turnId === 'k')).toEqual(turnRecords.filter((r) => r.seq > cursor));
    }
    // A resuming host's first part waits for its whole first frame: a replay's first frame is ≤ 16 KiB, the next ones full.
    const { begin } = await reader.attach(0);
    const [first, second] = reader.frames.slice(reader.frames.indexOf(begin) + 1);
    expect(first?.type).toBe('records');
    expect(second?.type).toBe('records');
    expect(JSON.stringify(first).length).toBeLessThanOrEqual(16 * 1024);
    expect(JSON.stringify(second).length).toBeGreaterThan(64 * 1024);
  });
});

describe('socket drops during a live stream', () => {
  it('give no gap and no duplicate: every reconnect resumes from the last seq received', async () => {
    const bridge = await bridgeOn();
    const { client: owner, hello } = await connect(bridge);
    await owner.attach(hello.lastSeq);
    const ack = await owner.request({ type: 'start', id: 's', turnId: 'live', launch: fixtureLaunch(['--json', '--lines', '3000', '--interval-ms', '1']) });
    expect(ack.type).toBe('ack');

    const seen: number[] = [];
    let cursor = hello.lastSeq;
    let client = owner;
    let drops = 0;
    let ended = false;
    while (!ended) {
      // Take records for a short while, then cut the connection without a close handshake.
      const started = seen.length;
      const until = Date.now() + 40 + drops * 7;
      await eventually(() => Date.now() > until || client.records().some((r) => r.kind === 'turn-end' && r.turnId === 'live'), 10_000);
      for (const record of client.records()) {
        if (record.seq <= cursor) continue; // already counted from the previous frames of this connection
        if (record.seq !== cursor + 1) throw new Error(`gap or duplicate: got ${record.seq} after ${cursor}`);
        seen.push(record.seq);
        cursor = record.seq;
        if (record.kind === 'turn-end' && record.turnId === 'live') ended = true;
      }
      expect(seen.length).toBeGreaterThanOrEqual(started);
      if (ended) break;
      client.ws.terminate();
      drops++;
      const next = await connect(bridge);
      client = next.client;
      const from = client.frames.length;
      client.send({ type: 'attach', protocolVersion: '1.0', cursor });
      const begin = await client.waitFor((f) => f.type === 'replay-begin', 10_000, from);
      expect(begin).toMatchObject({ from: cursor + 1 });
    }
    expect(drops).toBeGreaterThan(3);
    expect(seen[0]).toBe(hello.lastSeq + 1);
    expect(seqProblem(seen.map((seq) => ({ seq })), hello.lastSeq + 1, cursor)).toBeNull();
  });
});

describe('a slow consumer', () => {
  it('does not grow the bridge memory while the CLI prints 200k lines, and later receives everything in order', async () => {
    const bridge = await bridgeOn();
    const { client, hello } = await connect(bridge);
    client.discardFrames();
    let expected = hello.lastSeq + 1;
    let problem: string | null = null;
    let turnEnd: JournalRecord | null = null;
    client.onFrame = (frame: BridgeFrame) => {
      if (frame.type !== 'records') return;
      for (const record of frame.records) {
        if (record.seq !== expected && problem === null) problem = `got seq ${record.seq}, expected ${expected}`;
        expected = record.seq + 1;
        if (record.kind === 'turn-end' && record.turnId === 'flood') turnEnd = record;
      }
    };
    await client.attach(hello.lastSeq);
    const { client: control } = await connect(bridge);
    const baseline = rssBytes(bridge.proc.pid!);

    const lines = 200_000;
    client.send({ type: 'start', id: 'f', turnId: 'flood', launch: fixtureLaunch(['--json', '--lines', String(lines), '--line-bytes', '1000']) });
    await client.reply('f');
    client.ws.pause(); // stop reading: the kernel buffers fill, then the bridge's socket buffer

    let peak = baseline;
    let peakAtQuarter = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(bridge.proc.pid!))), 20);
    try {
      // The turn runs to its end while the owner reads nothing (the CLI is never held back by the host).
      await eventually(
        async () => {
          const { client: probe, hello: now } = await connectClient(bridge);
          await probe.close();
          if (peakAtQuarter === 0 && now.lastSeq - hello.lastSeq > lines / 4) peakAtQuarter = peak;
          return now.turns.at(-1)?.turnId === 'flood' && now.turns.at(-1)?.status === 'ended' ? now : undefined;
        },
        60_000,
        'the flood turn to end',
      );
    } finally {
      clearInterval(sampler);
    }
    const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    console.log(`slow consumer: bridge RSS baseline ${mib(baseline)}, at 25% ${mib(peakAtQuarter)}, peak ${mib(peak)}`);
    // ~216 MB of records went through. A bridge that queued them for the paused socket would hold
    // them all (and grow ~160 MB between the 25% mark and the end); a bounded one plateaus early.
    expect(peakAtQuarter).toBeGreaterThan(0);
    expect(peak - peakAtQuarter).toBeLessThan(64 * 2 ** 20);
    expect(peak - baseline).toBeLessThan(160 * 2 ** 20);
    expect(turnEnd).toBeNull(); // nothing like all of it reached a paused client

    client.ws.resume();
    await eventually(() => turnEnd !== null, 60_000, 'the paused client to catch up');
    expect(problem).toBeNull();
    expect(turnEnd!.seq).toBe(expected - 1);
    await control.close();
  });
});
