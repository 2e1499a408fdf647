// host/channel against a scripted peer (test/host/channel-peer.ts) and a fake
// socket: edge cases the real bridge cannot easily be made to produce —
// duplicate/skipped seqs, invalid frames, wrong protocol versions, refusals,
// unanswered requests across reconnects — plus the deadline arithmetic under
// fake timers. The headline behaviour runs against the real bridge in
// channel.test.ts.
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { PROTOCOL_VERSION_V1, type AckFrame, type JournalRecord } from '../../protocol/v1/index.ts';
import { ReconnectBudget } from '../../host/channel/backoff.ts';
import { RecordSequencer } from '../../host/channel/sequencer.ts';
import { createBridgeChannel, type BridgeChannel, type BridgeChannelOptions, type ChannelStatus } from '../../host/channel/index.ts';
import { BridgeChannelError, ChannelRequestError } from '../../host/channel/errors.ts';
import { CHANNEL_LIMITS } from '../../host/limits.ts';
import { parseRecording } from '../../protocol/recording/recording-format.ts';
import { ScriptedBridge, type ScriptedBridgeOptions } from './channel-peer.ts';
import { startProxy, type TestProxy } from './proxy.ts';

const token = 'peer-secret-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function peer(options: Partial<ScriptedBridgeOptions> = {}): Promise<ScriptedBridge> {
  const bridge = await ScriptedBridge.start({ token, ...options });
  cleanups.push(() => bridge.close());
  return bridge;
}

type Harness = { channel: BridgeChannel; seqs: number[]; replayFlags: boolean[]; statuses: ChannelStatus[]; diags: string[] };

