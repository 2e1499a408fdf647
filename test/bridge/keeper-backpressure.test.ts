// A keeper holds a kept CLI's pipe whose capture runs more than KEEPER_LIMITS.maxAheadBytes ahead of what
// the connected bridge says it has read (`{"t":"read"}`), as a bridge's own pipe would block it; without a
// bridge it reads on, and a pty it never holds. The test plays the bridge on the keeper's socket after SIGKILLing the real one,
// then hands the CLI to a new bridge; the bridge's side (KeptProcess saying how far it read) is
// checked against a stand-in keeper socket.
// Built bridge, real processes and sockets (docs/bridge-internals.md#surviving-clis).
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { KeptProcess } from '../../bridge/survive/kept-process.ts';
import { KEEPER_LIMITS } from '../../bridge/limits.ts';
import { eventually, seqProblem, sleep, tempDir } from './helpers.ts';
import { keeperConnection, killedBridges } from './killed-bridges.ts';

const { groups, bridgeOn } = killedBridges();

const lines = 300_000; // ~20 MiB: far more than the keeper lets run ahead
// Prints `lines` numbered lines as fast as its pipe takes them, once the file `go` appears (the jail lets it read the test's dir, not write it).
const cli = (dir: string) => `
const fs = require('node:fs');
const go = ${JSON.stringify(join(dir, 'go'))};
const wait = () => (fs.existsSync(go) ? write(0) : setTimeout(wait, 10));
const write = (from) => {
  let chunk = '';
  for (let i = from; i < Math.min(from + 1000, ${lines}); i++) chunk += 'line ' + i + ' ' + 'x'.repeat(56) + '\\n';
  if (from >= ${lines}) return;
  if (process.stdout.write(chunk)) setImmediate(() => write(from + 1000));
  else process.stdout.once('drain', () => write(from + 1000));
};
wait();`;

async function connectAsBridge(dir: string): Promise<Socket> {
  const socket = await keeperConnection(dir);
  socket.on('data', () => undefined); // its notices
  return socket;
}

