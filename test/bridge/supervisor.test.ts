// The supervisor against the real fixture CLI: both CLI shapes, turn end by
// matcher and by exit, busy, /dev/null stdin, big lines, stderr, abort, crash,
// stop, pty, and the missing-node-pty path.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SUPERVISOR_LIMITS } from '../../bridge/limits.ts';
import { Supervisor } from '../../bridge/supervisor/supervisor.ts';
import { launchSpecSchema, type LaunchSpec, type LaunchSpecInput } from '../../protocol/v1/launch-spec.ts';
import { eventually } from './helpers.ts';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';

const FIXTURE = fileURLToPath(new URL('../../host/testing/fixture/fixture-cli.mjs', import.meta.url));
const FILL = 'abcdefghijklmnopqrstuvwxyz0123456789';

function launch(args: string[], extra: Omit<LaunchSpecInput, 'argv'> = {}): LaunchSpec {
  return launchSpecSchema.parse({ argv: [process.execPath, FIXTURE, ...args], ...extra });
}

/** An echo-mode session launch whose turns end at a {"type":"result"} line. */
function echoLaunch(args: string[] = [], extra: Omit<LaunchSpecInput, 'argv'> = {}): LaunchSpec {
  return launch(['--echo', ...args], {
    stdin: 'pipe',
    lifetime: 'session',
    turnEnd: [{ json: { path: ['type'], equals: 'result' } }],
    interrupt: { input: '{"type":"interrupt"}\n' },
    ...extra,
  });
}

const prompt = (text: string, more: Record<string, unknown> = {}) => JSON.stringify({ type: 'prompt', text, ...more }) + '\n';

type Draft = RecordDraft;
type Waiter = { pred: (d: Draft) => boolean; resolve: (d: Draft) => void };

