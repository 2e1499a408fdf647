import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, stop as stopEsbuild } from 'esbuild';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acquireStateLock, processStartTime, STATE_LOCK_FILE } from '../../bridge/journal/state-lock.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hb-lock-'));
  dirs.push(dir);
  return dir;
}

describe('bridge state-dir lock', () => {
  it('the first bridge takes the lock; a second is refused while the first lives; release frees it', () => {
    const dir = stateDir();
    const first = acquireStateLock(dir, 'bridge-a');
    expect(first.ok).toBe(true);
    const second = acquireStateLock(dir, 'bridge-b');
    expect(second).toMatchObject({ ok: false, holder: { pid: process.pid, bridgeId: 'bridge-a' } });
    if (first.ok) first.release();
    expect(readFileSync(join(dir, `${STATE_LOCK_FILE}.1`), 'utf8'), 'released: the generation stays, naming no holder').toBe('');
    expect(acquireStateLock(dir, 'bridge-b').ok).toBe(true);
  });

  it('takes over a lock left by a killed bridge (its pid is gone)', async () => {
    const dir = stateDir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    const pid = child.pid!;
    writeFileSync(join(dir, `${STATE_LOCK_FILE}.1`), JSON.stringify({ pid, startTime: processStartTime(pid), bridgeId: 'dead' }));
    expect(acquireStateLock(dir, 'new').ok, 'the holder is still alive').toBe(false);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const taken = acquireStateLock(dir, 'new');
    expect(taken.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, `${STATE_LOCK_FILE}.2`), 'utf8')).bridgeId).toBe('new');
    expect(readdirSync(dir), 'the dead generation removed').toEqual([`${STATE_LOCK_FILE}.2`]);
  });

  it('is refused while a bridge of an earlier version holds the single lock file, and ignores that file once its holder is gone', async () => {
    const dir = stateDir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    const pid = child.pid!;
    writeFileSync(join(dir, STATE_LOCK_FILE), JSON.stringify({ pid, startTime: processStartTime(pid), bridgeId: 'earlier' }));
    expect(acquireStateLock(dir, 'new')).toMatchObject({ ok: false, holder: { pid, bridgeId: 'earlier' } });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(acquireStateLock(dir, 'new').ok).toBe(true);
  });

  it('takes over a lock whose holder was SIGKILLed but not yet reaped (a zombie still answers kill(0))', async () => {
    const dir = stateDir();
    // The holder's parent never reaps it (an exec'd `sleep`), so once killed it stays a zombie.
    const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60']);
    const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d).trim()))));
    writeFileSync(join(dir, `${STATE_LOCK_FILE}.1`), JSON.stringify({ pid, startTime: processStartTime(pid), bridgeId: 'killed' }));
    expect(acquireStateLock(dir, 'new').ok, 'the holder is alive').toBe(false);
    // Kill only once sh has exec'd into the non-reaping sleep: a sh still running may reap the killed child itself.
    for (let i = 0; i < 200 && !readFileSync(`/proc/${parent.pid}/cmdline`, 'utf8').startsWith('sleep\0'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(readFileSync(`/proc/${parent.pid}/cmdline`, 'utf8'), 'the parent is the exec\'d sleep').toMatch(/^sleep\0/);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '); i++) await new Promise((r) => setTimeout(r, 20));
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8'), 'the holder is a zombie now').toContain(') Z ');
    try {
      expect(acquireStateLock(dir, 'new').ok).toBe(true);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('treats a recycled pid (same pid, other start time) and a lock file naming no holder as stale; removes dead starters\' drafts', () => {
    const dir = stateDir();
    writeFileSync(join(dir, `${STATE_LOCK_FILE}.1`), JSON.stringify({ pid: process.pid, startTime: '1', bridgeId: 'old' }));
    expect(acquireStateLock(dir, 'new').ok).toBe(true);
    const drafts = stateDir();
    writeFileSync(join(drafts, `${STATE_LOCK_FILE}.draft-dead`), JSON.stringify({ pid: process.pid, startTime: '1', bridgeId: 'dead' }));
    writeFileSync(join(drafts, `${STATE_LOCK_FILE}.draft-writing`), '');
    expect(acquireStateLock(drafts, 'new').ok).toBe(true);
    expect(readdirSync(drafts).sort(), 'a dead starter\'s draft removed, one still being written kept').toEqual([`${STATE_LOCK_FILE}.1`, `${STATE_LOCK_FILE}.draft-writing`]);
    const torn = stateDir();
    writeFileSync(join(torn, `${STATE_LOCK_FILE}.1`), '{"pid":12');
    expect(acquireStateLock(torn, 'new').ok).toBe(true);
  });
});

// Starters racing for one state dir, as real processes: the module bundled, each process waiting for one
// moment to try, a winner holding the lock (alive) while the others judge it, then SIGKILLed so the next
// round races over the lock it left.
describe('bridge state-dir lock: starters racing', () => {
  let bundle: string;
  beforeAll(async () => {
    const dir = stateDir();
    bundle = join(dir, 'state-lock.mjs');
    await build({ entryPoints: [join(import.meta.dirname, '../../bridge/journal/state-lock.ts')], outfile: bundle, bundle: true, platform: 'node', format: 'esm', logLevel: 'error' });
    await stopEsbuild();
  });

  const starter = `
    const { acquireStateLock } = await import(process.argv[1]);
    const [dir, id] = process.argv.slice(2);
    process.stdout.write('ready\\n');
    process.stdin.once('data', (at) => {
      while (Date.now() < Number(at)) {} // every starter tries at the same moment
      const result = acquireStateLock(dir, id);
      process.stdout.write((result.ok ? 'held' : 'refused') + '\\n');
    });`;

  it('exactly one of 6 starters holds it, round after round, each round over the lock the killed winner left', async () => {
    const dir = stateDir();
    const rounds = 12;
    const holders: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const children = Array.from({ length: 6 }, (_, i) =>
        spawn(process.execPath, ['--input-type=module', '-e', starter, bundle, dir, `r${round}-s${i}`], { stdio: ['pipe', 'pipe', 'inherit'] }),
      );
      const lines = children.map((child) => {
        const said: string[] = [];
        child.stdout.setEncoding('utf8').on('data', (d: string) => said.push(...d.split('\n').filter(Boolean)));
        return said;
      });
      const saidAll = async (n: number) => {
        for (let i = 0; i < 1_000 && lines.some((said) => said.length < n); i++) await new Promise((r) => setTimeout(r, 10));
      };
      await saidAll(1);
      const at = Date.now() + 100;
      for (const child of children) child.stdin.write(String(at));
      await saidAll(2);
      const results = lines.map((said) => said[1]);
      holders.push(results.filter((r) => r === 'held').length);
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(children.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((r) => child.once('exit', r)))));
      expect(results.every((r) => r === 'held' || r === 'refused'), results.join(',')).toBe(true);
    }
    expect(holders, 'holders per round').toEqual(Array.from({ length: rounds }, () => 1));
    // Generations behind the newest are removed by its holder; no draft is left.
    expect(readdirSync(dir).filter((name) => name.startsWith('bridge.lock')).length).toBeLessThanOrEqual(2);
  });
});
