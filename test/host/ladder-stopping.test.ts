// A resume must never attach to a bridge that is stopping (SIGTERM, a stop
// frame, destroy): it is about to exit, and the channel would be left retrying
// a dead port. The ladder waits for it to exit and then starts a new bridge on
// the same state dir (rung replay: same journal, seq continues). A stopping
// bridge answers a fresh connection with 503 on upgrade; one whose upgrade won
// the race answers a hello with state 'stopping' — the second case is played
// by a fake bridge, since a real one cannot be made to lose that race on cue.
// Past HOST_SESSION_LIMITS.stoppingBridgeWaitMs the ladder replaces it anyway,
// which the state-dir lock allows only once nothing holds the dir; a real
// bridge still stopping when lockedBridgeWaitMs runs out fails the resume
// with bridge-start-failed and is left alone.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isAlive as alive } from '../../host/sandbox/local/pids.ts';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { HelloFrame, JournalRecord } from '../../protocol/v1/index.ts';
import { HOST_SESSION_LIMITS } from '../../host/limits.ts';
import { probeBridge } from '../../host/reach/probe.ts';
import { loadSource } from '../../host/replay/index.ts';
import { connectClient } from '../bridge/helpers.ts';
import { createKit, runTurn, startTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('stopping');
});
afterAll(async () => {
  await kit.cleanup();
});

// The waits are constants the ladder reads at call time; each test that shortens one restores it.
const limits = HOST_SESSION_LIMITS as { -readonly [K in keyof typeof HOST_SESSION_LIMITS]: number };
const savedLimits = { ...limits };
afterEach(() => {
  Object.assign(limits, savedLimits);
});

type BridgeFile = { pid: number; port: number };
const bridgeFile = async (stateDir: string): Promise<BridgeFile> => JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as BridgeFile;
const tokenOf = async (stateDir: string): Promise<string> => (await readFile(join(stateDir, 'token'), 'utf8')).trim();
const stateDirOf = (state: HarnessV1ResumeState): string => (state.data as { stateDir: string }).stateDir;
const rungsOf = (session: unknown): string[] => (session as { rungs: string[] }).rungs;

function journalRecords(stateDir: string): JournalRecord[] {
  const source = loadSource(join(stateDir, 'journal.ndjson'));
  if (source.kind !== 'journal') throw new Error('expected a journal');
  return source.records.map((entry) => entry.record);
}