describe('keeper backpressure (launch survive)', () => {
  it('a CLI too far ahead of its bridge is held; a read notice or no bridge lets it on; an adopting bridge journals every line once', { timeout: 120_000 }, async () => {
    const work = tempDir();
    const first = await bridgeOn();
    const { stateDir } = first.bridge;
    await first.client.request({ type: 'start', id: 's', turnId: 'flood', launch: { argv: [process.execPath, '-e', cli(work)], survive: true } });
    const spawn = await first.client.waitForRecord((r) => r.kind === 'spawn');
    if (spawn.kind === 'spawn') groups.push(spawn.data.pid);
    const [keeper] = readdirSync(join(stateDir, 'keepers')).filter((name) => existsSync(join(stateDir, 'keepers', name, 'spec.json')));
    const dir = join(stateDir, 'keepers', keeper!);
    await first.bridge.kill('SIGKILL');

    // The test is the keeper's bridge now: it counts as caught up at its connection, and never says it read more.
    const socket = await connectAsBridge(dir);
    const capture = () => statSync(join(dir, 'stdout')).size;
    const atConnect = capture();
    const limit = atConnect + KEEPER_LIMITS.maxAheadBytes + 1024 * 1024; // the pipe's buffer and one read of slack
    writeFileSync(join(work, 'go'), '');
    await eventually(() => capture() > atConnect + KEEPER_LIMITS.maxAheadBytes, 30_000, 'the capture past maxAheadBytes');
    for (let i = 0; i < 40; i++) {
      await sleep(25); // the CLI had time to write on: it is held, not slow
      expect(capture(), 'the capture stays within maxAheadBytes (plus slack) of what the bridge read').toBeLessThanOrEqual(limit);
    }
    expect(existsSync(join(dir, 'exit.json')), 'the CLI has not ended').toBe(false);

    // Reading to within more than half of maxAheadBytes does not let it on (hysteresis: no hold and release per chunk).
    const held = capture();
    socket.write(`{"t":"read","o":[${held - Math.floor(KEEPER_LIMITS.maxAheadBytes * 0.75)},0]}\n`);
    for (let i = 0; i < 20; i++) {
      await sleep(25);
      expect(capture(), 'still held while the bridge is more than half of maxAheadBytes behind').toBe(held);
    }

    // Saying it read everything so far lets the CLI on, by about maxAheadBytes again.
    socket.write(`{"t":"read","o":[${held},0]}\n`);
    await eventually(() => capture() > held + KEEPER_LIMITS.maxAheadBytes, 30_000, 'the capture growing after the read notice');

    // An adopting bridge reads the rest and says so as it goes: the CLI finishes, every line journaled once.
    socket.destroy();
    const second = await bridgeOn(stateDir, 0);
    await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'flood', 90_000);
    const records = second.client.records();
    expect(records.find((r) => r.kind === 'turn-end')?.data).toEqual({ reason: 'exit', code: 0 });
    expect(seqProblem(records, 1, records.at(-1)!.seq)).toBeNull();
    const out = records.filter((r) => r.kind === 'stdout');
    expect(out).toHaveLength(lines);
    expect(out.every((r, i) => r.kind === 'stdout' && r.data.text.startsWith(`line ${i} `))).toBe(true);
  });

  it('a pty is never held: what its CLI wrote just before exiting is captured (a held pty loses it at the exit)', { timeout: 60_000 }, async () => {
    const work = tempDir();
    const first = await bridgeOn();
    const { stateDir } = first.bridge;
    // Past maxAheadBytes at once (a pipe would be held there), then, once the keeper had time to hold it, a last line and the exit.
    const tty = `
const fs = require('node:fs');
const go = ${JSON.stringify(join(work, 'go'))};
const wait = () => (fs.existsSync(go) ? flood() : setTimeout(wait, 10));
const flood = () => {
  fs.writeSync(1, ('y'.repeat(63) + '\\n').repeat(${Math.ceil((KEEPER_LIMITS.maxAheadBytes + 4096) / 64)}));
  setTimeout(() => { fs.writeSync(1, 'DONE\\n'); process.exit(0); }, 300);
};
wait();`;
    await first.client.request({ type: 'start', id: 's', turnId: 'tty', launch: { argv: [process.execPath, '-e', tty], survive: true, io: { mode: 'pty', cols: 80, rows: 24 } } });
    const spawn = await first.client.waitForRecord((r) => r.kind === 'spawn');
    if (spawn.kind === 'spawn') groups.push(spawn.data.pid);
    const [keeper] = readdirSync(join(stateDir, 'keepers')).filter((name) => existsSync(join(stateDir, 'keepers', name, 'spec.json')));
    const dir = join(stateDir, 'keepers', keeper!);
    await first.bridge.kill('SIGKILL');

    const socket = await connectAsBridge(dir); // never says it read anything: a pipe would stay held
    writeFileSync(join(work, 'go'), '');
    await eventually(() => existsSync(join(dir, 'exit.json')), 30_000, 'the CLI exit');
    socket.destroy();
    expect(statSync(join(dir, 'stdout')).size, `the keeper read past maxAheadBytes: ${readFileSync(join(dir, 'stdout'), 'utf8').slice(0, 600)}`).toBeGreaterThan(KEEPER_LIMITS.maxAheadBytes);
    expect(readFileSync(join(dir, 'stdout'), 'utf8').endsWith('DONE\r\n'), `the last line is in the capture: ${statSync(join(dir, 'stdout')).size} bytes, ending ${JSON.stringify(readFileSync(join(dir, 'stdout'), 'utf8').slice(-80))}; exit ${readFileSync(join(dir, 'exit.json'), 'utf8')}`).toBe(true);
  });

  it('the bridge side: each pump that read says the offsets to the keeper, once per change', { timeout: 30_000 }, async () => {
    const { dir, heard, got, proc, keeperSide, close } = await standInKeeper();
    try {
      appendFileSync(join(dir, 'stdout'), 'one\ntwo\n');
      appendFileSync(join(dir, 'stderr'), 'err\n');
      keeperSide!.write('{"t":"grew"}\n');
      await eventually(() => heard.includes('{"t":"read","o":[8,4]}'), 10_000, 'the read notice');
      keeperSide!.write('{"t":"grew"}\n'); // nothing new: nothing said
      appendFileSync(join(dir, 'stdout'), 'three\n');
      keeperSide!.write('{"t":"grew"}\n');
      await eventually(() => heard.includes('{"t":"read","o":[14,4]}'), 10_000, 'the second read notice');
      expect(heard).toEqual(['{"t":"read","o":[8,4]}', '{"t":"read","o":[14,4]}']);
      expect(got).toEqual(['one', 'two', 'err', 'three']);
    } finally {
      close();
    }
  });

  it('the bridge side of a pty: no read notices (a keeper never holds a pty)', { timeout: 30_000 }, async () => {
    const { dir, heard, got, keeperSide, close } = await standInKeeper({ mode: 'pty', cols: 80, rows: 24 });
    try {
      appendFileSync(join(dir, 'stdout'), 'one\r\n');
      keeperSide.write('{"t":"grew"}\n');
      await eventually(() => got.join('') === 'one\r\n', 10_000, 'the pty text');
      appendFileSync(join(dir, 'stdout'), 'two\r\n');
      keeperSide.write('{"t":"grew"}\n');
      await eventually(() => got.join('') === 'one\r\ntwo\r\n', 10_000, 'more pty text');
      await sleep(100);
      expect(heard).toEqual([]);
    } finally {
      close();
    }
  });
});