/** Collects drafts; `until` resolves on the first draft (past or future) matching, or fails after a timeout. */
class Recorder {
  readonly drafts: Draft[] = [];
  #waiters: Waiter[] = [];
  readonly emit = (d: Draft): void => {
    this.drafts.push(d);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.pred(d)) return true;
      w.resolve(d);
      return false;
    });
  };
  until(pred: (d: Draft) => boolean, timeoutMs = 15_000): Promise<Draft> {
    const hit = this.drafts.find(pred);
    if (hit) return Promise.resolve(hit);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out; kinds so far: ${this.drafts.map((d) => d.kind).join(',')}`));
      }, timeoutMs);
      const waiter: Waiter = {
        pred,
        resolve: (d) => {
          clearTimeout(timer);
          resolve(d);
        },
      };
      this.#waiters.push(waiter);
    });
  }
  turnEnd(turnId: string): Promise<Extract<Draft, { kind: 'turn-end' }>> {
    return this.until((d) => d.kind === 'turn-end' && d.turnId === turnId) as Promise<Extract<Draft, { kind: 'turn-end' }>>;
  }
  of(turnId: string | null): Draft[] {
    return this.drafts.filter((d) => d.turnId === turnId);
  }
  kinds(turnId: string | null): string[] {
    return this.of(turnId).map((d) => d.kind);
  }
  /** stdout texts (JSON-parsed when they parse) for a turn. */
  stdoutJson(turnId: string | null): Array<Record<string, unknown>> {
    return this.of(turnId)
      .filter((d): d is Extract<Draft, { kind: 'stdout' }> => d.kind === 'stdout')
      .map((d) => JSON.parse(d.data.text) as Record<string, unknown>);
  }
}

const sups: Supervisor[] = [];
function create(options: Partial<ConstructorParameters<typeof Supervisor>[0]> = {}): { sup: Supervisor; rec: Recorder } {
  const rec = new Recorder();
  const sup = new Supervisor({ emit: rec.emit, log: pino({ level: 'silent' }), ...options });
  sups.push(sup);
  return { sup, rec };
}

afterEach(async () => {
  // Never leave a fixture process behind, whatever a test did.
  await Promise.all(sups.splice(0).map((s) => s.stop(200)));
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: no such process, which is the answer.
    return false;
  }
}

describe('Supervisor: lifetime turn', () => {
  it('runs a process per turn; exit ends the turn; records come in contract order', async () => {
    const { sup, rec } = create();
    const result = await sup.start('t1', launch(['--json', '--lines', '5']), undefined, { tools: [{ name: 'lookup' }] });
    expect(result).toEqual({ ok: true });
    expect(sup.state).toBe('running');
    expect(sup.turnId).toBe('t1');
    const end = await rec.turnEnd('t1');
    expect(end.data).toEqual({ reason: 'exit', code: 0 });
    expect(rec.kinds('t1')).toEqual(['turn-start', 'spawn', ...Array(7).fill('stdout'), 'exit', 'turn-end']);
    const start = rec.of('t1')[0] as Extract<Draft, { kind: 'turn-start' }>;
    expect(start.data.tools).toEqual([{ name: 'lookup' }]);
    expect(start.data.argv).toEqual([process.execPath, FIXTURE, '--json', '--lines', '5']);
    const out = rec.stdoutJson('t1');
    expect(out.map((o) => o.type)).toEqual(['session', 'line', 'line', 'line', 'line', 'line', 'done']);
    expect(out[5]).toEqual({ type: 'line', n: 4, text: 'line 4' });
    expect(sup.state).toBe('idle');
    expect(sup.hasLiveProcess).toBe(false);

    // The next turn spawns a fresh process.
    await sup.start('t2', launch(['--json', '--lines', '1']));
    expect((await rec.turnEnd('t2')).data.reason).toBe('exit');
    const pids = rec.drafts.filter((d) => d.kind === 'spawn').map((d) => (d as Extract<Draft, { kind: 'spawn' }>).data.pid);
    expect(pids).toHaveLength(2);
    expect(pids[0]).not.toBe(pids[1]);
  });

  it('answers a second start with turn-busy and records nothing for it', async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--hang']));
    const busy = await sup.start('t2', launch(['--json']));
    expect(busy).toMatchObject({ ok: false, code: 'turn-busy' });
    expect(rec.of('t2')).toEqual([]);
    sup.abort('t1', 100);
    await rec.turnEnd('t1');
  });

  it("gives stdin:'null' CLIs /dev/null: a child reading stdin sees EOF at once", async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--read-stdin']), 'ignored: stdin is /dev/null');
    await rec.turnEnd('t1');
    const stdinLine = rec.stdoutJson('t1').find((o) => o.type === 'stdin');
    expect(stdinLine).toEqual({ type: 'stdin', bytes: 0, text: '' });
    expect(rec.kinds('t1')).not.toContain('stdin');
  });

  it('writes start input to a piped stdin of a per-turn process and records it', async () => {
    const { sup, rec } = create();
    const input = prompt('once', { lines: 1, exit: true });
    await sup.start('t1', launch(['--echo'], { stdin: 'pipe' }), input);
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'exit', code: 0 });
    expect(rec.of('t1').filter((d) => d.kind === 'stdin')).toMatchObject([{ data: { text: input } }]);
    expect(rec.stdoutJson('t1').at(-1)).toEqual({ type: 'result', turn: 1, text: 'once', lines: 1 });
    expect(rec.kinds('t1')).toEqual(['turn-start', 'spawn', 'stdin', 'stdout', 'stdout', 'stdout', 'stdout', 'exit', 'turn-end']);
  });

  it('delivers a 1 MiB single line whole when its cont pieces are joined, each piece <= cap', async () => {
    const { sup, rec } = create();
    const bytes = 1024 * 1024;
    await sup.start('t1', launch(['--big-line', String(bytes)]));
    await rec.turnEnd('t1');
    const out = rec.of('t1').filter((d): d is Extract<Draft, { kind: 'stdout' }> => d.kind === 'stdout');
    const last = out.findIndex((d) => !d.data.cont);
    const pieces = out.slice(0, last + 1);
    expect(pieces.length).toBeGreaterThanOrEqual(Math.ceil(bytes / SUPERVISOR_LIMITS.maxLineBytes));
    for (const p of pieces) expect(Buffer.byteLength(p.data.text)).toBeLessThanOrEqual(SUPERVISOR_LIMITS.maxLineBytes);
    expect(pieces.slice(0, -1).every((p) => p.data.cont === true)).toBe(true);
    const joined = pieces.map((p) => p.data.text).join('');
    expect(joined.length).toBe(bytes);
    expect(joined).toBe(FILL.repeat(Math.ceil(bytes / FILL.length)).slice(0, bytes));
    expect(out[last + 1]?.data.text).toBe('done 0');
  });

  it('honours io.maxLineBytes and never splits a multi-byte char', async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--big-line', '30000', '--fill', '€é😀a'], { io: { mode: 'pipes', maxLineBytes: 1000 } }));
    await rec.turnEnd('t1');
    const out = rec.of('t1').filter((d): d is Extract<Draft, { kind: 'stdout' }> => d.kind === 'stdout');
    const pieces = out.slice(0, out.findIndex((d) => !d.data.cont) + 1);
    expect(pieces.length).toBeGreaterThan(25);
    for (const p of pieces) {
      expect(Buffer.byteLength(p.data.text)).toBeLessThanOrEqual(1000);
      expect(p.data.text).not.toContain('\uFFFD');
    }
    expect(pieces.map((p) => p.data.text).join('')).toMatch(/^(€é😀a)+/);
  });

  it('records stderr lines', async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--stderr-lines', '2', '--lines', '1']));
    await rec.turnEnd('t1');
    const err = rec.of('t1').filter((d) => d.kind === 'stderr').map((d) => (d as Extract<Draft, { kind: 'stderr' }>).data);
    expect(err).toEqual([{ text: '{"type":"log","n":0}' }, { text: '{"type":"log","n":1}' }]);
  });

  it('emits exit then turn-end with code 3 when the CLI crashes mid-turn', async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--lines', '10', '--crash-after', '3']));
    const end = await rec.turnEnd('t1');
    expect(end.data).toEqual({ reason: 'exit', code: 3 });
    const kinds = rec.kinds('t1');
    expect(kinds.slice(-2)).toEqual(['exit', 'turn-end']);
    expect(rec.of('t1').find((d) => d.kind === 'exit')).toMatchObject({ data: { code: 3, signal: null } });
    expect(rec.stdoutJson('t1').filter((o) => o.type === 'line')).toHaveLength(3);
  });

  it('aborts a hanging child: SIGINT is ignored, the group is SIGKILLed after the grace', async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--hang', '--grandchild']));
    await rec.until((d) => d.kind === 'stdout' && d.data.text === '{"type":"hang"}');
    const grandchild = rec.stdoutJson('t1').find((o) => o.type === 'grandchild')!.pid as number;
    expect(isAlive(grandchild)).toBe(true);
    const t0 = Date.now();
    expect(sup.abort('t1', 300)).toEqual({ ok: true });
    expect(sup.abort('t1', 300)).toEqual({ ok: true }); // idempotent
    const end = await rec.turnEnd('t1');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(end.data).toEqual({ reason: 'aborted', code: null });
    const signals = rec.of('t1').filter((d) => d.kind === 'signal').map((d) => (d as Extract<Draft, { kind: 'signal' }>).data);
    expect(signals).toEqual([
      { signal: 'SIGINT', reason: 'abort' },
      { signal: 'SIGKILL', reason: 'abort-grace-expired' },
    ]);
    expect(rec.of('t1').find((d) => d.kind === 'exit')).toMatchObject({ data: { code: null, signal: 'SIGKILL' } });
    // The whole process group went: the grandchild was SIGKILLed with it (orphaned, init reaps it a moment later).
    await eventually(() => !isAlive(grandchild), 15_000, 'the SIGKILLed grandchild to be gone');
  });

  it('abort of a child that honours SIGINT ends the turn without waiting for the grace', async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--lines', '1000', '--interval-ms', '10']));
    await rec.until((d) => d.kind === 'stdout' && d.data.text.includes('"n":2'));
    const t0 = Date.now();
    sup.abort('t1', 10_000);
    const end = await rec.turnEnd('t1');
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(end.data).toEqual({ reason: 'aborted', code: null });
    expect(rec.of('t1').find((d) => d.kind === 'exit')).toMatchObject({ data: { signal: 'SIGINT' } });
  });

  it('signal() sends a host signal to the group and records it', async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--lines', '1000', '--interval-ms', '10']));
    await rec.until((d) => d.kind === 'stdout' && d.data.text.includes('"n":1,'));
    expect(sup.signal('t1', 'SIGTERM')).toEqual({ ok: true });
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'exit', code: null });
    expect(rec.of('t1').find((d) => d.kind === 'signal')).toMatchObject({ data: { signal: 'SIGTERM', reason: 'host' } });
    expect(rec.of('t1').find((d) => d.kind === 'exit')).toMatchObject({ data: { code: null, signal: 'SIGTERM' } });
  });

  it('answers write/signal/abort for an unknown turn with unknown-turn', async () => {
    const { sup } = create();
    expect(sup.write('nope', 'x')).toMatchObject({ ok: false, code: 'unknown-turn' });
    expect(sup.signal('nope', 'SIGINT')).toMatchObject({ ok: false, code: 'unknown-turn' });
    expect(sup.abort('nope')).toMatchObject({ ok: false, code: 'unknown-turn' });
  });

  it("answers write with no-process when stdin is 'null'", async () => {
    const { sup, rec } = create();
    await sup.start('t1', launch(['--json', '--hang']));
    expect(sup.write('t1', 'x\n')).toMatchObject({ ok: false, code: 'no-process' });
    sup.abort('t1', 50);
    await rec.turnEnd('t1');
  });

  it('never passes the bridge token on to the CLI', async () => {
    const { sup, rec } = create();
    process.env.HARNESS_BRIDGE_TOKEN = 'secret-token';
    try {
      await sup.start('t1', launch(['--json', '--print-env', 'HARNESS_BRIDGE_TOKEN', '--print-env', 'EXTRA'], { env: { EXTRA: 'yes' } }));
    } finally {
      delete process.env.HARNESS_BRIDGE_TOKEN;
    }
    await rec.turnEnd('t1');
    const env = rec.stdoutJson('t1').filter((o) => o.type === 'env');
    expect(env).toEqual([
      { type: 'env', name: 'HARNESS_BRIDGE_TOKEN', value: null },
      { type: 'env', name: 'EXTRA', value: 'yes' },
    ]);
  });

  it("the CLI's env is explicit: the base (PATH), what the launch passes by name and sets; nothing else of the bridge's (docs/security.md#cli-env)", async () => {
    const { sup, rec } = create();
    const names = ['HOST_SECRET_CANARY', 'HB_TEST_CREDENTIAL', 'HB_TEST_UNSET', 'HARNESS_BRIDGE_TOKEN', 'PATH', 'EXTRA'];
    Object.assign(process.env, { HOST_SECRET_CANARY: 'leaked', HB_TEST_CREDENTIAL: 'sk-passed', HARNESS_BRIDGE_TOKEN: 'secret-token' });
    try {
      const args = ['--json', ...names.flatMap((name) => ['--print-env', name])];
      await sup.start('t1', launch(args, { env: { EXTRA: 'yes' }, passEnv: ['HB_TEST_CREDENTIAL', 'HB_TEST_UNSET', 'HARNESS_BRIDGE_TOKEN'] }));
    } finally {
      for (const name of ['HOST_SECRET_CANARY', 'HB_TEST_CREDENTIAL', 'HARNESS_BRIDGE_TOKEN']) delete process.env[name];
    }
    await rec.turnEnd('t1');
    const env = Object.fromEntries(rec.stdoutJson('t1').filter((o) => o.type === 'env').map((o) => [o.name, o.value]));
    expect(env).toEqual({ HOST_SECRET_CANARY: null, HB_TEST_CREDENTIAL: 'sk-passed', HB_TEST_UNSET: null, HARNESS_BRIDGE_TOKEN: null, PATH: process.env.PATH, EXTRA: 'yes' });
  });

  it('pause() stops reading output (the CLI blocks) and resume() delivers all of it', async () => {
    const { sup, rec } = create();
    sup.pause();
    await sup.start('t1', launch(['--json', '--lines', '2000', '--line-bytes', '1000']));
    await new Promise((r) => setTimeout(r, 400));
    expect(rec.kinds('t1').filter((k) => k === 'stdout')).toHaveLength(0);
    expect(sup.state).toBe('running');
    sup.resume();
    await rec.turnEnd('t1');
    expect(rec.kinds('t1').filter((k) => k === 'stdout')).toHaveLength(2002);
  });
});

describe('Supervisor: lifetime session', () => {
  it('ends turns at the matched line; the process lives on and the next start writes to it', async () => {
    const { sup, rec } = create();
    const spec = echoLaunch();
    expect(await sup.start('t1', spec, prompt('one', { lines: 2 }))).toEqual({ ok: true });
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'matched' });
    expect(sup.state).toBe('idle');
    expect(sup.hasLiveProcess).toBe(true);
    expect(rec.kinds('t1')).toEqual(['turn-start', 'spawn', 'stdin', 'stdout', 'stdout', 'stdout', 'stdout', 'stdout', 'turn-end']);

    expect(await sup.start('t2', spec, prompt('two', { lines: 1 }))).toEqual({ ok: true });
    expect((await rec.turnEnd('t2')).data).toEqual({ reason: 'matched' });
    expect(rec.kinds('t2')).toEqual(['turn-start', 'stdin', 'stdout', 'stdout', 'stdout', 'turn-end']);
    expect(rec.stdoutJson('t2')).toEqual([
      { type: 'start', turn: 2, text: 'two' },
      { type: 'delta', turn: 2, n: 0, text: 'two #0' },
      { type: 'result', turn: 2, text: 'two', lines: 1 },
    ]);
    expect(rec.drafts.filter((d) => d.kind === 'spawn')).toHaveLength(1);
    expect(rec.drafts.some((d) => d.kind === 'exit')).toBe(false);
  });

  it('a regex matcher ends the turn too', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch([], { turnEnd: [{ regex: '^\\{"type":"result"' }] }), prompt('r'));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
  });

  it('an invalid regex is a spawn-failed turn', async () => {
    const { sup, rec } = create();
    const r = await sup.start('t1', echoLaunch([], { turnEnd: [{ regex: '(' }] }), prompt('r'));
    expect(r).toMatchObject({ ok: false, code: 'spawn-failed' });
    expect(rec.kinds('t1')).toEqual(['turn-start', 'turn-end']);
  });

  it('a matcher never fires on a cont piece or on the tail of a split line', async () => {
    const { sup, rec } = create();
    const spec = echoLaunch([], { io: { mode: 'pipes', maxLineBytes: 64 }, turnEnd: [{ regex: '"type":"result"' }, { regex: '^\\{"type":"delta"' }] });
    await sup.start('t1', spec, prompt('x'.repeat(200), { lines: 0 }));
    await rec.until((d) => d.kind === 'stdout' && d.turnId === 't1' && d.data.text.startsWith('{"type":"result"'));
    await new Promise((r) => setTimeout(r, 200));
    expect(sup.state).toBe('running');
    // The long result line was split; abort ends the turn (the idle fixture ignores the interrupt, so after the grace).
    sup.abort('t1', 200);
    expect((await rec.turnEnd('t1')).data.reason).toBe('aborted');
  });

  it('a prefix matcher fires on an over-long line: matched on its first piece, the turn ends after its last', async () => {
    const { sup, rec } = create();
    const spec = echoLaunch([], { io: { mode: 'pipes', maxLineBytes: 64 }, turnEnd: [{ prefix: '{"type":"result"' }] });
    await sup.start('t1', spec, prompt('x'.repeat(200), { lines: 0 }));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    const out = rec.of('t1').filter((d): d is Extract<Draft, { kind: 'stdout' }> => d.kind === 'stdout');
    const start = out.findIndex((d) => d.data.text.startsWith('{"type":"result"'));
    expect(out[start]!.data.cont, 'the result line was split').toBe(true);
    expect(out.at(-1)!.data.cont, 'the turn ended with the last piece').toBeUndefined();
    expect(out.slice(start).map((d) => d.data.text).join('')).toBe(JSON.stringify({ type: 'result', turn: 1, text: 'x'.repeat(200), lines: 0 }));
    expect(rec.kinds('t1').at(-2), 'nothing between the last piece and turn-end').toBe('stdout');
    // A whole line matches too, and a later turn on the same process starts clean.
    await sup.start('t2', spec, prompt('y', { lines: 0 }));
    expect((await rec.turnEnd('t2')).data.reason).toBe('matched');
  });

  it('aborts with the launch interrupt input; the turn ends aborted and the process lives on', async () => {
    const { sup, rec } = create();
    const spec = echoLaunch();
    await sup.start('t1', spec, prompt('long', { lines: 1000, intervalMs: 10 }));
    await rec.until((d) => d.kind === 'stdout' && d.data.text.includes('"n":1,'));
    sup.abort('t1', 5_000);
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'aborted' });
    expect(rec.stdoutJson('t1').at(-1)).toMatchObject({ type: 'result', interrupted: true });
    expect(rec.of('t1').filter((d) => d.kind === 'stdin').map((d) => (d as Extract<Draft, { kind: 'stdin' }>).data.text)).toEqual([
      prompt('long', { lines: 1000, intervalMs: 10 }),
      '{"type":"interrupt"}\n',
    ]);
    expect(sup.hasLiveProcess).toBe(true);
    await sup.start('t2', spec, prompt('after'));
    expect((await rec.turnEnd('t2')).data.reason).toBe('matched');
  });

  it('routes a tool round trip over stdin with write()', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch(), JSON.stringify({ type: 'tool', name: 'lookup' }) + '\n');
    const call = await rec.until((d) => d.kind === 'stdout' && d.data.text.includes('"tool-call"'));
    const id = (JSON.parse((call as Extract<Draft, { kind: 'stdout' }>).data.text) as { id: string }).id;
    expect(sup.write('t1', JSON.stringify({ type: 'tool-result', id, output: { answer: 42 } }) + '\n')).toEqual({ ok: true });
    await rec.turnEnd('t1');
    expect(rec.stdoutJson('t1').at(-1)).toEqual({ type: 'result', turn: 1, text: '', lines: 0, tool: 'lookup', output: { answer: 42 } });
  });

  it('spawns again when the long-lived process died between turns', async () => {
    const { sup, rec } = create();
    const spec = echoLaunch();
    await sup.start('t1', spec, prompt('bye', { lines: 0, exit: true }));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    const exit = await rec.until((d) => d.kind === 'exit');
    expect(exit.turnId).toBeNull(); // it died between turns
    expect(sup.hasLiveProcess).toBe(false);
    await sup.start('t2', spec, prompt('again'));
    expect((await rec.turnEnd('t2')).data.reason).toBe('matched');
    expect(rec.kinds('t2')).toContain('spawn');
  });

  it('reuses the live process for a later turn whose argv differs when both launches carry the same reuseKey', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch([], { reuseKey: 'thread-a' }), prompt('one', { lines: 0 }));
    await rec.turnEnd('t1');
    // e.g. `--resume <thread>` appears in argv once the thread id is known: no restart wanted.
    await sup.start('t2', echoLaunch(['--resume-id', 'fx-thread'], { reuseKey: 'thread-a' }), prompt('two', { lines: 0 }));
    expect((await rec.turnEnd('t2')).data.reason).toBe('matched');
    expect(rec.kinds('t2'), 'no second spawn for the same reuseKey').not.toContain('spawn');
    await sup.start('t3', echoLaunch(['--resume-id', 'fx-thread'], { reuseKey: 'thread-b' }), prompt('three', { lines: 0 }));
    expect((await rec.turnEnd('t3')).data.reason).toBe('matched');
    expect(rec.kinds('t3'), 'a different reuseKey retires the process and spawns').toContain('spawn');
  });

  it('a crash mid-turn gives exit and turn-end with code 3', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch(['--crash-after', '2']), prompt('c', { lines: 5 }));
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'exit', code: 3 });
    expect(rec.kinds('t1').slice(-2)).toEqual(['exit', 'turn-end']);
    expect(sup.hasLiveProcess).toBe(false);
  });

  it('stop() with a live session process between turns: EOF ends it (no SIGTERM), exit with turnId null, no turn-end', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch(), prompt('one', { lines: 0 }));
    await rec.turnEnd('t1');
    await sup.stop(2_000);
    expect(sup.state).toBe('stopping');
    expect(sup.hasLiveProcess).toBe(false);
    const tail = rec.of(null).map((d) => d.kind);
    expect(tail, 'its goodbye on EOF, then its own exit').toEqual(['stdout', 'exit']);
    expect(rec.of(null).at(-1)).toMatchObject({ data: { code: 0, signal: null } });
    expect(rec.drafts.filter((d) => d.kind === 'turn-end')).toHaveLength(1);
    expect(await sup.start('t2', echoLaunch(), prompt('x'))).toMatchObject({ ok: false, code: 'stopping' });
  });

  it('stop() during a turn of a hanging session process: turn-end stopped after SIGKILL', async () => {
    const { sup, rec } = create();
    // Interrupt by signal (ignored by --hang), so only the SIGKILL ends the turn.
    await sup.start('t1', echoLaunch(['--hang'], { interrupt: { signal: 'SIGINT' } }), prompt('h', { lines: 1000, intervalMs: 20 }));
    await rec.until((d) => d.kind === 'stdout' && d.data.text.includes('"delta"'));
    await sup.stop(300);
    const end = await rec.turnEnd('t1');
    expect(end.data).toEqual({ reason: 'stopped', code: null });
    const signals = rec.of('t1').filter((d) => d.kind === 'signal').map((d) => (d as Extract<Draft, { kind: 'signal' }>).data.signal);
    expect(signals).toEqual(['SIGTERM', 'SIGKILL']);
  });

  it('stop() during a session turn whose launch interrupts by input: the interrupted result ends it as stopped', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch(), prompt('s', { lines: 1000, intervalMs: 20 }));
    await rec.until((d) => d.kind === 'stdout' && d.data.text.includes('"delta"'));
    await sup.stop(2_000);
    expect((await rec.turnEnd('t1')).data.reason).toBe('stopped');
    expect(rec.of('t1').filter((d) => d.kind === 'stdin').at(-1)).toMatchObject({ data: { text: '{"type":"interrupt"}\n' } });
    expect(rec.drafts.filter((d) => d.kind === 'exit')).toHaveLength(1);
  });

  it('a start with a different launch retires the old session process', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch(['--resume-id', 'A']), prompt('a', { lines: 0 }));
    await rec.turnEnd('t1');
    await sup.start('t2', echoLaunch(['--resume-id', 'B']), prompt('b', { lines: 0 }));
    await rec.turnEnd('t2');
    expect(rec.stdoutJson('t2')[0]).toEqual({ type: 'session', id: 'B' });
    await rec.until((d) => d.kind === 'exit' && d.turnId === null);
    expect(rec.of(null).find((d) => d.kind === 'signal'), 'EOF ended the old process by itself').toBeUndefined();
  });

  it('a retired session process that ignores EOF gets SIGTERM after the EOF wait, then SIGKILL after the grace', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch(['--hang', '--resume-id', 'A']), prompt('a', { lines: 0 }));
    await rec.turnEnd('t1');
    await sup.start('t2', echoLaunch(['--resume-id', 'B']), prompt('b', { lines: 0 }));
    await rec.turnEnd('t2');
    await rec.until((d) => d.kind === 'exit' && d.turnId === null);
    const signals = rec.of(null).filter((d) => d.kind === 'signal').map((d) => (d as Extract<Draft, { kind: 'signal' }>).data);
    expect(signals).toEqual([
      { signal: 'SIGTERM', reason: 'replaced' },
      { signal: 'SIGKILL', reason: 'replaced-grace-expired' },
    ]);
  });
});

describe('Supervisor: inputAck gate (a queued mid-turn message is answered inside the turn)', () => {
  // The fixture acknowledges a prompt/steer line carrying "uuid" with {"type":"taken","uuid":…}
  // when it takes it up; a prompt written while a turn runs is queued behind that turn's result.
  const inputAck = { inputId: ['uuid'], when: [{ path: ['type'], equals: 'taken' }], ackId: ['uuid'] };
  const gated = (args: string[] = [], extra: Omit<LaunchSpecInput, 'argv'> = {}) => echoLaunch(args, { inputAck, ...extra });
  const slow = (text: string, uuid?: string) => prompt(text, { lines: 4, intervalMs: 60, ...(uuid ? { uuid } : {}) });
  const results = (rec: Recorder, turnId: string | null) => rec.stdoutJson(turnId).filter((l) => l.type === 'result');
  /** Writes `text` once the turn has printed its first delta (the turn is running). */
  const midTurn = async (sup: Supervisor, rec: Recorder, turnId: string, text: string) => {
    await rec.until((d) => d.kind === 'stdout' && d.turnId === turnId && d.data.text.includes('"type":"delta"'));
    expect(sup.write(turnId, text)).toEqual({ ok: true });
  };

  it('without the gate (the bug): the queued message is answered after turn-end, with turnId null', async () => {
    const { sup, rec } = create();
    await sup.start('t1', echoLaunch(), slow('first', 'u1'));
    await midTurn(sup, rec, 't1', prompt('queued', { lines: 1, uuid: 'u2' }));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    await rec.until((d) => d.kind === 'stdout' && d.turnId === null && d.data.text.startsWith('{"type":"result"'));
    expect(results(rec, 't1')).toEqual([{ type: 'result', turn: 1, text: 'first', lines: 4 }]);
    expect(results(rec, null), 'the answer belongs to no turn').toEqual([{ type: 'result', turn: 2, text: 'queued', lines: 1 }]);
  });

  it('with the gate: the turn ends at the result after the queued message was taken up; nothing falls between turns', async () => {
    const { sup, rec } = create();
    const spec = gated();
    await sup.start('t1', spec, slow('first', 'u1'));
    await midTurn(sup, rec, 't1', prompt('queued', { lines: 1, uuid: 'u2' }));
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'matched' });
    expect(rec.stdoutJson('t1').map((l) => [l.type, l.uuid ?? l.turn])).toEqual([
      ['session', undefined],
      ['taken', 'u1'],
      ['start', 1],
      ['delta', 1], ['delta', 1], ['delta', 1], ['delta', 1],
      ['result', 1],
      ['taken', 'u2'],
      ['start', 2],
      ['delta', 2],
      ['result', 2],
    ]);
    expect(rec.kinds('t1').at(-2), 'the turn ended right at the second result').toBe('stdout');
    // The process lives on; the next turn is a normal one.
    await sup.start('t2', spec, prompt('next', { lines: 1, uuid: 'u3' }));
    expect((await rec.turnEnd('t2')).data.reason).toBe('matched');
    expect(results(rec, 't2')).toEqual([{ type: 'result', turn: 3, text: 'next', lines: 1 }]);
    expect(rec.of(null), 'no output between turns').toEqual([]);
  });

  it('messages the CLI merges into one run (one result for two inputs) are each acknowledged by id', async () => {
    const { sup, rec } = create();
    await sup.start('t1', gated(['--merge-queued']), slow('first', 'u1'));
    await midTurn(sup, rec, 't1', prompt('q1', { lines: 1, uuid: 'u2' }) + prompt('q2', { lines: 1, uuid: 'u3' }));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    expect(results(rec, 't1').map((r) => r.text)).toEqual(['first', 'q1\nq2']);
    expect(rec.stdoutJson('t1').filter((l) => l.type === 'taken').map((l) => l.uuid)).toEqual(['u1', 'u2', 'u3']);
  });

  it('two inputs written separately during the turn, one after the other is answered: waits for both', async () => {
    const { sup, rec } = create();
    // The CLI holds right after q1's first delta (the 5th: `first` has 4) until the test has written q2.
    const hold = join(mkdtempSync(join(tmpdir(), 'hb-sup-hold-')), 'go');
    await sup.start('t1', gated(['--hold-after', '5', '--hold-file', hold]), slow('first', 'u1'));
    await midTurn(sup, rec, 't1', prompt('q1', { lines: 2, intervalMs: 60, uuid: 'u2' }));
    // Written while q1's answer runs (after the first result): still this turn's.
    await rec.until((d) => d.kind === 'stdout' && d.data.text.includes('"text":"q1 #0"'));
    expect(sup.write('t1', prompt('q2', { lines: 1, uuid: 'u3' }))).toEqual({ ok: true });
    writeFileSync(hold, '');
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    expect(results(rec, 't1').map((r) => r.text)).toEqual(['first', 'q1', 'q2']);
  });

  it('a message injected into the running turn (acknowledged before the result) does not hold the turn past that result', async () => {
    const { sup, rec } = create();
    await sup.start('t1', gated(), slow('first', 'u1'));
    await midTurn(sup, rec, 't1', JSON.stringify({ type: 'steer', text: 'also this', uuid: 'u2' }) + '\n');
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    expect(results(rec, 't1')).toEqual([{ type: 'result', turn: 1, text: 'first', lines: 4, steered: ['also this'] }]);
    expect(rec.stdoutJson('t1').filter((l) => l.type === 'steered')).toEqual([{ type: 'steered', turn: 1, text: 'also this' }]);
  });

  it('only lines naming an id are waited for: a queued message without one is not (the old behaviour)', async () => {
    const { sup, rec } = create();
    await sup.start('t1', gated(), slow('first', 'u1'));
    await midTurn(sup, rec, 't1', prompt('no id', { lines: 1 }));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    expect(results(rec, 't1').map((r) => r.text)).toEqual(['first']);
  });

  it('acks for ids the turn never wrote, and ack-shaped lines on the other stream, release nothing', async () => {
    const { sup, rec } = create();
    const spec = gated([], { inputAck: { ...inputAck, stream: 'stderr' } });
    await sup.start('t1', spec, slow('first', 'u1'));
    // The fixture prints taken lines on stdout: with the ack stream set to stderr they never count,
    // so the turn outlives both results until abort ends it.
    await midTurn(sup, rec, 't1', prompt('queued', { lines: 1, uuid: 'u2' }));
    await rec.until((d) => d.kind === 'stdout' && d.turnId === 't1' && d.data.text.startsWith('{"type":"result","turn":2'));
    await new Promise((r) => setTimeout(r, 150));
    expect(sup.state, 'held: u1 and u2 were never acknowledged on stderr').toBe('running');
    sup.abort('t1', 300);
    expect((await rec.turnEnd('t1')).data.reason).toBe('aborted');
  });

  it('abort does not wait for pending inputs: the interrupted result ends the turn', async () => {
    const { sup, rec } = create();
    const spec = gated();
    await sup.start('t1', spec, prompt('long', { lines: 1000, intervalMs: 10, uuid: 'u1' }));
    await midTurn(sup, rec, 't1', prompt('queued', { lines: 1, uuid: 'u2' }));
    expect(sup.abort('t1', 5_000)).toEqual({ ok: true });
    const end = await rec.turnEnd('t1');
    expect(end.data.reason).toBe('aborted');
    expect(results(rec, 't1')).toEqual([{ type: 'result', turn: 1, interrupted: true, lines: expect.any(Number) }]);
    expect(rec.drafts.some((d) => d.kind === 'signal'), 'ended by the interrupt input, not the kill after the grace').toBe(false);
  });

  it('a prefix matcher on an over-long end line is held the same way', async () => {
    const { sup, rec } = create();
    const spec = gated([], { io: { mode: 'pipes', maxLineBytes: 64 }, turnEnd: [{ prefix: '{"type":"result"' }] });
    await sup.start('t1', spec, prompt('x'.repeat(100), { lines: 3, intervalMs: 60, uuid: 'u1' }));
    await midTurn(sup, rec, 't1', prompt('y'.repeat(100), { lines: 0, uuid: 'u2' }));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    const text = rec.of('t1').flatMap((d) => (d.kind === 'stdout' ? [d.data.text] : [])).join('');
    expect(text).toContain(JSON.stringify({ type: 'result', turn: 2, text: 'y'.repeat(100), lines: 0 }));
    expect(rec.kinds('t1').at(-2)).toBe('stdout');
  });

  /** A line naming an id the fixture never acknowledges (unknown JSON: it answers with an error line). */
  const lost = (uuid: string) => JSON.stringify({ type: 'note', uuid }) + '\n';
  const resultOf = (turn: number) => (d: Draft) => d.kind === 'stdout' && d.data.text.startsWith(`{"type":"result","turn":${turn}`);

  it('maxWaitMs: a match held for an id the CLI never acknowledges ends the turn after the wait, naming the id', async () => {
    const { sup, rec } = create();
    const spec = gated([], { inputAck: { ...inputAck, maxWaitMs: 300 } });
    await sup.start('t1', spec, slow('first', 'u1'));
    await midTurn(sup, rec, 't1', lost('lost'));
    await rec.until(resultOf(1));
    const heldAt = Date.now();
    const end = await rec.turnEnd('t1');
    expect(Date.now() - heldAt, 'held for the wait, not ended at the match').toBeGreaterThanOrEqual(250);
    expect(end.data).toEqual({ reason: 'matched', unacknowledged: ['lost'] });
    const t1 = rec.of('t1');
    expect(t1.at(-2), 'nothing after the held result but the turn-end').toMatchObject({ kind: 'stdout', data: { text: expect.stringMatching(/^\{"type":"result","turn":1/) } });
    // The process lives on and the next turn starts with nothing pending.
    await sup.start('t2', spec, prompt('next', { lines: 1, uuid: 'u3' }));
    expect((await rec.turnEnd('t2')).data).toEqual({ reason: 'matched' });
    expect(results(rec, 't2').map((r) => r.text)).toEqual(['next']);
    expect(rec.of(null), 'no output between turns').toEqual([]);
  });

  it('maxWaitMs: an ack within the wait keeps the turn open past it; the next held match waits afresh', async () => {
    const { sup, rec } = create();
    const spec = gated([], { inputAck: { ...inputAck, maxWaitMs: 300 } });
    await sup.start('t1', spec, slow('first', 'u1'));
    // u2 is taken right after the first result, and its run lasts ~600 ms (> maxWaitMs); "lost" never is.
    await midTurn(sup, rec, 't1', prompt('queued', { lines: 4, intervalMs: 150, uuid: 'u2' }) + lost('lost'));
    await rec.until(resultOf(2));
    const heldAt = Date.now();
    const end = await rec.turnEnd('t1');
    expect(Date.now() - heldAt, 'the second held match waited its own maxWaitMs').toBeGreaterThanOrEqual(250);
    expect(end.data).toEqual({ reason: 'matched', unacknowledged: ['lost'] });
    expect(results(rec, 't1').map((r) => r.text), 'the queued run stayed in the turn').toEqual(['first', 'queued']);
  });

  it('maxWaitMs defaults to limits.inputAckMaxWaitMs; an ack that empties the set leaves no timer behind', async () => {
    const { sup, rec } = create({ limits: { inputAckMaxWaitMs: 200 } });
    const spec = gated();
    await sup.start('t1', spec, slow('first', 'u1'));
    await midTurn(sup, rec, 't1', lost('lost'));
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'matched', unacknowledged: ['lost'] });
    // A normally acknowledged queued message: the turn ends at its run's result, which comes after the default wait.
    await sup.start('t2', spec, slow('second', 'u2'));
    await midTurn(sup, rec, 't2', prompt('queued', { lines: 4, intervalMs: 100, uuid: 'u3' }));
    expect((await rec.turnEnd('t2')).data).toEqual({ reason: 'matched' });
    expect(results(rec, 't2').map((r) => r.text)).toEqual(['second', 'queued']);
  });

  it('exit during the wait ends the turn as exit, and the expired wait adds nothing afterwards', async () => {
    const { sup, rec } = create();
    const spec = gated([], { inputAck: { ...inputAck, maxWaitMs: 300 } });
    await sup.start('t1', spec, slow('first', 'u1'));
    await midTurn(sup, rec, 't1', lost('lost'));
    await rec.until(resultOf(1));
    expect(sup.write('t1', JSON.stringify({ type: 'exit', code: 0 }) + '\n')).toEqual({ ok: true });
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'exit', code: 0 });
    await new Promise((r) => setTimeout(r, 450));
    expect(rec.drafts.filter((d) => d.kind === 'turn-end')).toHaveLength(1);
    expect(sup.state).toBe('idle');
  });

  it('in a pty the gate holds the same way', async () => {
    const { sup, rec } = create();
    const spec = gated([], { io: { mode: 'pty', cols: 200, rows: 24 } });
    const started = await sup.start('t1', spec, slow('first', 'u1'));
    if (!started.ok && /node-pty/.test(started.message)) return; // no node-pty here: the pty tests below say so
    expect(started).toEqual({ ok: true });
    await rec.until((d) => d.kind === 'pty' && d.turnId === 't1' && d.data.text.includes('"type":"delta"'));
    expect(sup.write('t1', prompt('queued', { lines: 1, uuid: 'u2' }))).toEqual({ ok: true });
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    const text = rec.of('t1').flatMap((d) => (d.kind === 'pty' ? [d.data.text] : [])).join('');
    expect(text).toContain('{"type":"result","turn":2,"text":"queued","lines":1}');
  });
});

describe('Supervisor: spawn failures and limits', () => {
  it('an ENOENT spawn is turn-start then turn-end spawn-failed, and the supervisor is idle again', async () => {
    const { sup, rec } = create();
    const r = await sup.start('t1', launchSpecSchema.parse({ argv: ['/nonexistent/cli-binary', '-p', 'hi'] }));
    expect(r).toMatchObject({ ok: false, code: 'spawn-failed' });
    expect(rec.kinds('t1')).toEqual(['turn-start', 'turn-end']);
    const end = rec.of('t1')[1] as Extract<Draft, { kind: 'turn-end' }>;
    expect(end.data.reason).toBe('spawn-failed');
    expect(end.data.message).toContain('/nonexistent/cli-binary');
    expect(sup.state).toBe('idle');
    expect(await sup.start('t2', launch(['--json']))).toEqual({ ok: true });
    await rec.turnEnd('t2');
  });

  it('a missing cwd is a spawn failure that says so', async () => {
    const { sup } = create();
    const r = await sup.start('t1', launch(['--json'], { cwd: '/nonexistent/dir' }));
    expect(r).toMatchObject({ ok: false, code: 'spawn-failed' });
    if (!r.ok) expect(r.message).toContain('/nonexistent/dir');
  });

  it('rejects bad limits with a RangeError', () => {
    const emit = () => {};
    expect(() => new Supervisor({ emit, limits: { maxLineBytes: 0 } })).toThrow(RangeError);
    expect(() => new Supervisor({ emit, limits: { maxLineBytes: SUPERVISOR_LIMITS.maxLineBytesCeiling + 1 } })).toThrow(RangeError);
    expect(() => new Supervisor({ emit, limits: { abortGraceMs: -1 } })).toThrow(RangeError);
    expect(() => new Supervisor({ emit, limits: { exitDrainMs: 1.5 } })).toThrow(RangeError);
    expect(() => new Supervisor({ emit, limits: { exitDrainMs: 0 } })).toThrow(RangeError);
    expect(() => new Supervisor({ emit, limits: { inputAckMaxWaitMs: 0 } })).toThrow(RangeError);
  });
});

describe('Supervisor: pty', () => {
  it('runs the CLI in a pty (node-pty) and records chunks', async () => {
    const { sup, rec } = create();
    const r = await sup.start('t1', launch(['--json', '--report-tty', '--lines', '3'], { io: { mode: 'pty', cols: 120, rows: 30 } }));
    expect(r).toEqual({ ok: true });
    const end = await rec.turnEnd('t1');
    expect(end.data).toEqual({ reason: 'exit', code: 0 });
    expect(rec.of('t1').find((d) => d.kind === 'spawn')).toMatchObject({ data: { pty: true } });
    const text = rec
      .of('t1')
      .filter((d) => d.kind === 'pty')
      .map((d) => (d as Extract<Draft, { kind: 'pty' }>).data.text)
      .join('');
    expect(text).toContain('{"type":"tty","stdin":true,"stdout":true}');
    expect(text).toContain('{"type":"line","n":2,"text":"line 2"}\r\n');
    expect(rec.kinds('t1').slice(-2)).toEqual(['exit', 'turn-end']);
  });

  it('a session CLI in a pty: input is written to the terminal and a matcher ends the turn', async () => {
    const { sup, rec } = create();
    const spec = echoLaunch([], { io: { mode: 'pty', cols: 200, rows: 30 } });
    await sup.start('t1', spec, prompt('p', { lines: 1 }));
    expect((await rec.turnEnd('t1')).data.reason).toBe('matched');
    expect(sup.hasLiveProcess).toBe(true);
  });

  it('paused, a pty is read on: a CLI that writes and exits while output is paused loses nothing, and its exit comes after its output', async () => {
    const { sup, rec } = create();
    sup.pause();
    await sup.start('t1', launch(['--json', '--lines', '100', '--line-bytes', '100'], { io: { mode: 'pty', cols: 200, rows: 30 } }));
    const spawn = await rec.until((d) => d.kind === 'spawn');
    const pid = spawn.kind === 'spawn' ? spawn.data.pid : 0;
    const gone = () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    for (let i = 0; i < 500 && !gone(); i++) await new Promise((r) => setTimeout(r, 20)); // a hang guard, not a pass condition
    expect(gone(), 'the CLI exited while output was paused').toBe(true);
    await new Promise((r) => setTimeout(r, 400)); // past node-pty's 200 ms between the exit and dropping an unread pty
    expect(rec.kinds('t1').filter((k) => k === 'pty' || k === 'exit'), 'nothing delivered while paused').toEqual([]);
    sup.resume();
    expect((await rec.turnEnd('t1')).data).toEqual({ reason: 'exit', code: 0 });
    const text = rec.of('t1').flatMap((d) => (d.kind === 'pty' ? [d.data.text] : [])).join('');
    for (let n = 0; n < 100; n++) expect(text).toContain(`"n":${n},`);
    expect(rec.kinds('t1').slice(-2)).toEqual(['exit', 'turn-end']);
  });

  it('a missing node-pty is a spawn-failed turn with a clear message', async () => {
    const { sup, rec } = create({ ptyImporter: () => Promise.reject(new Error("Cannot find package 'node-pty'")) });
    const r = await sup.start('t1', launch(['--json'], { io: { mode: 'pty', cols: 80, rows: 24 } }));
    expect(r).toMatchObject({ ok: false, code: 'spawn-failed' });
    if (!r.ok) expect(r.message).toMatch(/node-pty/);
    expect(rec.kinds('t1')).toEqual(['turn-start', 'turn-end']);
    expect(rec.of('t1')[1]).toMatchObject({ data: { reason: 'spawn-failed' } });
    expect(sup.state).toBe('idle');
  });
});