function open(url: string, extra: Partial<BridgeChannelOptions> = {}): Harness {
  const seqs: number[] = [];
  const replayFlags: boolean[] = [];
  const statuses: ChannelStatus[] = [];
  const diags: string[] = [];
  const channel = createBridgeChannel({
    url,
    token,
    cursor: 0,
    backoff: { initialMs: 10, maxMs: 50 },
    onRecords: (records, info) => {
      for (const record of records) seqs.push(record.seq);
      replayFlags.push(info.replay);
    },
    onStatus: (status) => statuses.push(status),
    onDiagnostic: (d) => diags.push(d.message),
    ...extra,
  });
  cleanups.push(() => channel.close());
  return { channel, seqs, replayFlags, statuses, diags };
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('channel ↔ scripted peer', () => {
  it('replays past the cursor, then goes live; replay flag tracks replay-begin/replay-end', async () => {
    const bridge = await peer();
    bridge.append(250);
    const h = open(bridge.url, { cursor: 40 });
    await h.channel.whenLive();
    expect(h.seqs).toEqual(range(41, 250));
    expect(h.replayFlags.every(Boolean)).toBe(true);
    bridge.append(5);
    await until(() => h.seqs.length === 215);
    expect(h.replayFlags.at(-1)).toBe(false);
    expect(h.channel.cursor).toBe(255);
    expect(h.statuses.map((s) => s.state)).toEqual(['connecting', 'attaching', 'replaying', 'live']);
    const attach = bridge.received.find((f) => f.type === 'attach');
    expect(attach).toMatchObject({ type: 'attach', cursor: 40, journalId: bridge.journalId, protocolVersion: PROTOCOL_VERSION_V1 });
  });

  it('drops duplicates and re-attaches on a gap: no seq is skipped or delivered twice', async () => {
    const bridge = await peer();
    bridge.append(10);
    let sends = 0;
    // Live batch 1 is sent twice (duplicates); live batch 2 skips its first record (gap).
    bridge.mutateBatch = (records) => {
      sends++;
      if (sends === 2) return [...records, ...records];
      if (sends === 3) return records.slice(1);
      return records;
    };
    const h = open(bridge.url);
    await h.channel.whenLive();
    bridge.append(5); // send 2: duplicated
    bridge.append(5); // send 3: seq 16 missing → gap → re-attach from 15
    await until(() => h.channel.cursor === 20);
    expect(h.seqs).toEqual(range(1, 20));
    expect(bridge.connections).toBe(2);
    expect(h.diags.some((m) => m.includes('gap: expected seq 16, got 17'))).toBe(true);
  });

  it('a gap that never heals ends the channel as protocol-violation instead of looping', async () => {
    const bridge = await peer();
    bridge.append(10);
    bridge.mutateBatch = (records) => records.filter((r) => r.seq !== 5);
    const h = open(bridge.url);
    const error = await h.channel.closed;
    expect(error?.code).toBe('protocol-violation');
    expect(h.seqs).toEqual(range(1, 4));
    expect(bridge.connections).toBe(CHANNEL_LIMITS.maxGapReattaches + 1);
  });

  it('an invalid frame from the bridge is reported and dropped, the channel carries on', async () => {
    const bridge = await peer();
    bridge.append(3);
    const h = open(bridge.url);
    await h.channel.whenLive();
    const socket = bridge.owner;
    if (!socket) throw new Error('no owner');
    bridge.sendRaw(socket, '{"type":"records","records":[{"seq":"four"}]}');
    bridge.sendRaw(socket, 'not json');
    bridge.append(2);
    await until(() => h.channel.cursor === 5);
    expect(h.seqs).toEqual(range(1, 5));
    expect(h.diags.filter((m) => m.startsWith('dropped an invalid frame')).length).toBe(2);
  });

  it.each([
    ['hello with another major', 'version-mismatch'],
    ['cursor ahead of the journal', 'cursor-ahead'],
    ['cursor expired', 'cursor-expired'],
    ['journal mismatch', 'journal-mismatch'],
  ] as const)('%s → terminal %s naming the cursor', async (_name, code) => {
    const bridge = await peer(code === 'version-mismatch' ? { protocolVersion: '2.0' } : {});
    bridge.append(3);
    if (code === 'cursor-expired' || code === 'journal-mismatch') {
      bridge.onAttach = (socket, frame) => {
        bridge.send(socket, { type: 'error', id: frame.id, code, message: 'refused', firstSeq: 100, lastSeq: 200 });
        return true;
      };
    }
    const h = open(bridge.url, { cursor: code === 'cursor-ahead' ? 9 : 2 });
    const error = await h.channel.closed;
    expect(BridgeChannelError.isInstance(error)).toBe(true);
    expect(error?.code).toBe(code);
    expect(error?.lastCursor).toBe(code === 'cursor-ahead' ? 9 : 2);
    expect(error?.message).toContain(`last cursor ${code === 'cursor-ahead' ? 9 : 2}`);
    if (code === 'cursor-expired') expect([error?.firstSeq, error?.lastSeq]).toEqual([100, 200]);
    expect(bridge.connections).toBe(1); // terminal: no reconnect
    await expect(h.channel.whenLive()).rejects.toMatchObject({ code });
  });

  it('a journal other than the one named in options is refused locally before attaching', async () => {
    const bridge = await peer();
    const h = open(bridge.url, { journalId: 'some-other-journal' });
    expect((await h.channel.closed)?.code).toBe('journal-mismatch');
    expect(bridge.received.some((f) => f.type === 'attach')).toBe(false);
  });

  it('wrong token → HTTP 401 → terminal unauthorized, no retries', async () => {
    const bridge = await peer();
    const h = open(bridge.url, { token: 'wrong' });
    const error = await h.channel.closed;
    expect(error?.code).toBe('unauthorized');
    expect(bridge.connections).toBe(0);
  });

  it('a newer host attaching displaces this one: terminal displaced', async () => {
    const bridge = await peer();
    bridge.append(3);
    const first = open(bridge.url);
    await first.channel.whenLive();
    const second = open(bridge.url, { cursor: 3 });
    await second.channel.whenLive();
    const error = await first.channel.closed;
    expect(error?.code).toBe('displaced');
    bridge.append(1);
    await until(() => second.channel.cursor === 4);
    expect(first.channel.cursor).toBe(3);
  });

  it('request() assigns ids, resolves on ack and rejects with the bridge code', async () => {
    const bridge = await peer();
    bridge.reply = (frame) => (frame.type === 'input' ? { error: 'no-process' } : 'ack');
    const h = open(bridge.url);
    await h.channel.whenLive();
    const ack: AckFrame = await h.channel.request({ type: 'abort', turnId: 't1' });
    expect(ack).toMatchObject({ type: 'ack', of: 'abort' });
    const failed = await h.channel.request({ type: 'input', turnId: 't1', text: 'hi\n' }).catch((e: unknown) => e);
    expect(ChannelRequestError.isInstance(failed)).toBe(true);
    expect(failed).toMatchObject({ code: 'no-process', frameType: 'input', resent: false });
    const sent = bridge.received.filter((f) => f.type === 'abort' || f.type === 'input');
    expect(new Set(sent.map((f) => f.id)).size).toBe(2);
    // A launch spec may omit schema defaults; the channel sends them explicitly.
    await h.channel.request({ type: 'start', turnId: 't2', launch: { argv: ['true'] } });
    expect(bridge.received.find((f) => f.type === 'start')).toMatchObject({ launch: { stdin: 'null', lifetime: 'turn' } });
    await expect(h.channel.request({ type: 'signal', turnId: '', signal: 'SIGINT' })).rejects.toMatchObject({ code: 'bad-frame' });
  });

  it('queued while disconnected: flushed in order after re-attach; overflow → queue-full', async () => {
    const bridge = await peer();
    const port = bridge.port;
    const h = open(bridge.url, { maxQueuedFrames: 3, backoff: { initialMs: 20, maxMs: 20 } });
    await h.channel.whenLive();
    await bridge.close();
    await until(() => h.channel.state === 'reconnecting');
    const acks = [1, 2, 3].map((n) => h.channel.request({ type: 'tool-result', callId: `c${n}`, output: n }));
    await expect(h.channel.request({ type: 'tool-result', callId: 'c4', output: 4 })).rejects.toMatchObject({
      code: 'queue-full',
    });
    const again = await ScriptedBridge.start({ token, journalId: bridge.journalId }, port);
    cleanups.push(() => again.close());
    await Promise.all(acks);
    expect(again.received.filter((f) => f.type === 'tool-result').map((f) => (f.type === 'tool-result' ? f.callId : ''))).toEqual([
      'c1',
      'c2',
      'c3',
    ]);
  });

  it('on reconnect: at-least-once frames are re-sent with the same id, at-most-once ones fail outcome-unknown', async () => {
    const bridge = await peer();
    bridge.reply = () => 'ignore'; // never ack: both requests are in flight when the socket drops
    const h = open(bridge.url);
    await h.channel.whenLive();
    const toolResult = h.channel.request({ type: 'tool-result', callId: 'c1', output: 'ok' });
    const start = h.channel.request({ type: 'start', turnId: 't9', launch: { argv: ['true'] } }).catch((e: unknown) => e);
    await until(() => bridge.received.length >= 3);
    bridge.reply = () => 'ack';
    bridge.dropOwner();
    expect(await start).toMatchObject({ code: 'outcome-unknown', frameType: 'start' });
    await toolResult;
    const copies = bridge.received.filter((f) => f.type === 'tool-result');
    expect(copies).toHaveLength(2);
    expect(copies[0]?.id).toBe(copies[1]?.id);
    expect(bridge.received.filter((f) => f.type === 'start')).toHaveLength(1);
  });

  it('bridge diagnostics are re-requested on every attach (forwarding is per connection)', async () => {
    const bridge = await peer();
    const h = open(bridge.url);
    await h.channel.whenLive();
    await h.channel.request({ type: 'diagnostics', enabled: true, level: 'debug' });
    bridge.dropOwner();
    await until(() => bridge.received.filter((f) => f.type === 'diagnostics').length === 2);
    const owner = bridge.owner;
    if (!owner) throw new Error('no owner');
    bridge.send(owner, { type: 'diagnostic', level: 'info', subsystem: 'journal', message: 'synced', ts: 1 });
    await until(() => h.diags.includes('synced'));
  });

  it('heartbeat: a peer that stops answering is declared dead after 2 silent intervals, then reconnected', async () => {
    const bridge = await peer();
    bridge.append(2);
    const h = open(bridge.url, { heartbeatMs: 50 });
    await h.channel.whenLive();
    bridge.silent = true;
    const t0 = Date.now();
    await until(() => h.statuses.some((s) => s.state === 'reconnecting'));
    const detectedMs = Date.now() - t0;
    expect(detectedMs).toBeGreaterThanOrEqual(90);
    expect(h.diags.some((m) => m.includes('missed 2 heartbeats'))).toBe(true);
    bridge.silent = false;
    await until(() => h.channel.state === 'live');
    bridge.append(1);
    await until(() => h.channel.cursor === 3);
    expect(h.seqs).toEqual([1, 2, 3]);
  });

  it('an async consumer is awaited in order; the socket is paused past maxInboundQueuedFrames', async () => {
    const bridge = await peer({ replayBatch: 1 });
    bridge.append(50);
    const seen: number[] = [];
    let maxInFlight = 0;
    let inFlight = 0;
    const h = open(bridge.url, {
      maxInboundQueuedFrames: 4,
      onRecords: async (records: JournalRecord[]) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        for (const r of records) seen.push(r.seq);
        inFlight--;
      },
    });
    await h.channel.whenLive();
    expect(seen).toEqual(range(1, 50));
    expect(maxInFlight).toBe(1);
  });

  it('a slow consumer pauses the socket at maxInboundQueuedBytes and resumes it at half, in order and exactly once', async () => {
    const bridge = await peer({ replayBatch: 1 });
    bridge.append(200);
    const calls: string[] = [];
    class CountingSocket extends WebSocket {
      override pause(): void {
        calls.push('pause');
        super.pause();
      }
      override resume(): void {
        calls.push('resume');
        super.resume();
      }
    }
    const seen: number[] = [];
    const h = open(bridge.url, {
      WebSocket: CountingSocket as never,
      maxInboundQueuedFrames: 1_000, // only the byte limit can pause
      maxInboundQueuedBytes: 600, // a few one-record frames
      onRecords: async (records: JournalRecord[]) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        for (const r of records) seen.push(r.seq);
      },
    });
    await h.channel.whenLive();
    await until(() => seen.length === 200);
    expect(seen, 'every record once, in order, across pauses').toEqual(range(1, 200));
    expect(calls.filter((c) => c === 'pause').length, 'the socket was paused while the consumer was busy').toBeGreaterThan(0);
    expect(calls.filter((c) => c === 'resume').length, 'each pause was followed by a resume').toBe(calls.filter((c) => c === 'pause').length);
  });

  it('rejects a non-positive maxInboundQueuedBytes at construction, naming the option', () => {
    expect(() => open('ws://127.0.0.1:1/', { maxInboundQueuedBytes: 0 })).toThrow(/maxInboundQueuedBytes/);
  });

  it('a throwing consumer ends the channel (consumer-failed) rather than skipping records', async () => {
    const bridge = await peer();
    bridge.append(3);
    const h = open(bridge.url, {
      onRecords: () => {
        throw new Error('translator bug');
      },
    });
    expect((await h.channel.closed)?.code).toBe('consumer-failed');
  });

  it('close() rejects pending requests with closed and resolves `closed` with null', async () => {
    const bridge = await peer();
    bridge.reply = () => 'ignore';
    const h = open(bridge.url);
    await h.channel.whenLive();
    const pending = h.channel.request({ type: 'stop' }).catch((e: unknown) => e);
    await h.channel.close();
    expect(await pending).toMatchObject({ code: 'closed' });
    expect(await h.channel.closed).toBeNull();
    expect(h.statuses.at(-1)).toEqual({ state: 'closed', error: null });
    await expect(h.channel.request({ type: 'stop' })).rejects.toMatchObject({ code: 'closed' });
  });

  it('rejects bad limits with a RangeError at construction', () => {
    const base = { url: 'ws://127.0.0.1:1', token, cursor: 0, onRecords: () => undefined };
    expect(() => createBridgeChannel({ ...base, cursor: -1 })).toThrow(RangeError);
    expect(() => createBridgeChannel({ ...base, heartbeatMs: 0 })).toThrow(RangeError);
    expect(() => createBridgeChannel({ ...base, maxQueuedFrames: 0 })).toThrow(RangeError);
    expect(() => createBridgeChannel({ ...base, backoff: { initialMs: 100, maxMs: 10 } })).toThrow(RangeError);
    expect(() => createBridgeChannel({ ...base, reconnectDeadlineMs: 1.5 })).toThrow(RangeError);
  });
});

