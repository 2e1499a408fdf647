// Keeper processes started ahead (bridge/survive/spare-keeper.ts, keeper-start.ts), through the built
// bridge with real processes: the first one as the bridge starts serving, a kept spawn takes the keeper that
// waited, the next one starts behind it, and a waiting keeper goes with its bridge, whether the bridge stops or is SIGKILLed.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, waitingKeepers } from '../../host/sandbox/local/pids.ts';
import type { RecordOf } from '../../protocol/v1/index.ts';
import { parseKeeperWork } from '../../bridge/survive/keeper-start.ts';
import { bridgeBundle, connectClient, eventually, fixtureLaunch, startBridge, tempDir, type RunningBridge, type TestClient } from './helpers.ts';

const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
});

/** A bridge that ran one kept turn to its end, and the keeper waiting behind it. */
async function afterOneKeptTurn() {
  const bridge = await startBridge({ args: ['--isolation', process.getuid?.() === 0 ? 'uid' : 'none'] });
  bridges.push(bridge);
  const { client, hello } = await connectClient(bridge);
  clients.push(client);
  await client.attach(hello.lastSeq);
  /** A kept turn to its end; `whileRunning` sees its keeper dir (removed once the exit is journaled). */
  const turn = async (turnId: string, whileRunning: (dir: string) => void = () => undefined) => {
    await client.request({ type: 'start', id: `s-${turnId}`, turnId, launch: fixtureLaunch(['--json', '--lines', '3', '--interval-ms', '500'], { survive: true }) });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn' && r.turnId === turnId)) as RecordOf<'spawn'>;
    whileRunning(join(bridge.stateDir, 'keepers', spawn.data.keeper!));
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === turnId);
  };
  await turn('t1');
  const [spare, ...more] = await eventually(async () => {
    const waiting = await waitingKeepers(bridge.stateDir);
    return waiting.length > 0 && waiting;
  }, 15_000, 'a keeper waiting');
  expect(more).toEqual([]);
  return { bridge, client, turn, spare: spare! };
}

describe('keepers started ahead (launch survive)', () => {
  it('the next kept CLI runs under the keeper that waited, and another starts behind it', async () => {
    const { bridge, turn, spare } = await afterOneKeptTurn();
    let keeper = 0;
    await turn('t2', (dir) => (keeper = Number(readFileSync(join(dir, 'keeper.pid'), 'utf8'))));
    expect(keeper).toBe(spare);
    const next = await eventually(async () => (await waitingKeepers(bridge.stateDir)).find((pid) => pid !== spare), 15_000, 'the next keeper waiting');
    expect(next).not.toBe(spare);
    expect(await waitingKeepers(bridge.stateDir)).toEqual([next]);
  });

  it('a bridge starts a keeper as it starts serving, and its first kept CLI runs under it', async () => {
    const bridge = await startBridge({ args: ['--isolation', process.getuid?.() === 0 ? 'uid' : 'none'] });
    bridges.push(bridge);
    const { client, hello } = await connectClient(bridge);
    clients.push(client);
    const [ahead, ...more] = await eventually(async () => {
      const waiting = await waitingKeepers(bridge.stateDir);
      return waiting.length > 0 && waiting;
    }, 15_000, 'a keeper waiting before any turn');
    expect(more).toEqual([]);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's-t1', turnId: 't1', launch: fixtureLaunch(['--json', '--lines', '2', '--interval-ms', '300'], { survive: true }) });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn' && r.turnId === 't1')) as RecordOf<'spawn'>; // its dir is there until the exit is journaled
    expect(Number(readFileSync(join(bridge.stateDir, 'keepers', spawn.data.keeper!, 'keeper.pid'), 'utf8'))).toBe(ahead);
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1');
  });

  it('a waiting keeper ends when its bridge stops', async () => {
    const { client, spare } = await afterOneKeptTurn();
    expect(await client.request({ type: 'stop', id: 'bye' })).toMatchObject({ type: 'ack' });
    await eventually(() => !isAlive(spare), 15_000, 'the waiting keeper gone');
  });

  it('a long-lived kept CLI (lifetime session) takes its next turn itself, with no keeper waiting behind it', async () => {
    const bridge = await startBridge({ args: ['--isolation', process.getuid?.() === 0 ? 'uid' : 'none'] });
    bridges.push(bridge);
    const { client, hello } = await connectClient(bridge);
    clients.push(client);
    await client.attach(hello.lastSeq);
    const launch = fixtureLaunch(['--echo'], { stdin: 'pipe', lifetime: 'session', survive: true, turnEnd: [{ json: { path: ['type'], equals: 'result' } }] });
    const prompt = (text: string, intervalMs: number) => `${JSON.stringify({ type: 'prompt', text, lines: 3, intervalMs })}\n`;
    await client.request({ type: 'start', id: 's1', turnId: 'e1', launch, input: prompt('one', 0) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'e1');
    // The second turn's lines come 200 ms apart: the first turn's output went quiet (100 ms) long before it ends,
    // which is when a spare used to start behind the CLI.
    await client.request({ type: 'start', id: 's2', turnId: 'e2', launch, input: prompt('two', 200) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'e2');
    expect(client.records().filter((r) => r.kind === 'spawn'), 'one CLI for both turns').toHaveLength(1);
    expect(await waitingKeepers(bridge.stateDir)).toEqual([]);
    // A kept CLI outlives its bridge by design: the session's stop ends it (the teardown only kills the bridge).
    expect(await client.request({ type: 'stop', id: 'bye' })).toMatchObject({ type: 'ack' });
  });

  it('a waiting keeper ends when its bridge is SIGKILLed', async () => {
    const { bridge, spare } = await afterOneKeptTurn();
    await bridge.kill('SIGKILL');
    await eventually(() => !isAlive(spare), 15_000, 'the waiting keeper gone');
  });
});

