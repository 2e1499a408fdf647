// One bridge per state dir. Two bridges appending to one journal would reuse
// seqs and interleave lines, so a bridge takes `<stateDir>/bridge.lock`
// (O_EXCL) before it opens the journal and refuses to start while a live
// bridge holds it. A lock left by a SIGKILLed bridge is stale: its pid is gone,
// or the pid now belongs to another process (start time differs), and is taken
// over. The host's ladder reads the refusal (exit code 75) as "a bridge is
// still there" and attaches to it instead of replacing it.
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const STATE_LOCK_FILE = 'bridge.lock';
/** Exit code of a bridge refused because another live bridge holds the state dir (EX_TEMPFAIL). */
export const EXIT_STATE_DIR_LOCKED = 75;

type LockContent = { pid: number; startTime: string | null; bridgeId: string };

export type LockResult = { ok: true; release: () => void } | { ok: false; holder: LockContent };

/** Fields of /proc/<pid>/stat after the command name (which may itself contain spaces), or null off Linux. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // no /proc (not Linux) or the process is gone
  }
}

/** The process's start time from /proc (clock ticks since boot, field 22), or null off Linux. */
export function processStartTime(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

function alive(holder: LockContent): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // exists but is not ours to signal
  }
  const stat = procStat(holder.pid);
  if (stat === null) return holder.startTime === null; // no /proc: trust kill(0)
  // A SIGKILLed bridge that nobody reaped yet is a zombie: kill(0) still succeeds, but it holds nothing.
  if (stat[0] === 'Z' || stat[0] === 'X') return false;
  return holder.startTime === null || stat[19] === holder.startTime; // a recycled pid is not the holder
}

function readHolder(path: string): LockContent | null {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { pid, startTime, bridgeId } = parsed as Record<string, unknown>;
    if (typeof pid !== 'number' || typeof bridgeId !== 'string') return null;
    return { pid, startTime: typeof startTime === 'string' ? startTime : null, bridgeId };
  } catch {
    return null; // missing or torn (its writer died mid-write): treated as stale
  }
}

export function acquireStateLock(stateDir: string, bridgeId: string): LockResult {
  const path = join(stateDir, STATE_LOCK_FILE);
  const content: LockContent = { pid: process.pid, startTime: processStartTime(process.pid), bridgeId };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(content));
      } finally {
        closeSync(fd);
      }
      return {
        ok: true,
        release: () => {
          const holder = readHolder(path);
          if (holder?.pid === process.pid && holder.bridgeId === bridgeId) {
            try {
              unlinkSync(path);
            } catch {
              return; // already gone: nothing to release
            }
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(path);
    if (holder && alive(holder)) return { ok: false, holder };
    try {
      unlinkSync(path); // stale: its bridge is gone; a racing starter's O_EXCL decides who wins
    } catch {
      continue; // another starter removed it first: try to create again
    }
  }
  const holder = readHolder(path);
  return holder ? { ok: false, holder } : { ok: false, holder: { pid: -1, startTime: null, bridgeId: 'unknown' } };
}