async function until(predicate: () => boolean, maxMs: number, what: string): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${maxMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Probes until the bridge answers 503 on upgrade: it has taken the SIGTERM or stop and is stopping. */
async function untilStopping(port: number, token: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = await probeBridge(`ws://127.0.0.1:${port}/`, token, 1_000);
    if (!probe.ok && probe.reason === 'http-error' && probe.detail === 'HTTP 503 on upgrade') return;
    if (Date.now() > deadline) throw new Error(`the bridge is not stopping: ${JSON.stringify(probe)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A session whose long turn is running when it is suspended, with the CLI
 * SIGSTOPped: a stopping bridge then waits out its whole stop grace (the
 * SIGTERM stays pending) before it SIGKILLs the CLI and exits.
 */
async function suspendedWithFrozenCli(sessionId: string): Promise<{ state: HarnessV1ResumeState; stateDir: string; bridge: BridgeFile; cliPid: number }> {
  // Isolation 'uid' keeps the CLI the spawned process itself, so the SIGSTOP below freezes the CLI (in a
  // namespace jail the spawned pid is the sandbox runtime, which passes a SIGTERM on to the CLI).
  const { session } = await kit.start(sessionId, { settings: { isolation: { mode: 'uid' } } });
  const { parts } = await startTurn(session, 'a long turn LINES:400 INTERVAL:50');
  await until(() => parts.filter((part) => part.type === 'text-delta').length >= 3, 20_000, 'three deltas');
  const state = await session.doSuspendTurn();
  const stateDir = stateDirOf(state);
  const spawned = journalRecords(stateDir).find((record) => record.kind === 'spawn');
  if (spawned?.kind !== 'spawn') throw new Error('the journal has no spawn record');
  process.kill(spawned.data.pid, 'SIGSTOP');
  return { state, stateDir, bridge: await bridgeFile(stateDir), cliPid: spawned.data.pid };
}

describe('the ladder and a stopping bridge', () => {
  it('a SIGTERMed bridge (503 on upgrade during its stop grace) is not attached to: the resume waits for it to exit, then replays on the same journal', async () => {
    // Fail in seconds, not after the 5-minute default, if the ladder waits for the wrong thing.
    limits.lockedBridgeWaitMs = 20_000;
    const { state, stateDir, bridge } = await suspendedWithFrozenCli('sigterm');
    const before = journalRecords(stateDir);
    const signalled = Date.now();
    process.kill(bridge.pid, 'SIGTERM');
    await untilStopping(bridge.port, await tokenOf(stateDir));

    const resumed = await kit.resume('sigterm', state);
    expect(rungsOf(resumed.session), 'a new bridge on the same journal, not the stopping one').toEqual(['replay']);
    expect(Date.now() - signalled, 'the resume waited out the stop grace (3 s from the SIGTERM)').toBeGreaterThanOrEqual(2_900);
    expect(alive(bridge.pid), 'the stopping bridge has exited').toBe(false);
    const now = await bridgeFile(stateDir);
    expect(now.pid, 'bridge.json names the replacement').not.toBe(bridge.pid);

    const records = journalRecords(stateDir);
    expect(records.map((record) => record.seq), 'one journal, seq contiguous across both bridges').toEqual(records.map((_, i) => i + 1));
    expect(records.slice(0, before.length), 'the old records are kept as they were').toEqual(before);
    const starts = records.filter((record) => record.kind === 'bridge-start');
    expect(starts, 'two bridges wrote this journal').toHaveLength(2);
    const killed = records.findIndex((record) => record.kind === 'signal' && record.data.reason === 'stop-grace-expired');
    expect(killed, 'the old bridge finished its stop (SIGKILL after the grace)').toBeGreaterThan(0);
    expect(records.indexOf(starts[1]!), 'the new bridge started after the old one was done').toBeGreaterThan(killed);
    expect(starts[1]!.seq, 'the new bridge continued the seq numbering').toBeGreaterThan(before.at(-1)!.seq);

    const continued: HarnessV1StreamPart[] = [];
    const control = await resumed.session.doContinueTurn({ emit: (part) => continued.push(part) });
    await control.done;
    // The stop ended the turn after its host had suspended it: a stopped turn is over (docs/guarantees.md#stop),
    // so the continuation finishes it as stopped and re-drives nothing.
    expect(continued.filter((part) => part.type === 'finish').map((part) => part.type === 'finish' && part.finishReason), 'finished once, as stopped').toEqual([
      { unified: 'other', raw: 'stopped' },
    ]);
    expect(continued.find((part) => part.type === 'stream-start' && part.warnings?.length), 'nothing recomputed').toBeUndefined();
    expect(rungsOf(resumed.session)).toEqual(['replay']);
    expect(textOf(await runTurn(resumed.session, 'after the stop LINES:1')), 'the new bridge runs turns').toBe('after the stop LINES:1 #0\n');
    await resumed.session.doDestroy();
  });

  it('a real bridge still stopping when lockedBridgeWaitMs runs out fails the resume with bridge-start-failed, and is not replaced', async () => {
    limits.lockedBridgeWaitMs = 2_000;
    const { state, stateDir, bridge, cliPid } = await suspendedWithFrozenCli('slow-stop');
    // A stop frame with a long grace: the bridge stays 'stopping' for 30 s unless the CLI exits.
    const { client, hello } = await connectClient({ port: bridge.port, token: await tokenOf(stateDir) });
    await client.attach(hello.lastSeq);
    client.send({ type: 'stop', id: 'slow-stop', graceMs: 30_000 });
    try {
      await untilStopping(bridge.port, await tokenOf(stateDir));
      const failure = await kit.resume('slow-stop', state).then(
        () => new Error('the resume succeeded'),
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: 'bridge-start-failed' });
      expect((failure as Error).message).toContain(`a live bridge holds ${stateDir} and neither answered nor exited within 2000 ms (last: HTTP 503 on upgrade)`);
      expect(alive(bridge.pid), 'the stopping bridge was left alone').toBe(true);
      expect((await bridgeFile(stateDir)).pid, 'and no replacement took over its state dir').toBe(bridge.pid);
      expect(journalRecords(stateDir).filter((record) => record.kind === 'bridge-start'), 'no second bridge wrote the journal').toHaveLength(1);
    } finally {
      process.kill(cliPid, 'SIGKILL'); // the stop completes at once
      await until(() => !alive(bridge.pid), 10_000, 'the stopped bridge to exit');
      await client.close();
    }
  });
});

type FakeBridge = { url: string; connections: number; received: string[]; close(): Promise<void> };

/** A WebSocket server that greets every connection with `hello` (state 'stopping') and never attaches anyone. */
async function fakeStoppingBridge(hello: HelloFrame): Promise<FakeBridge> {
  const http: Server = createServer();
  const wss = new WebSocketServer({ server: http });
  const fake: FakeBridge = {
    url: '',
    connections: 0,
    received: [],
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
  wss.on('connection', (ws) => {
    fake.connections++;
    ws.on('message', (data: Buffer) => fake.received.push(data.toString('utf8')));
    ws.send(JSON.stringify({ ...hello, state: 'stopping' }));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  fake.url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  return fake;
}

describe('the ladder and a hello that says stopping', () => {
  let fake: FakeBridge | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  /**
   * A stopped session (its state dir stays; bridge.json still names the old
   * port) and a fake bridge answering there, through the sandbox's port URL,
   * with the real bridge's hello but state 'stopping'.
   */
  async function setUp(sessionId: string): Promise<{ state: HarnessV1ResumeState; stateDir: string; wrap: (s: HarnessV1NetworkSandboxSession) => HarnessV1NetworkSandboxSession }> {
    const { session, sandbox } = await kit.start(sessionId);
    await runTurn(session, 'before LINES:2');
    const stateDir = join(sandbox.defaultWorkingDirectory, '.harness-bridge', 'sessions', `fixture-${sessionId}`);
    const old = await bridgeFile(stateDir);
    const probe = await probeBridge(`ws://127.0.0.1:${old.port}/`, await tokenOf(stateDir), 1_000);
    if (!probe.ok) throw new Error(`the live bridge did not answer: ${probe.detail}`);
    const state = await session.doStop();
    expect(stateDirOf(state)).toBe(stateDir);
    await until(() => !alive(old.pid), 10_000, 'the real bridge to exit');
    fake = await fakeStoppingBridge(probe.hello);
    const fakeUrl = fake.url;
    // A canary.3-shaped sandbox: getPortUrl only (the harness uses getPortEndpoint when there is one).
    const wrap = (network: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => ({
      ...network,
      getPortEndpoint: undefined,
      getPortUrl: async (request) => (request.port === old.port ? fakeUrl : network.getPortUrl!(request)),
    });
    return { state, stateDir, wrap };
  }

  it('is probed until it is gone, never attached to; then a new bridge replays the same journal', async () => {
    const { state, stateDir, wrap } = await setUp('hello-stopping');
    const before = journalRecords(stateDir);
    const current = fake!;
    setTimeout(() => void current.close(), 1_500); // the fake "exits" after 1.5 s
    const started = Date.now();
    const resumed = await kit.resume('hello-stopping', state, { wrap });
    expect(Date.now() - started, 'the resume waited for the stopping bridge to go').toBeGreaterThanOrEqual(1_400);
    expect(current.connections, 'it was probed more than once').toBeGreaterThan(1);
    expect(current.received, 'no frame (no attach) ever went to the stopping bridge').toEqual([]);
    expect(rungsOf(resumed.session)).toEqual(['replay']);
    expect(textOf(await runTurn(resumed.session, 'after LINES:1'))).toBe('after LINES:1 #0\n');
    const records = journalRecords(stateDir);
    expect(records.slice(0, before.length)).toEqual(before);
    expect(records.map((record) => record.seq), 'seq continues in the same journal').toEqual(records.map((_, i) => i + 1));
    await resumed.session.doDestroy();
  });

  it('past stoppingBridgeWaitMs it is replaced, not attached to (the state-dir lock lets a new bridge start because nothing holds it)', async () => {
    limits.stoppingBridgeWaitMs = 1_000;
    const { state, stateDir, wrap } = await setUp('hello-stuck');
    const before = journalRecords(stateDir);
    const current = fake!;
    const started = Date.now();
    const resumed = await kit.resume('hello-stuck', state, { wrap });
    expect(Date.now() - started, 'it waited stoppingBridgeWaitMs first').toBeGreaterThanOrEqual(1_000);
    expect(current.received, 'no frame (no attach) ever went to the stopping bridge').toEqual([]);
    expect(rungsOf(resumed.session)).toEqual(['replay']);
    const probe = await probeBridge(current.url, 'any', 1_000);
    expect(probe.ok && probe.hello.state, 'the fake still says stopping: it was replaced, not outlived').toBe('stopping');
    expect(textOf(await runTurn(resumed.session, 'after LINES:1'))).toBe('after LINES:1 #0\n');
    const records = journalRecords(stateDir);
    expect(records.slice(0, before.length)).toEqual(before);
    expect(records.map((record) => record.seq), 'seq continues in the same journal').toEqual(records.map((_, i) => i + 1));
    await resumed.session.doDestroy();
  });
});