describe('a keeper process given its work on stdin', () => {
  const keeper = (input: string | null) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [bridgeBundle, '--keeper'], { stdio: ['pipe', 'pipe', 'ignore'], env: {} });
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => (out += chunk));
      child.on('close', (code) => resolve({ code, out }));
      if (input === null) child.stdin.end();
      else child.stdin.end(input);
    });

  it('exits quietly at EOF before any work (its bridge stopped or died)', async () => {
    expect(await keeper(null)).toEqual({ code: 0, out: '' });
  });

  it('answers a line that is not its work with an error, and runs nothing', async () => {
    const said = await keeper('{"dir":"relative/dir","env":{}}\n');
    expect(said.code).toBe(0);
    expect(JSON.parse(said.out)).toEqual({ error: 'the keeper line has no absolute dir' });
  });

  it("says `again` and runs nothing when its MCP relay's port was taken since the bridge picked it", async () => {
    // Another session's keeper picked the same port a moment earlier: the bridge spawns again with another (supervisor.ts).
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const dir = join(tempDir(), 'k');
      mkdirSync(dir);
      const ran = join(dir, 'ran');
      const spec = {
        argv: [process.execPath, '-e', `require('node:fs').writeFileSync(${JSON.stringify(ran)}, '')`],
        cwd: dir,
        stdin: 'null',
        exitDrainMs: 100,
        mcp: { listenPort: port, upstreamPort: 1, idPrefix: 'k', maxBodyBytes: 1024, maxPending: 4 },
      };
      writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec));
      const said = await keeper(`${JSON.stringify({ dir, env: { PATH: process.env.PATH ?? '' } })}\n`);
      expect(said.code).toBe(0);
      expect(JSON.parse(said.out)).toEqual({ error: expect.stringContaining(`keeper MCP relay: cannot listen on 127.0.0.1:${port}`), again: 'port' });
      expect(existsSync(ran), 'the CLI never ran').toBe(false);
    } finally {
      taken.close();
    }
  });

  it('parses its work: an absolute dir and an env of strings', () => {
    expect(parseKeeperWork('{"dir":"/k/1","env":{"A":"b"}}')).toEqual({ dir: '/k/1', env: { A: 'b' } });
    expect(parseKeeperWork('nope')).toEqual({ error: 'the keeper line is not JSON' });
    expect(parseKeeperWork('null')).toEqual({ error: 'the keeper line has no absolute dir' });
    expect(parseKeeperWork('{"dir":"/k/1","env":{"A":1}}')).toEqual({ error: 'the keeper line has no env of strings' });
    expect(parseKeeperWork('{"dir":"/k/1","env":["A"]}')).toEqual({ error: 'the keeper line has no env of strings' });
  });
});