describe('channel recording (scripted peer)', () => {
  it('writes a header, both directions and connection events; never the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hb-rec-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'session.ndjson');
    const bridge = await peer();
    bridge.append(5);
    const h = open(`${bridge.url}/?token=${token}`, { recordTo: path });
    await h.channel.whenLive();
    await h.channel.request({ type: 'abort', turnId: 't1' });
    bridge.dropOwner();
    await until(() => h.channel.state === 'live' && bridge.connections === 2);
    await h.channel.close();
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(token);
    const lines = parseRecording(text);
    expect(lines[0]).toMatchObject({ type: 'recording-header', format: 'harness-bridge-recording', version: 1, cursor: 0 });
    const frames = lines.filter((l): l is Extract<typeof l, { dir: 'in' | 'out'; frame: unknown }> => 'frame' in l);
    const types = (dir: 'in' | 'out') => frames.filter((f) => f.dir === dir).map((f) => (f.frame as { type: string }).type);
    expect(types('in')).toEqual(expect.arrayContaining(['hello', 'replay-begin', 'records', 'replay-end', 'ack']));
    expect(types('out')).toEqual(expect.arrayContaining(['attach', 'abort']));
    const events = lines.flatMap((l) => ('event' in l ? [l.event] : []));
    expect(events).toEqual(expect.arrayContaining(['connect', 'open', 'attached', 'live', 'disconnect', 'reconnect', 'close']));
    const times = lines.flatMap((l) => ('t' in l ? [l.t] : []));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});

describe('reconnect deadline (fake timers)', () => {
  /** A socket whose every upgrade is answered HTTP 502, like a port proxy with no upstream. */
  class Always502 extends EventEmitter {
    static created = 0;
    readyState = 0;
    isPaused = false;
    constructor() {
      super();
      Always502.created++;
      setTimeout(() => this.emit('unexpected-response', { destroy() {} }, { statusCode: 502, resume() {} }), 1);
    }
    send(): void {}
    pause(): void {}
    resume(): void {}
    close(): void {
      this.terminate();
    }
    terminate(): void {
      if (this.readyState === 3) return;
      this.readyState = 3;
      setTimeout(() => this.emit('close', 1006, Buffer.alloc(0)), 0);
    }
  }

  it('the default budget outlasts a 30 s 502 spell and gives up at 5 min naming the cursor', async () => {
    vi.useFakeTimers();
    Always502.created = 0;
    expect(CHANNEL_LIMITS.reconnectDeadlineMs).toBeGreaterThan(30_000);
    let ended: BridgeChannelError | null | undefined;
    const channel = createBridgeChannel({
      url: 'ws://127.0.0.1:1',
      token,
      cursor: 1234,
      WebSocket: Always502 as never,
      onRecords: () => undefined,
    });
    void channel.closed.then((e) => (ended = e));
    await vi.advanceTimersByTimeAsync(31_000);
    expect(ended).toBeUndefined();
    // Still trying: waiting out a backoff, or in an attempt (the jittered backoff may have just started one at 31 s).
    expect(['reconnecting', 'connecting']).toContain(channel.state);
    await vi.advanceTimersByTimeAsync(CHANNEL_LIMITS.reconnectDeadlineMs - 31_000 - 1_000);
    expect(ended).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ended?.code).toBe('reconnect-deadline');
    expect(ended?.message).toMatch(/^gave up reconnecting after 300\.\d s; last cursor 1234/);
    expect(ended?.message).toContain('HTTP 502');
    // Capped backoff: ~5 min at ≤ 5 s per attempt (plus the fast first few).
    expect(Always502.created).toBeGreaterThan(60);
    expect(Always502.created).toBeLessThan(200);
  });

  it('ReconnectBudget: exponential, capped, jittered, clipped to the deadline, reset by success', () => {
    let now = 0;
    const budget = new ReconnectBudget({ initialMs: 100, maxMs: 1_000, deadlineMs: 3_000, now: () => now, random: () => 1 });
    const delays: number[] = [];
    for (;;) {
      const step = budget.failure();
      if (step.giveUp) {
        expect(step.elapsedMs).toBe(3_000);
        break;
      }
      delays.push(step.delayMs);
      now += step.delayMs;
    }
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 500]);
    budget.success();
    expect(budget.failing).toBe(false);
    const low = new ReconnectBudget({ initialMs: 100, maxMs: 1_000, deadlineMs: 10_000, now: () => now, random: () => 0 });
    expect(low.failure()).toMatchObject({ giveUp: false, delayMs: 50 }); // equal jitter: never below half
  });

  it('RecordSequencer: contiguous runs only', () => {
    const rec = (seq: number): JournalRecord => ({ seq, turnId: 't', ts: 0, kind: 'stdout', data: { text: '' } });
    const s = new RecordSequencer(2);
    expect(s.accept([rec(1), rec(2), rec(3), rec(4)])).toMatchObject({ duplicates: 2, deliver: [rec(3), rec(4)] });
    expect(s.accept([rec(5), rec(7)])).toMatchObject({ deliver: [rec(5)], gap: { expected: 6, got: 7 } });
    expect(s.cursor).toBe(5);
    expect(s.accept([rec(6), rec(5), rec(7), rec(9)])).toMatchObject({ deliver: [rec(6), rec(7)], duplicates: 1, gap: { expected: 8, got: 9 } });
  });
});

