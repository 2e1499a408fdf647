// Launch `survive` through the built bridge, with real processes and sockets:
// the CLI runs under a keeper and outlives SIGKILLed bridges; a new bridge on
// the same state dir re-adopts it and journals every byte exactly once.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive as alive } from '../../host/sandbox/local/pids.ts';
import { launchSpecSchema, type JournalRecord, type RecordOf } from '../../protocol/v1/index.ts';
import { LineSplitter } from '../../bridge/supervisor/line-splitter.ts';
import { recordSummary } from '../../host/replay/timeline.ts';
import { connectClient, eventually, fixtureLaunch, repoRoot, seqProblem, sleep, startBridge, tempDir, type RunningBridge, type TestClient } from './helpers.ts';

const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];
const stateDirs: string[] = [];

async function bridgeOn(stateDir?: string, args?: string[]): Promise<RunningBridge> {
  const bridge = await startBridge({ ...(stateDir === undefined ? {} : { stateDir }), ...(args ? { args } : {}) });
  bridges.push(bridge);
  stateDirs.push(bridge.stateDir);
  return bridge;
}

async function connect(bridge: RunningBridge) {
  const connected = await connectClient(bridge);
  clients.push(connected.client);
  return connected;
}

function keeperDirs(stateDir: string): string[] {
  const root = join(stateDir, 'keepers');
  return existsSync(root) ? readdirSync(root).map((name) => join(root, name)) : [];
}

function keeperPid(dir: string): number {
  return Number(readFileSync(join(dir, 'keeper.pid'), 'utf8'));
}

