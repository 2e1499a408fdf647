// The channel's revive hook (BridgeChannelOptions.revive) against real bridges: a SIGKILLed bridge's
// refused port goes to the hook before any backoff; what the hook answers decides what follows — a new
// bridge on the same state dir (the channel re-attaches at its cursor, every record once, a queued request
// delivered), null (not dead: plain backoff, at most maxRevives asks in its window), or a rejection (bridge-gone).
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../../protocol/v1/index.ts';
import { createBridgeChannel, type BridgeChannel, type BridgeChannelOptions } from '../../../host/channel/index.ts';
import { CHANNEL_LIMITS } from '../../../host/limits.ts';
import { eventually, fixtureLaunch, seqProblem, startBridge, type RunningBridge } from '../../bridge/helpers.ts';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function bridge(stateDir?: string): Promise<RunningBridge> {
  const running = await startBridge(stateDir === undefined ? {} : { stateDir });
  cleanups.push(() => running.kill());
  return running;
}

function open(first: RunningBridge, revive: BridgeChannelOptions['revive'], reconnectDeadlineMs = 1_500, backoff = { initialMs: 20, maxMs: 100 }) {
  const records: JournalRecord[] = [];
  const diags: string[] = [];
  const channel: BridgeChannel = createBridgeChannel({
    url: first.url,
    token: first.token,
    cursor: 0,
    backoff,
    reconnectDeadlineMs,
    onRecords: (batch) => void records.push(...batch),
    onDiagnostic: (d) => diags.push(`${d.level} ${d.message}`),
    ...(revive ? { revive } : {}),
  });
  cleanups.push(() => channel.close());
  return { channel, records, diags };
}

