// host/channel against the real bridge (dist/bridge.mjs as a child process,
// the fixture CLI producing output): exactly-once in-order delivery across
// socket drops, a bridge kill + restart, a port proxy's 502 spell and a frozen
// (SIGSTOPped) bridge; recording; queue-full; displacement. Edge cases the real
// bridge cannot produce are in channel-peer.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../protocol/v1/index.ts';
import { createBridgeChannel, type BridgeChannel, type BridgeChannelOptions, type ChannelStatus } from '../../host/channel/index.ts';
import { parseRecording } from '../../protocol/recording/recording-format.ts';
import { eventually, fixtureLaunch, sleep, startBridge, tempDir, type RunningBridge } from '../bridge/helpers.ts';
import { startProxy, type TestProxy } from './proxy.ts';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function bridge(options: Parameters<typeof startBridge>[0] = {}): Promise<RunningBridge> {
  const running = await startBridge(options);
  cleanups.push(() => {
    // A test may leave it stopped; SIGCONT first so SIGKILL is not queued behind a stop.
    if (running.proc.exitCode === null && running.proc.signalCode === null) running.proc.kill('SIGCONT');
    return running.kill();
  });
  return running;
}

async function proxyTo(target: RunningBridge): Promise<TestProxy> {
  const proxy = await startProxy({ targetPort: target.port, path: '/' });
  cleanups.push(() => proxy.close());
  return proxy;
}

type Opened = {
  channel: BridgeChannel;
  records: JournalRecord[];
  statuses: ChannelStatus[];
  diags: string[];
  reconnects(): number;
};

function open(url: string, token: string, extra: Partial<BridgeChannelOptions> = {}): Opened {
  const records: JournalRecord[] = [];
  const statuses: ChannelStatus[] = [];
  const diags: string[] = [];
  const channel = createBridgeChannel({
    url,
    token,
    cursor: 0,
    backoff: { initialMs: 20, maxMs: 250 },
    onRecords: (batch) => {
      for (const record of batch) records.push(record);
    },
    onStatus: (status) => statuses.push(status),
    onDiagnostic: (d) => diags.push(`${d.level} ${d.message}`),
    ...extra,
  });
  cleanups.push(() => channel.close());
  return {
    channel,
    records,
    statuses,
    diags,
    reconnects: () => statuses.filter((s) => s.state === 'reconnecting').length,
  };
}

/** null when `records` are exactly seq from..to, once each, in order; else the first problem. */
function seqProblem(records: readonly JournalRecord[], from: number, to: number): string | null {
  if (records.length !== to - from + 1) return `expected ${to - from + 1} records (${from}..${to}), got ${records.length}`;
  for (let i = 0; i < records.length; i++) {
    if (records[i]?.seq !== from + i) return `record ${i} has seq ${records[i]?.seq}, expected ${from + i}`;
  }
  return null;
}

const turnEnded = (o: Opened, turnId: string) => () => o.records.find((r) => r.kind === 'turn-end' && r.turnId === turnId);
const linesOf = (o: Opened, turnId: string) => o.records.filter((r) => r.kind === 'stdout' && r.turnId === turnId).length;