describe('channel through the port proxy (scripted peer)', () => {
  async function proxied(): Promise<{ bridge: ScriptedBridge; proxy: TestProxy }> {
    const bridge = await peer();
    const proxy = await startProxy({ targetPort: bridge.port });
    cleanups.push(() => proxy.close());
    return { bridge, proxy };
  }

  it('survives a 502 spell with a long budget, fails naming the cursor with a short one', async () => {
    const { bridge, proxy } = await proxied();
    bridge.append(7);
    const long = open(proxy.url, { reconnectDeadlineMs: 10_000, backoff: { initialMs: 20, maxMs: 200 } });
    await long.channel.whenLive();
    proxy.setMode('http-502');
    proxy.dropAll();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(proxy.stats.answeredHttpError).toBeGreaterThan(2);
    proxy.setMode('pass');
    await until(() => long.channel.state === 'live');
    bridge.append(3);
    await until(() => long.channel.cursor === 10);
    expect(long.seqs).toEqual(range(1, 10));

    await long.channel.close();
    const short = open(proxy.url, { cursor: 10, reconnectDeadlineMs: 400, backoff: { initialMs: 20, maxMs: 100 } });
    await short.channel.whenLive();
    proxy.setMode('http-502');
    proxy.dropAll();
    const error = await short.channel.closed;
    expect(error?.code).toBe('reconnect-deadline');
    expect(error?.message).toMatch(/^gave up reconnecting after 0\.\d s; last cursor 10 \(last failure: HTTP 502 on upgrade\)/);
  });
});

describe('figures (scripted peer)', () => {
  it('channel cost per frame: one-record frames, decode + validate + sequence + deliver', async () => {
    const bridge = await peer({ replayBatch: 1 });
    const frames = 20_000;
    bridge.append(frames);
    let delivered = 0;
    const t0 = performance.now();
    const h = open(bridge.url, {
      onRecords: (records) => {
        delivered += records.length;
      },
    });
    await h.channel.whenLive();
    const ms = performance.now() - t0;
    console.log(
      `figures: channel delivered ${delivered} one-record frames in ${ms.toFixed(0)} ms ` +
        `(${Math.round(delivered / (ms / 1000))} frames/s incl. the peer's sends; node ${process.version})`,
    );
    expect(delivered).toBe(frames);
  });
});