describe('channel revive hook', () => {
  it('a SIGKILLed bridge is replaced through the hook: re-attached at the cursor, every record once, a request queued meanwhile delivered', { timeout: 30_000 }, async () => {
    const first = await bridge();
    const asked: Array<{ cause: string; bridgeId: string | undefined }> = [];
    let second: RunningBridge | undefined;
    const { channel, records, diags } = open(first, async (dead) => {
      asked.push(dead);
      second = await bridge(first.stateDir);
      return { url: second.url, token: second.token };
    });
    await channel.whenLive();
    await channel.request({ type: 'start', turnId: 't1', launch: fixtureLaunch(['--lines', '5']) });
    await eventually(() => records.some((r) => r.kind === 'turn-end'));
    await first.kill('SIGKILL');
    // Sent once the channel knows its bridge is gone (the hook was asked; a request sent on the dying socket
    // before that is at-most-once, refused): held by the channel, delivered to the revived bridge.
    await eventually(() => asked.length === 1);
    const started = channel.request({ type: 'start', turnId: 't2', launch: fixtureLaunch(['--lines', '5']) });
    await started;
    await eventually(() => records.some((r) => r.kind === 'turn-end' && r.turnId === 't2'));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.cause).toMatch(/ECONNREFUSED/);
    expect(asked[0]!.bridgeId).toBe(first.ready.bridgeId);
    expect(seqProblem(records, 1, records.at(-1)!.seq)).toBeNull();
    expect(records.filter((r) => r.kind === 'turn-start').map((r) => r.turnId)).toEqual(['t1', 't2']);
    expect(diags.filter((d) => /looks dead|was revived/.test(d)).every((d) => d.startsWith('warn'))).toBe(true);
    expect(diags.some((d) => /^warn the bridge was revived in \d+ ms/.test(d))).toBe(true);
    expect(channel.hello?.bridgeId).toBe(second!.ready.bridgeId);
  });

  it('null (a live bridge holds the state dir) backs off as before; the hook is asked at most maxRevives times in its window', { timeout: 30_000 }, async () => {
    const first = await bridge();
    let asked = 0;
    const { channel, diags } = open(first, async () => {
      asked++;
      return null;
    });
    await channel.whenLive();
    await first.kill('SIGKILL');
    const error = await channel.closed;
    expect(error?.code).toBe('reconnect-deadline');
    expect(asked).toBe(CHANNEL_LIMITS.maxRevives);
    expect(diags.filter((d) => /not dead after all/.test(d))).toHaveLength(CHANNEL_LIMITS.maxRevives);
    // The refusals are warnings with their cause, not info.
    expect(diags.filter((d) => /connection lost: .*ECONNREFUSED/.test(d)).every((d) => d.startsWith('warn'))).toBe(true);
  });

  it('another process on the dead bridge\'s port refusing the token (HTTP 401) is a dead bridge, not a wrong token: revived', { timeout: 30_000 }, async () => {
    const first = await bridge();
    const asked: string[] = [];
    const { channel, records, diags } = open(
      first,
      async (dead) => {
        asked.push(dead.cause);
        const second = await bridge(first.stateDir);
        return { url: second.url, token: second.token };
      },
      10_000,
      // The first retry comes after the port is taken (below), as when another bridge on the machine gets it.
      { initialMs: 2_000, maxMs: 2_000 },
    );
    await channel.whenLive();
    await first.kill('SIGKILL');
    const taker = createServer((_request, response) => response.writeHead(401).end());
    taker.on('upgrade', (_request, socket) => socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n'));
    await new Promise<void>((done) => taker.listen(first.port, '127.0.0.1', done));
    cleanups.push(() => new Promise((done) => taker.close(() => done(undefined))));
    // Sent once the channel knows its connection is gone (a request sent on the dying socket is at-most-once, refused).
    await eventually(() => diags.some((d) => /connection lost/.test(d)));
    await channel.request({ type: 'start', turnId: 't1', launch: fixtureLaunch(['--lines', '2']) });
    await eventually(() => records.some((r) => r.kind === 'turn-end'));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/another process answers on the port/);
  });

  it('a revived bridge that dies before it attaches, its port then answering 401, is dead again, not a wrong token: revived once more', { timeout: 30_000 }, async () => {
    const first = await bridge();
    const asked: string[] = [];
    const { channel, records } = open(first, async (dead) => {
      asked.push(dead.cause);
      const next = await bridge(first.stateDir);
      if (asked.length > 1) return { url: next.url, token: next.token };
      // The first revival's bridge dies before the channel reaches it, and another process takes its port.
      await next.kill('SIGKILL');
      const taker = createServer((_request, response) => response.writeHead(401).end());
      taker.on('upgrade', (_request, socket) => socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n'));
      await new Promise<void>((done) => taker.listen(next.port, '127.0.0.1', done));
      cleanups.push(() => new Promise((done) => taker.close(() => done(undefined))));
      return { url: next.url, token: next.token };
    });
    await channel.whenLive();
    await first.kill('SIGKILL');
    await eventually(() => asked.length === 2);
    await channel.request({ type: 'start', turnId: 't1', launch: fixtureLaunch(['--lines', '2']) });
    await eventually(() => records.some((r) => r.kind === 'turn-end'));
    expect(asked[0]).toMatch(/ECONNREFUSED/);
    expect(asked[1]).toMatch(/HTTP 401.*another process answers on the port/);
  });

  it('a hook that cannot bring the bridge back ends the channel with bridge-gone, naming both causes', { timeout: 30_000 }, async () => {
    const first = await bridge();
    const { channel } = open(first, async () => {
      throw new Error('sandbox s1 is not running');
    });
    await channel.whenLive();
    const pending = channel.request({ type: 'start', turnId: 't1', launch: fixtureLaunch(['--lines', '1', '--interval-ms', '2000']) });
    await pending;
    await first.kill('SIGKILL');
    const error = await channel.closed;
    expect(error?.code).toBe('bridge-gone');
    expect(error?.message).toMatch(/ECONNREFUSED.*could not be brought back: sandbox s1 is not running/);
  });

  it('a bridge that keeps dying is revived at most maxRevives times in the window, then left to the backoff', { timeout: 30_000 }, async () => {
    const first = await bridge();
    let asked = 0;
    const { channel } = open(first, async () => {
      asked++;
      const next = await bridge(first.stateDir);
      // It dies as soon as it is up: a crash loop.
      setTimeout(() => void next.kill('SIGKILL'), 50);
      return { url: next.url, token: next.token };
      // A deadline long enough for three bridge starts on a loaded machine: the cap, not the deadline, must end the revivals.
    }, 12_000);
    await channel.whenLive();
    await first.kill('SIGKILL');
    const error = await channel.closed;
    expect(error?.code).toBe('reconnect-deadline');
    expect(asked).toBe(CHANNEL_LIMITS.maxRevives);
  });
});