describe('channel ↔ real bridge', () => {
  it('a turn is delivered in order, exactly once; replay then live', async () => {
    const b = await bridge();
    const o = open(b.url, b.token);
    await o.channel.whenLive();
    const ack = await o.channel.request({ type: 'start', turnId: 't1', launch: fixtureLaunch(['--json', '--lines', '2000']) });
    expect(ack).toMatchObject({ type: 'ack', of: 'start' });
    const end = await eventually(turnEnded(o, 't1'), 20_000, 'turn-end');
    expect(seqProblem(o.records, 1, end.seq)).toBeNull();
    expect(linesOf(o, 't1')).toBe(2002); // session line + 2000 + done
    expect(o.records[0]?.kind).toBe('bridge-start');
    expect(o.channel.cursor).toBe(end.seq);
    expect(o.statuses.map((s) => s.state)).toEqual(['connecting', 'attaching', 'replaying', 'live']);

    // A second host from the middle gets the rest as replay, each record once.
    const replayFlags: boolean[] = [];
    const late = open(b.url, b.token, {
      cursor: 1000,
      onRecords: (batch, info) => {
        for (const record of batch) late.records.push(record);
        replayFlags.push(info.replay);
      },
    });
    await late.channel.whenLive();
    expect(seqProblem(late.records, 1001, end.seq)).toBeNull();
    expect(replayFlags.every(Boolean)).toBe(true);
    // …and displaced the first one, which ends with a typed error.
    expect((await o.channel.closed)?.code).toBe('displaced');
  });

  it('TCP connections destroyed repeatedly mid-stream: no gap, no duplicate', async () => {
    const b = await bridge();
    const proxy = await proxyTo(b);
    const o = open(proxy.url, b.token, { backoff: { initialMs: 5, maxMs: 50 } });
    await o.channel.whenLive();
    await o.channel.request({ type: 'start', turnId: 'drops', launch: fixtureLaunch(['--json', '--lines', '3000', '--interval-ms', '1']) });
    let drops = 0;
    while (!turnEnded(o, 'drops')()) {
      await sleep(60 + Math.floor(Math.random() * 60));
      drops += proxy.dropAll();
    }
    const end = turnEnded(o, 'drops')();
    expect(end).toBeDefined();
    expect(drops).toBeGreaterThanOrEqual(5);
    expect(o.reconnects()).toBeGreaterThanOrEqual(5);
    expect(seqProblem(o.records, 1, end?.seq ?? -1)).toBeNull();
    expect(linesOf(o, 'drops')).toBe(3002);
    expect(o.diags.filter((d) => d.startsWith('error'))).toEqual([]);
  });

  it('bridge killed for a few seconds and restarted on the same state dir: the channel resumes from its cursor', async () => {
    const first = await bridge();
    const o = open(first.url, first.token, { backoff: { initialMs: 50, maxMs: 500 } });
    await o.channel.whenLive();
    await o.channel.request({ type: 'start', turnId: 'k1', launch: fixtureLaunch(['--json', '--lines', '100000', '--interval-ms', '2']) });
    await eventually(() => linesOf(o, 'k1') >= 100, 20_000, '100 lines');
    await first.kill('SIGKILL');
    const cursorAtKill = o.channel.cursor;
    // Down for a few reconnect attempts (counted, not timed): each one fails and the channel keeps trying.
    const reconnectsAtKill = o.reconnects();
    await eventually(() => o.reconnects() >= reconnectsAtKill + 3, 20_000, 'three failed reconnects while the bridge is down');
    expect(['connecting', 'reconnecting']).toContain(o.channel.state);
    const second = await bridge({ stateDir: first.stateDir, token: first.token, args: ['--port', String(first.port)] });
    await eventually(() => o.channel.state === 'live' && o.channel.hello?.bridgeId === second.ready.bridgeId, 15_000, 're-attach');
    // The new bridge journals the interrupted turn's end and its own start after the old seqs.
    const interrupted = await eventually(turnEnded(o, 'k1'), 15_000, 'interrupted turn-end');
    expect(interrupted.data).toMatchObject({ reason: 'interrupted' });
    await eventually(() => o.records.find((r) => r.kind === 'bridge-start' && r.seq > cursorAtKill), 15_000, 'bridge-start');
    expect(seqProblem(o.records, 1, o.channel.cursor)).toBeNull();
    expect(o.diags.some((d) => d.includes('bridge restarted on the same journal'))).toBe(true);
    // And the session carries on on the new bridge.
    await o.channel.request({ type: 'start', turnId: 'k2', launch: fixtureLaunch(['--json', '--lines', '10']) });
    const end = await eventually(turnEnded(o, 'k2'), 20_000, 'k2 end');
    expect(seqProblem(o.records, 1, end.seq)).toBeNull();
  });

  it('port proxy answering 502: survives a spell within the budget; a short budget fails naming the last cursor', async () => {
    const b = await bridge();
    const proxy = await proxyTo(b);
    const o = open(proxy.url, b.token, { reconnectDeadlineMs: 20_000, backoff: { initialMs: 50, maxMs: 500 } });
    await o.channel.whenLive();
    await o.channel.request({ type: 'start', turnId: 'p1', launch: fixtureLaunch(['--json', '--lines', '1500', '--interval-ms', '2']) });
    await eventually(() => linesOf(o, 'p1') >= 50, 20_000, 'first lines');
    const liveBefore = o.statuses.filter((s) => s.state === 'live').length;
    proxy.setMode('http-502');
    proxy.dropAll();
    await eventually(() => proxy.stats.answeredHttpError >= 4, 20_000, 'four upgrades answered 502'); // the CLI keeps producing into the journal meanwhile
    // Between attempts ('reconnecting') or in one ('connecting'), whichever this moment falls on: never live, never given up.
    expect(['reconnecting', 'connecting']).toContain(o.channel.state);
    expect(o.statuses.filter((s) => s.state === 'live').length).toBe(liveBefore);
    proxy.setMode('pass');
    const end = await eventually(turnEnded(o, 'p1'), 30_000, 'turn end after the spell');
    expect(seqProblem(o.records, 1, end.seq)).toBeNull();
    const spell = o.statuses.filter((s): s is Extract<ChannelStatus, { state: 'reconnecting' }> => s.state === 'reconnecting');
    expect(spell.at(-1)?.reason).toBe('HTTP 502 on upgrade');
    expect(spell.at(-1)?.attempt).toBeGreaterThanOrEqual(4); // a spell of several refused attempts, counted, not timed
    await o.channel.close();

    const short = open(proxy.url, b.token, { cursor: end.seq, reconnectDeadlineMs: 1_500, backoff: { initialMs: 50, maxMs: 300 } });
    await short.channel.whenLive();
    proxy.setMode('http-502');
    proxy.dropAll();
    const error = await short.channel.closed;
    expect(error?.code).toBe('reconnect-deadline');
    expect(error?.lastCursor).toBe(end.seq);
    expect(error?.message).toMatch(new RegExp(`^gave up reconnecting after 1\\.\\d s; last cursor ${end.seq} \\(last failure: HTTP 502 on upgrade\\)$`));
  });

  it.runIf(process.env.HARNESS_BRIDGE_LONG === '1')(
    'HARNESS_BRIDGE_LONG: a 35 s 502 spell with the default budget',
    async () => {
      const b = await bridge();
      const proxy = await proxyTo(b);
      const o = open(proxy.url, b.token, { backoff: undefined });
      await o.channel.whenLive();
      proxy.setMode('http-502');
      proxy.dropAll();
      await sleep(35_000);
      expect(['connecting', 'reconnecting'], 'still trying (an attempt may be in flight)').toContain(o.channel.state);
      proxy.setMode('pass');
      await o.channel.whenLive();
      await o.channel.request({ type: 'start', turnId: 'l1', launch: fixtureLaunch(['--json', '--lines', '10']) });
      const end = await eventually(turnEnded(o, 'l1'), 20_000, 'turn end');
      expect(seqProblem(o.records, 1, end.seq)).toBeNull();
    },
    90_000,
  );

  it('heartbeat: a SIGSTOPped bridge is declared dead and the channel re-attaches after SIGCONT', async () => {
    const b = await bridge();
    // A 1 s heartbeat: a loaded 2-core box answers within it, so only the SIGSTOP silences the bridge.
    const o = open(b.url, b.token, { heartbeatMs: 1_000, connectTimeoutMs: 500, backoff: { initialMs: 50, maxMs: 200 } });
    await o.channel.whenLive();
    await o.channel.request({ type: 'start', turnId: 'h1', launch: fixtureLaunch(['--json', '--lines', '5']) });
    const first = await eventually(turnEnded(o, 'h1'), 20_000, 'h1 end');
    const stoppedAt = Date.now();
    b.proc.kill('SIGSTOP');
    await eventually(() => o.channel.state !== 'live', 15_000, 'heartbeat timeout'); // a hang guard, not a measure
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(1_500); // 2 silent intervals, not 1
    expect(o.diags.some((d) => d.includes('missed 2 heartbeats'))).toBe(true);
    await sleep(1_500); // connect attempts to the frozen bridge time out meanwhile
    b.proc.kill('SIGCONT');
    await eventually(() => o.channel.state === 'live', 15_000, 'live after SIGCONT');
    await o.channel.request({ type: 'start', turnId: 'h2', launch: fixtureLaunch(['--json', '--lines', '5']) });
    const end = await eventually(turnEnded(o, 'h2'), 20_000, 'h2 end');
    expect(end.seq).toBeGreaterThan(first.seq);
    expect(seqProblem(o.records, 1, end.seq)).toBeNull();
  });

  it('recording: header, frames both ways, connection events; the token never appears', async () => {
    const b = await bridge();
    const proxy = await proxyTo(b);
    const path = join(tempDir('hb-rec-'), 'channel.ndjson');
    const o = open(`${proxy.url}?token=${b.token}`, b.token, { recordTo: path });
    await o.channel.whenLive();
    await o.channel.request({ type: 'start', turnId: 'r1', launch: fixtureLaunch(['--json', '--lines', '20']) });
    await eventually(turnEnded(o, 'r1'), 20_000, 'r1 end');
    proxy.dropAll();
    await eventually(() => o.reconnects() > 0 && o.channel.state === 'live', 10_000, 're-attach');
    await o.channel.close();
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(b.token);
    const lines = parseRecording(text);
    expect(lines[0]).toMatchObject({ type: 'recording-header', format: 'harness-bridge-recording', version: 1 });
    const frames = lines.flatMap((l) => ('frame' in l ? [{ dir: l.dir, type: (l.frame as { type: string }).type, frame: l.frame }] : []));
    const inTypes = new Set(frames.filter((f) => f.dir === 'in').map((f) => f.type));
    const outTypes = new Set(frames.filter((f) => f.dir === 'out').map((f) => f.type));
    expect([...inTypes]).toEqual(expect.arrayContaining(['hello', 'replay-begin', 'records', 'replay-end', 'ack']));
    expect([...outTypes]).toEqual(expect.arrayContaining(['attach', 'start']));
    expect(frames.filter((f) => f.dir === 'out' && f.type === 'attach')).toHaveLength(2);
    // Every delivered record is in the recording.
    const recorded = new Set(
      frames.flatMap((f) => (f.type === 'records' ? (f.frame as { records: { seq: number }[] }).records.map((r) => r.seq) : [])),
    );
    expect(o.records.every((r) => recorded.has(r.seq))).toBe(true);
    const events = lines.flatMap((l) => ('event' in l ? [l.event] : []));
    expect(events).toEqual(expect.arrayContaining(['connect', 'open', 'attached', 'live', 'disconnect', 'reconnect', 'close']));
  });

  it('queue-full while the bridge is down; the queued requests flush in order after re-attach', async () => {
    const first = await bridge();
    const o = open(first.url, first.token, { maxQueuedFrames: 4, backoff: { initialMs: 50, maxMs: 200 } });
    await o.channel.whenLive();
    await first.kill('SIGKILL');
    await eventually(() => o.channel.state !== 'live', 5_000, 'disconnect');
    const queued = [0, 1, 2, 3].map((i) => o.channel.request({ type: 'diagnostics', enabled: i % 2 === 0, level: 'info' }));
    await expect(o.channel.request({ type: 'diagnostics', enabled: false })).rejects.toMatchObject({ code: 'queue-full' });
    await bridge({ stateDir: first.stateDir, token: first.token, args: ['--port', String(first.port)] });
    const acks = await Promise.all(queued);
    expect(acks.map((a) => a.of)).toEqual(['diagnostics', 'diagnostics', 'diagnostics', 'diagnostics']);
  });

  it('cursor ahead of the journal and a foreign journalId are terminal typed errors', async () => {
    const b = await bridge();
    const ahead = open(b.url, b.token, { cursor: 1_000_000 });
    const error = await ahead.channel.closed;
    expect(error?.code).toBe('cursor-ahead');
    expect(error?.message).toContain('last cursor 1000000');
    const foreign = open(b.url, b.token, { journalId: 'not-this-journal' });
    expect((await foreign.channel.closed)?.code).toBe('journal-mismatch');
    const wrongToken = open(b.url, 'wrong-token');
    expect((await wrongToken.channel.closed)?.code).toBe('unauthorized');
  });

  it('stop: acked, then the bridge closes with 4003 and the channel ends cleanly (null), no reconnect', async () => {
    const b = await bridge();
    const o = open(b.url, b.token);
    await o.channel.whenLive();
    expect(await o.channel.request({ type: 'stop', graceMs: 100 })).toMatchObject({ type: 'ack', of: 'stop' });
    expect(await o.channel.closed).toBeNull();
    expect(o.reconnects()).toBe(0);
    expect(await b.exited).toMatchObject({ code: 0 });
  });

  it('a bridge stopped by someone else (SIGTERM → close 4003) is terminal bridge-stopped', async () => {
    const b = await bridge();
    const o = open(b.url, b.token);
    await o.channel.whenLive();
    b.proc.kill('SIGTERM');
    const error = await o.channel.closed;
    expect(error?.code).toBe('bridge-stopped');
    expect(o.reconnects()).toBe(0);
  });

  it('figures: channel delivery rate', async () => {
    const b = await bridge();
    let count = 0;
    let frames = 0;
    let ended = false;
    const o = open(b.url, b.token, {
      onRecords: (batch) => {
        frames++;
        count += batch.length;
        if (batch.some((r) => r.kind === 'turn-end' && r.turnId === 'f1')) ended = true;
      },
    });
    await o.channel.whenLive();
    const lines = 100_000;
    const t0 = performance.now();
    await o.channel.request({ type: 'start', turnId: 'f1', launch: fixtureLaunch(['--json', '--lines', String(lines)]) });
    await eventually(() => ended, 60_000, 'turn end');
    const liveMs = performance.now() - t0;
    const liveCount = count;
    // Replay of the same journal to a fresh channel (disk → socket → channel).
    let replayed = 0;
    const t1 = performance.now();
    const replay = open(b.url, b.token, {
      onRecords: (batch) => {
        replayed += batch.length;
      },
    });
    await replay.channel.whenLive();
    const replayMs = performance.now() - t1;
    const line =
      `figures: channel live ${liveCount} records in ${liveMs.toFixed(0)} ms (${Math.round(liveCount / (liveMs / 1000))} records/s, ` +
      `${frames} frames, ${Math.round(frames / (liveMs / 1000))} frames/s, bound by the CLI + journal); ` +
      `replay ${replayed} records in ${replayMs.toFixed(0)} ms (${Math.round(replayed / (replayMs / 1000))} records/s); node ${process.version}`;
    console.log(line);
    expect(replayed).toBe(o.channel.cursor);
  });
});