/** Every CLI group and keeper our tests started is gone after each test (SIGKILL whatever is left). */
afterEach(async () => {
  for (const client of clients) expect(client.invalid).toEqual([]);
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
  for (const stateDir of stateDirs.splice(0)) {
    for (const dir of keeperDirs(stateDir)) {
      if (existsSync(join(dir, 'keeper.pid'))) {
        try {
          process.kill(keeperPid(dir), 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }
  for (const pid of cliGroups.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});
const cliGroups: number[] = [];

/** Joins stdout pieces into lines (a `cont` piece continues into the next). */
/** A surviving turn of the fixture CLI printing 1000 lines slowly, once its third line is journaled. */
async function startSlowSurvivor(turnId: string) {
  const first = await bridgeOn();
  const { client, hello } = await connect(first);
  await client.attach(hello.lastSeq);
  await client.request({ type: 'start', id: 's', turnId, launch: fixtureLaunch(['--json', '--lines', '1000', '--interval-ms', '20'], { survive: true }) });
  const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
  cliGroups.push(spawn.data.pid);
  await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.includes('"n":2'));
  return { first, spawn, dir: join(first.stateDir, 'keepers', spawn.data.keeper!) };
}

/** A CLI outside a network namespace reaches its keeper's MCP relay directly (a namespaced one only through the bridge's egress proxy). */
const noNetworkNamespace = ['--isolation', process.getuid?.() === 0 ? 'uid' : 'none'];

/** A surviving turn whose CLI is the MCP client stand-in: it lists the host tools, then calls echo_upper with `args`. */
async function startToolTurn(turnId: string, args: string, extra: string[] = [], bridgeArgs?: string[]) {
  const mcpClient = join(repoRoot, 'test/fixtures/mcp-client.mjs');
  const tool = { name: 'echo_upper', description: 'upper-cases text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
  const first = await bridgeOn(undefined, bridgeArgs);
  const { client, hello } = await connect(first);
  await client.attach(hello.lastSeq);
  await client.request({
    type: 'start',
    id: 's',
    turnId,
    launch: { argv: [process.execPath, mcpClient, '--call', 'echo_upper', '--args', args, ...extra], survive: true },
    tools: [tool],
  });
  const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
  cliGroups.push(spawn.data.pid);
  return { first, client, spawn };
}

function linesOf(records: readonly JournalRecord[], kind: 'stdout' | 'stderr', turnId: string): string[] {
  const lines: string[] = [];
  let carry = '';
  for (const record of records) {
    if (record.kind !== kind || record.turnId !== turnId) continue;
    carry += record.data.text;
    if (record.data.cont !== true) {
      lines.push(carry);
      carry = '';
    }
  }
  expect(carry).toBe('');
  return lines;
}

// A CLI that prints slowly, with a long line written in three parts (multi-byte chars, over the
// 64-byte line cap, so some of it is journaled as `cont` pieces while the rest is still unwritten)
// and a line of invalid UTF-8 (replacement chars must not shift byte offsets).
// Line 6 is written in three parts; the CLI writes the next part only once the test creates the file
// next to the script that allows it (go1, go2), so each kill lands while the line is half written.
const slowScript = `
import { existsSync } from 'node:fs';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const w = (s) => new Promise((r) => process.stdout.write(s, r));
const allowed = async (name) => { for (let i = 0; i < 6000 && !existsSync(new URL(name, import.meta.url)); i++) await sleep(10); };
for (let i = 0; i < 24; i++) {
  if (i === 6) {
    await w('long-' + 'é'.repeat(50));
    await allowed('go1');
    await w('y'.repeat(100));
    await allowed('go2');
    await w('z'.repeat(20) + '\\n');
  } else if (i === 3) await w(Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x0a]));
  else await w('line ' + i + '\\n');
  await sleep(i < 6 ? 60 : 40);
}
process.stderr.write('err-end\\n');
`;

function expectedSlowLines(): string[] {
  const lines: string[] = [];
  for (let i = 0; i < 24; i++) {
    if (i === 6) lines.push('long-' + 'é'.repeat(50) + 'y'.repeat(100) + 'z'.repeat(20));
    else if (i === 3) lines.push('bad\uFFFD\uFFFD');
    else lines.push(`line ${i}`);
  }
  return lines;
}

function captureEndsWith(stateDir: string, suffix: string): boolean {
  const [dir] = keeperDirs(stateDir);
  if (dir === undefined || !existsSync(join(dir, 'stdout'))) return false;
  return readFileSync(join(dir, 'stdout'), 'utf8').endsWith(suffix);
}

const echoLaunch = (extra: string[] = []) =>
  fixtureLaunch(['--echo', ...extra], {
    stdin: 'pipe',
    lifetime: 'session',
    survive: true,
    turnEnd: [{ json: { path: ['type'], equals: 'result' } }],
    interrupt: { input: '{"type":"interrupt"}\n' },
  });

describe('launch survive: the CLI outlives a SIGKILLed bridge and is re-adopted', () => {
  it('is optional (on a pty: survive-pty.test.ts)', () => {
    expect(launchSpecSchema.parse({ argv: ['x'], survive: true }).survive).toBe(true);
    expect(launchSpecSchema.parse({ argv: ['x'] }).survive).toBeUndefined();
  });

  it('line offsets: a splitter resumed at any piece offset continues exactly (bytes, not chars)', () => {
    const input = Buffer.concat([
      Buffer.from('short\nlong-' + 'é'.repeat(40) + 'x'.repeat(30) + '\r\n'),
      Buffer.from([0x62, 0xff, 0x0a]),
      Buffer.from('tail without newline'),
    ]);
    const run = (from: number, chunk: number) => {
      const pieces: { text: string; cont: boolean; off: number }[] = [];
      const splitter = new LineSplitter(16, (text, cont, off) => pieces.push({ text, cont, off }), from);
      for (let i = from; i < input.length; i += chunk) splitter.push(input.subarray(i, Math.min(i + chunk, input.length)));
      splitter.end();
      return pieces;
    };
    const whole = run(0, input.length);
    expect(whole.at(-1)!.off).toBe(input.length);
    for (const chunk of [1, 3, 7, input.length]) expect(run(0, chunk).map((p) => p.text).join('|')).toBe(whole.map((p) => p.text).join('|'));
    for (const [i, piece] of whole.entries()) {
      const resumed = run(piece.off, 5);
      expect([...whole.slice(0, i + 1), ...resumed].map((p) => p.text).join('')).toBe(whole.map((p) => p.text).join(''));
      expect(resumed.map((p) => p.off)).toEqual(whole.slice(i + 1).map((p) => p.off));
    }
  });

  it('two SIGKILLs mid-turn, each while a long line is half written: every line once, in order, no interrupted turn-end, the turn ends with the exit', { timeout: 60_000 }, async () => {
    const scriptDir = tempDir();
    const script = join(scriptDir, 'slow.mjs');
    writeFileSync(script, slowScript);
    const first = await bridgeOn();
    const { client, hello } = await connect(first);
    await client.attach(hello.lastSeq);
    await client.request({
      type: 'start',
      id: 's',
      turnId: 'slow',
      launch: { argv: [process.execPath, script], survive: true, io: { mode: 'pipes', maxLineBytes: 64 } },
    });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    cliGroups.push(spawn.data.pid);
    expect(spawn.data.keeper).toMatch(/^[0-9a-f]{12}$/);
    await eventually(() => captureEndsWith(first.stateDir, 'é'), 20_000, 'the first part of the long line');
    // The bridge has journaled the first `cont` piece; the rest of the part waits in its splitter.
    await client.waitForRecord((r) => r.kind === 'stdout' && r.data.cont === true && r.data.text.includes('é'));
    await first.kill('SIGKILL');
    expect(alive(spawn.data.pid)).toBe(true);

    const second = await bridgeOn(first.stateDir);
    const { client: watching } = await connect(second);
    await watching.attach(0);
    writeFileSync(join(scriptDir, 'go1'), '');
    await eventually(() => captureEndsWith(first.stateDir, 'y'), 20_000, 'the second part of the long line');
    await watching.waitForRecord((r) => r.kind === 'stdout' && r.data.cont === true && r.data.text.includes('y'));
    await second.kill('SIGKILL');
    writeFileSync(join(scriptDir, 'go2'), '');

    const third = await bridgeOn(first.stateDir);
    const { client: resumed, hello: again } = await connect(third);
    expect(again.turns.at(-1)).toMatchObject({ turnId: 'slow', status: 'running' });
    await resumed.attach(0);
    await resumed.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'slow', 30_000);
    const records = resumed.records();
    expect(seqProblem(records, 1, records.at(-1)!.seq)).toBeNull();
    expect(linesOf(records, 'stdout', 'slow')).toEqual(expectedSlowLines());
    expect(linesOf(records, 'stderr', 'slow')).toEqual(['err-end']);
    expect(records.filter((r) => r.kind === 'stdout').some((r) => r.kind === 'stdout' && r.data.cont === true)).toBe(true);
    const ends = records.filter((r): r is RecordOf<'turn-end'> => r.kind === 'turn-end');
    expect(ends.map((r) => r.data)).toEqual([{ reason: 'exit', code: 0 }]);
    const exits = records.filter((r): r is RecordOf<'exit'> => r.kind === 'exit');
    expect(exits.map((r) => r.data)).toEqual([{ pid: spawn.data.pid, code: 0, signal: null }]);
    const starts = records.filter((r): r is RecordOf<'bridge-start'> => r.kind === 'bridge-start');
    expect(starts.map((r) => r.data.adopted)).toEqual([
      undefined,
      { turnId: 'slow', pid: spawn.data.pid, keeper: spawn.data.keeper },
      { turnId: 'slow', pid: spawn.data.pid, keeper: spawn.data.keeper },
    ]);
    expect(recordSummary(starts[1]!)).toBe(`bridge-start ${recordSummary(starts[1]!).split(' ')[1]} v${starts[1]!.data.version} adopted pid ${spawn.data.pid}`);
    // The keeper is gone and its dir removed once the exit is journaled.
    await eventually(() => keeperDirs(first.stateDir).length === 0, 10_000, 'keeper dir removed');
  });

  it('a session CLI: the adopted turn ends at its match; input after adoption reaches it; abort after adoption works', { timeout: 60_000 }, async () => {
    const first = await bridgeOn();
    const { client, hello } = await connect(first);
    await client.attach(hello.lastSeq);
    // The CLI holds after its 10th delta until the steer below is in: the adopted turn is still running then, however
    // long the second bridge takes to start on a loaded machine.
    const holdFile = join(tempDir(), 'release');
    const launch = echoLaunch(['--hold-after', '10', '--hold-file', holdFile]);
    await client.request({ type: 'start', id: 's1', turnId: 't1', launch, input: '{"type":"prompt","text":"A","lines":30,"intervalMs":40}\n' });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    cliGroups.push(spawn.data.pid);
    await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.includes('"n":3'));
    await first.kill('SIGKILL');

    const second = await bridgeOn(first.stateDir);
    const { client: c2 } = await connect(second);
    await c2.attach(0);
    // input after adoption: a steer joins the running turn
    expect(await c2.request({ type: 'input', id: 'i1', turnId: 't1', text: '{"type":"steer","text":"S","uuid":"u1"}\n' })).toMatchObject({ type: 'ack' });
    await c2.waitForRecord((r) => r.kind === 'stdout' && r.turnId === 't1' && r.data.text.includes('"steered"'));
    writeFileSync(holdFile, '');
    const end1 = (await c2.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000)) as RecordOf<'turn-end'>;
    expect(end1.data.reason).toBe('matched');
    const out1 = linesOf(c2.records(), 'stdout', 't1').map((line) => JSON.parse(line) as { type: string; n?: number; text?: string; steered?: string[] });
    expect(out1.filter((l) => l.type === 'delta').map((l) => l.n)).toEqual([...Array(30).keys()]);
    expect(out1.filter((l) => l.type === 'steered').map((l) => l.text)).toEqual(['S']);
    expect(out1.at(-1)).toMatchObject({ type: 'result', steered: ['S'] });
    expect(c2.records().some((r) => r.kind === 'turn-end' && r.data.reason === 'interrupted')).toBe(false);

    // the next turn reuses the adopted process (no new spawn), then a SIGKILL, adoption, and abort
    await c2.request({ type: 'start', id: 's2', turnId: 't2', launch, input: '{"type":"prompt","text":"B","lines":200,"intervalMs":40}\n' });
    await c2.waitForRecord((r) => r.kind === 'stdout' && r.turnId === 't2' && r.data.text.includes('"n":2'));
    expect(c2.records().filter((r) => r.kind === 'spawn')).toHaveLength(1);
    await second.kill('SIGKILL');

    const third = await bridgeOn(first.stateDir);
    const { client: c3 } = await connect(third);
    await c3.attach(0);
    expect(await c3.request({ type: 'abort', id: 'a', turnId: 't2', graceMs: 5_000 })).toMatchObject({ type: 'ack' });
    const end2 = (await c3.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't2', 30_000)) as RecordOf<'turn-end'>;
    expect(end2.data.reason).toBe('aborted');
    const out2 = linesOf(c3.records(), 'stdout', 't2').map((line) => JSON.parse(line) as { type: string; interrupted?: boolean });
    expect(out2.at(-1)).toMatchObject({ type: 'result', interrupted: true });
    expect(alive(spawn.data.pid)).toBe(true); // the session CLI lives on between turns
    const records = c3.records();
    expect(seqProblem(records, 1, records.at(-1)!.seq)).toBeNull();
    // stop: the adopted CLI is stopped with the bridge and its keeper exits
    const keeper = keeperPid(keeperDirs(first.stateDir)[0]!);
    expect(await c3.request({ type: 'stop', id: 'stop' })).toMatchObject({ type: 'ack' });
    await eventually(() => !alive(spawn.data.pid) && !alive(keeper), 10_000, 'CLI and keeper gone after stop');
  });

  it('an abort under way when the bridge dies is carried over: the new bridge restarts the grace and ends the turn aborted', { timeout: 60_000 }, async () => {
    const first = await bridgeOn();
    const { client, hello } = await connect(first);
    await client.attach(hello.lastSeq);
    // --hang: the CLI ignores SIGINT, so only the grace's SIGKILL ends the aborted turn.
    const launch = { ...echoLaunch(['--hang']), interrupt: { signal: 'SIGINT' as const } };
    await client.request({ type: 'start', id: 's', turnId: 'stuck', launch, input: '{"type":"prompt","text":"H","lines":400,"intervalMs":40}\n' });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    cliGroups.push(spawn.data.pid);
    await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.includes('"n":2'));
    expect(await client.request({ type: 'abort', id: 'a', turnId: 'stuck', graceMs: 60_000 })).toMatchObject({ type: 'ack' });
    await first.kill('SIGKILL');

    const second = await bridgeOn(first.stateDir);
    const { client: c2 } = await connect(second);
    await c2.attach(0);
    const end = (await c2.waitForRecord((r) => r.kind === 'turn-end', 20_000)) as RecordOf<'turn-end'>;
    expect(end.data.reason).toBe('aborted');
    const records = c2.records();
    expect(records.filter((r) => r.kind === 'signal').map((r) => (r as RecordOf<'signal'>).data)).toEqual([
      { signal: 'SIGINT', reason: 'abort' },
      { signal: 'SIGKILL', reason: 'abort-grace-expired' },
    ]);
    expect(records.filter((r) => r.kind === 'exit').map((r) => (r as RecordOf<'exit'>).data.signal)).toEqual(['SIGKILL']);
  });

  it('the CLI exits while no bridge runs: the next bridge journals the rest of its output and its exit', { timeout: 60_000 }, async () => {
    const first = await bridgeOn();
    const { client, hello } = await connect(first);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 'short', launch: fixtureLaunch(['--json', '--lines', '40', '--interval-ms', '20', '--stderr', '--exit-code', '5'], { survive: true }) });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    cliGroups.push(spawn.data.pid);
    await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.includes('"n":2'));
    await first.kill('SIGKILL');
    const dir = join(first.stateDir, 'keepers', spawn.data.keeper!);
    await eventually(() => existsSync(join(dir, 'exit.json')), 20_000, 'the keeper wrote the exit');
    await eventually(() => !alive(keeperPid(dir)), 10_000, 'the keeper exited');

    const second = await bridgeOn(first.stateDir);
    const { client: c2 } = await connect(second);
    await c2.attach(0);
    const end = (await c2.waitForRecord((r) => r.kind === 'turn-end', 30_000)) as RecordOf<'turn-end'>;
    expect(end.data).toEqual({ reason: 'exit', code: 5 });
    const records = c2.records();
    const lines = linesOf(records, 'stdout', 'short').map((line) => JSON.parse(line) as { type: string; n?: number });
    expect(lines.filter((l) => l.type === 'line').map((l) => l.n)).toEqual([...Array(40).keys()]);
    expect(lines.at(-1)).toEqual({ type: 'done', n: 40 });
    expect(linesOf(records, 'stderr', 'short')).toHaveLength(3);
    expect(records.filter((r) => r.kind === 'exit').map((r) => r.data)).toEqual([{ pid: spawn.data.pid, code: 5, signal: null }]);
    await eventually(() => !existsSync(dir), 10_000, 'keeper dir removed');
  });

  it('host tools after adoption: the new bridge serves the MCP token and port the adopted CLI was given, and the tools its turn listed', { timeout: 60_000 }, async () => {
    const { first, client } = await startToolTurn('tools', '{"text":"after"}', ['--delay-ms', '1500']);
    await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.includes('"step":"tools/list"'));
    await first.kill('SIGKILL');

    const second = await bridgeOn(first.stateDir);
    const { client: c2 } = await connect(second);
    await c2.attach(0);
    const call = (await c2.waitForRecord((r) => r.kind === 'tool-call', 20_000)) as RecordOf<'tool-call'>;
    expect(call).toMatchObject({ turnId: 'tools', data: { name: 'echo_upper', input: { text: 'after' } } });
    expect(await c2.request({ type: 'tool-result', id: 'r', callId: call.data.callId, output: 'AFTER' })).toMatchObject({ type: 'ack' });
    const end = (await c2.waitForRecord((r) => r.kind === 'turn-end', 20_000)) as RecordOf<'turn-end'>;
    expect(end.data).toEqual({ reason: 'exit', code: 0 });
    const answered = c2.records().find((r) => r.kind === 'stdout' && r.data.text.includes('"step":"tools/call"')) as RecordOf<'stdout'>;
    expect(JSON.parse(answered.data.text)).toMatchObject({ status: 200, body: { result: { content: [{ type: 'text', text: 'AFTER' }], isError: false } } });
  });

  it('the keeper killed too (no exit written): falls back to interrupted, as without survive', { timeout: 60_000 }, async () => {
    const { first, spawn, dir } = await startSlowSurvivor('lost');
    await first.kill('SIGKILL');
    process.kill(keeperPid(dir), 'SIGKILL');
    process.kill(-spawn.data.pid, 'SIGKILL');
    await eventually(() => !alive(keeperPid(dir)), 10_000, 'keeper gone');

    const second = await bridgeOn(first.stateDir);
    const { client: c2, hello: again } = await connect(second);
    expect(again.turns.at(-1)).toMatchObject({ turnId: 'lost', status: 'interrupted' });
    await c2.attach(0);
    const records = c2.records();
    expect(records.filter((r) => r.kind === 'turn-end').map((r) => (r as RecordOf<'turn-end'>).data.reason)).toEqual(['interrupted']);
    expect(records.filter((r) => r.kind === 'bridge-start').every((r) => (r as RecordOf<'bridge-start'>).data.adopted === undefined)).toBe(true);
    expect(existsSync(dir), 'the dead keeper dir is removed by the new bridge').toBe(false);
  });

  it('a keeper whose dir is removed (its session destroyed with no bridge left) kills its CLI and exits', { timeout: 30_000 }, async () => {
    const { first, spawn, dir } = await startSlowSurvivor('gone');
    const keeper = keeperPid(dir);
    expect(readFileSync(join(dir, 'cli.pid'), 'utf8').trim(), 'cli.pid names the CLI (what a forced destroy kills)').toBe(String(spawn.data.pid));
    await first.kill('SIGKILL');
    expect([alive(keeper), alive(spawn.data.pid)], 'both outlive the bridge').toEqual([true, true]);
    rmSync(first.stateDir, { recursive: true, force: true });
    await eventually(() => !alive(keeper) && !alive(spawn.data.pid), 10_000, 'keeper and CLI gone after their dir was removed');
  });

  it('a host tool call pending when the bridge dies is carried over: the keeper re-sends it, the new bridge takes the host\'s answer, and the CLI reads it once', { timeout: 60_000 }, async () => {
    const { first, client } = await startToolTurn('pending', '{"text":"kept"}', [], noNetworkNamespace);
    const call = (await client.waitForRecord((r) => r.kind === 'tool-call')) as RecordOf<'tool-call'>;
    expect(call.data.relay, 'the call came through the keeper relay').toMatch(/^[0-9a-f]{12}-\d+$/);
    await first.kill('SIGKILL'); // the keeper holds the CLI's tools/call request

    const second = await bridgeOn(first.stateDir, noNetworkNamespace);
    const { client: c2 } = await connect(second);
    await c2.attach(0);
    expect(await c2.request({ type: 'tool-result', id: 'late', callId: call.data.callId, output: 'KEPT ANSWER' }), 'the adopting bridge waits for this answer').toMatchObject({ type: 'ack' });
    const end = (await c2.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'pending', 20_000)) as RecordOf<'turn-end'>;
    expect(end.data).toEqual({ reason: 'exit', code: 0 });
    const records = c2.records();
    expect(records.filter((r) => r.kind === 'tool-call'), 'the re-sent request is not a second call').toHaveLength(1);
    expect(records.filter((r) => r.kind === 'tool-result' && r.data.callId === call.data.callId), 'one result for the call').toMatchObject([{ data: { output: 'KEPT ANSWER', isError: false } }]);
    const answered = linesOf(records, 'stdout', 'pending').filter((line) => line.includes('"step":"tools/call"'));
    expect(answered, 'the CLI read the host\'s answer once').toHaveLength(1);
    expect(JSON.parse(answered[0]!)).toMatchObject({ status: 200, body: { result: { content: [{ type: 'text', text: 'KEPT ANSWER' }], isError: false } } });
  });

  it('an answer journaled just before the bridge dies (its keeper stopped meanwhile) reaches the CLI once; the host is not asked again', { timeout: 60_000 }, async () => {
    const { first, client, spawn } = await startToolTurn('answered', '{"text":"journaled"}', [], noNetworkNamespace);
    const call = (await client.waitForRecord((r) => r.kind === 'tool-call')) as RecordOf<'tool-call'>;
    // The keeper is stopped while the host answers and the bridge dies: the answer is in the journal and perhaps in the
    // keeper's socket buffer. Either way (the dead bridge's bytes, or the adopting bridge answering the re-sent request
    // from the journal; test/bridge/mcp.test.ts pins the latter) the CLI reads it once.
    const keeperPid = Number(readFileSync(join(first.stateDir, 'keepers', spawn.data.keeper!, 'keeper.pid'), 'utf8'));
    process.kill(keeperPid, 'SIGSTOP');
    try {
      expect(await client.request({ type: 'tool-result', id: 'r', callId: call.data.callId, output: 'FROM THE JOURNAL' })).toMatchObject({ type: 'ack' });
      await client.waitForRecord((r) => r.kind === 'tool-result');
      await first.kill('SIGKILL');
    } finally {
      process.kill(keeperPid, 'SIGCONT');
    }
    const second = await bridgeOn(first.stateDir, noNetworkNamespace);
    const { client: c2 } = await connect(second);
    await c2.attach(0);
    const end = (await c2.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'answered', 20_000)) as RecordOf<'turn-end'>;
    expect(end.data).toEqual({ reason: 'exit', code: 0 });
    const records = c2.records();
    expect(records.filter((r) => r.kind === 'tool-result'), 'one result, the host\'s').toMatchObject([{ data: { callId: call.data.callId, output: 'FROM THE JOURNAL' } }]);
    const answered = linesOf(records, 'stdout', 'answered').filter((line) => line.includes('"step":"tools/call"'));
    expect(answered).toHaveLength(1);
    expect(JSON.parse(answered[0]!)).toMatchObject({ status: 200, body: { result: { content: [{ type: 'text', text: 'FROM THE JOURNAL' }] } } });
  });
});
