import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
    expect(existsSync(join(dir, STATE_LOCK_FILE))).toBe(false);
    expect(acquireStateLock(dir, 'bridge-b').ok).toBe(true);
  });

  it('takes over a lock left by a killed bridge (its pid is gone)', async () => {
    const dir = stateDir();
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    const pid = child.pid!;
    writeFileSync(join(dir, STATE_LOCK_FILE), JSON.stringify({ pid, startTime: processStartTime(pid), bridgeId: 'dead' }));
    expect(acquireStateLock(dir, 'new').ok, 'the holder is still alive').toBe(false);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const taken = acquireStateLock(dir, 'new');
    expect(taken.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, STATE_LOCK_FILE), 'utf8')).bridgeId).toBe('new');
  });

  it('takes over a lock whose holder was SIGKILLed but not yet reaped (a zombie still answers kill(0))', async () => {
    const dir = stateDir();
    // The holder's parent never reaps it (an exec'd `sleep`), so once killed it stays a zombie.
    const parent = spawn('sh', ['-c', 'sleep 60 & echo $!; exec sleep 60']);
    const pid = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d).trim()))));
    writeFileSync(join(dir, STATE_LOCK_FILE), JSON.stringify({ pid, startTime: processStartTime(pid), bridgeId: 'killed' }));
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

  it('treats a recycled pid (same pid, other start time) and a torn lock file as stale', () => {
    const dir = stateDir();
    writeFileSync(join(dir, STATE_LOCK_FILE), JSON.stringify({ pid: process.pid, startTime: '1', bridgeId: 'old' }));
    expect(acquireStateLock(dir, 'new').ok).toBe(true);
    const torn = stateDir();
    writeFileSync(join(torn, STATE_LOCK_FILE), '{"pid":12');
    expect(acquireStateLock(torn, 'new').ok).toBe(true);
  });
});