describe('when the next kept spawn\'s keeper starts', () => {
  it('once the kept CLI goes quiet after its first output, not while its output flows', { timeout: 30_000 }, async () => {
    // Only intervals are faked: the quiet check's. The socket and the pumps run for real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { dir, got, proc, keeperSide, close } = await standInKeeper();
    let quiet = false;
    void proc.quiet.then(() => (quiet = true));
    const flush = () => new Promise((resolve) => setImmediate(resolve));
    const line = async (n: number) => {
      appendFileSync(join(dir, 'stdout'), `line ${n}\n`);
      keeperSide.write('{"t":"grew"}\n');
      await eventually(() => got.length === n + 1, 10_000, `line ${n}`);
    };
    try {
      // Before its first output the CLI is starting, not quiet.
      vi.advanceTimersByTime(KEEPER_LIMITS.quietMs * 5);
      await flush();
      expect(quiet).toBe(false);
      await line(0);
      for (let n = 1; n <= 20; n++) {
        await line(n);
        vi.advanceTimersByTime(KEEPER_LIMITS.quietMs);
        await flush();
        expect(quiet, `quiet after line ${n}`).toBe(false);
      }
      vi.advanceTimersByTime(KEEPER_LIMITS.quietMs);
      await flush();
      expect(quiet).toBe(true);
    } finally {
      vi.useRealTimers();
      close();
    }
  });
});

/** A KeptProcess reading a keeper dir the test writes, connected to a keeper socket the test plays. */
async function standInKeeper(io: { mode: 'pipes' } | { mode: 'pty'; cols: number; rows: number } = { mode: 'pipes' }) {
  const dir = join(tempDir(), 'k');
  mkdirSync(dir);
  writeFileSync(join(dir, 'stdout'), '');
  writeFileSync(join(dir, 'stderr'), '');
  const heard: string[] = [];
  let keeperSide: Socket | undefined;
  const server = createServer((socket) => {
    keeperSide = socket;
    socket.setEncoding('utf8').on('data', (text: string) => heard.push(...text.split('\n').filter(Boolean)));
  });
  await new Promise<void>((resolve) => server.listen(join(dir, 'sock'), resolve));
  const got: string[] = [];
  const noop = () => undefined;
  const proc = new KeptProcess(dir, 2 ** 22, { argv: ['x'], stdin: 'null', io, lifetime: 'run-to-exit' } as never, { stdout: 0, stderr: 0 }, { maxLineBytes: 1024, exitDrainMs: 100, paused: false, log: { debug: noop, warn: noop } }, { line: (_stream, text) => got.push(text), chunk: (text) => got.push(text), exit: noop });
  await proc.connect();
  proc.begin();
  await eventually(() => keeperSide !== undefined, 10_000, 'the keeper side of the socket');
  const close = () => {
    server.close();
    keeperSide?.destroy();
  };
  return { dir, heard, got, proc, keeperSide: keeperSide!, close };
}
