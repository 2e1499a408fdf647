// One bridge per state dir. Two bridges appending to one journal would reuse
// seqs and interleave lines, so a bridge holds the state dir's lock before it
// opens the journal and refuses to start while a live bridge holds it. The host's
// ladder reads the refusal (exit code 75) as "a bridge is still there" and
// attaches to it instead of replacing it.
//
// The lock is a chain of generations, `bridge.lock.<n>`: the writer of the highest
// n holds it while its process lives (pid and start time: a SIGKILLed bridge, a
// zombie or a recycled pid holds nothing). A bridge takes over a dead holder's
// generation n by creating n + 1, and only one can: each is made by link(2) of a
// fully written draft, which fails if the name exists. Removing a dead holder's
// file and creating the same name again, as a single lock file would need, lets
// two starters that both saw it dead each remove what the other just created and
// both run. So no generation is ever made twice: a holder's file stays after it
// exits (a clean exit empties it, which reads as released), and only files
// behind the newest are removed.
import { closeSync, linkSync, openSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Prefix of the lock's generation files (and of starters' drafts). */
export const STATE_LOCK_FILE = 'bridge.lock';
/** Exit code of a bridge refused because another live bridge holds the state dir (EX_TEMPFAIL). */
export const EXIT_STATE_DIR_LOCKED = 75;

type LockContent = { pid: number; startTime: string | null; bridgeId: string };

export type LockResult = { ok: true; release: () => void } | { ok: false; holder: LockContent };

/** Rounds of look, judge, create before a starter gives up (each lost round means another starter won one). */
const maxRounds = 32;

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

/** The file's holder; `gone` when the file is missing, null when it names none (released, or not a holder's content). */
function readHolder(path: string): LockContent | null | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error; // a lock the bridge cannot read is no reason to guess that nobody holds it
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { pid, startTime, bridgeId } = parsed as Record<string, unknown>;
    if (typeof pid !== 'number' || typeof bridgeId !== 'string') return null;
    return { pid, startTime: typeof startTime === 'string' ? startTime : null, bridgeId };
  } catch {
    return null; // not a holder's content (a generation is linked only once written whole)
  }
}

const generationOf = (name: string): number | undefined => {
  const match = /^bridge\.lock\.([1-9][0-9]{0,14})$/.exec(name);
  return match ? Number(match[1]) : undefined;
};

/** Generations present in the state dir, highest first. */
function generations(stateDir: string): number[] {
  return readdirSync(stateDir)
    .map(generationOf)
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => b - a);
}

const generationPath = (stateDir: string, n: number) => join(stateDir, `${STATE_LOCK_FILE}.${n}`);

export function acquireStateLock(stateDir: string, bridgeId: string): LockResult {
  const content: LockContent = { pid: process.pid, startTime: processStartTime(process.pid), bridgeId };
  const draft = join(stateDir, `${STATE_LOCK_FILE}.draft-${bridgeId}`);
  const fd = openSync(draft, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify(content));
  } finally {
    closeSync(fd);
  }
  let holder: LockContent | undefined;
  try {
    // A bridge of a version before the generations holds the single file, and knows nothing of the chain.
    const single = readHolder(join(stateDir, STATE_LOCK_FILE));
    if (single !== null && single !== 'gone' && alive(single)) return { ok: false, holder: single };
    for (let round = 0; round < maxRounds; round++) {
      const top = generations(stateDir)[0] ?? 0;
      if (top > 0) {
        const found = readHolder(generationPath(stateDir, top));
        if (found === 'gone') continue; // its successor removed it: look again
        if (found !== null && alive(found)) return { ok: false, holder: found };
      }
      const mine = generationPath(stateDir, top + 1);
      try {
        linkSync(draft, mine);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue; // another starter took this generation
        throw error;
      }
      // A generation above ours means ours had been made and removed before (we looked at a chain since moved on).
      if ((generations(stateDir)[0] ?? 0) > top + 1) {
        unlinkSync(mine);
        continue;
      }
      removeBehind(stateDir, top + 1);
      return { ok: true, release: () => release(mine, content) };
    }
    const top = generations(stateDir)[0];
    const last = top === undefined ? null : readHolder(generationPath(stateDir, top));
    holder = last !== null && last !== 'gone' ? last : undefined;
  } finally {
    rmSync(draft, { force: true });
  }
  return { ok: false, holder: holder ?? { pid: -1, startTime: null, bridgeId: 'unknown' } };
}

/** The generations below the holder's, and drafts whose starters died between writing and removing them. */
function removeBehind(stateDir: string, held: number): void {
  for (const name of readdirSync(stateDir)) {
    const n = generationOf(name);
    const draft = n === undefined && name.startsWith(`${STATE_LOCK_FILE}.draft-`);
    if (n === undefined ? !draft : n >= held) continue;
    try {
      // A draft is removed only once it names a starter that is gone (an empty one may be being written).
      const starter = draft ? readHolder(join(stateDir, name)) : undefined;
      if (starter === 'gone' || starter === null || (starter !== undefined && alive(starter))) continue;
      unlinkSync(join(stateDir, name));
    } catch {
      // removed by another, or unreadable: left for a later holder
    }
  }
}

/**
 * A clean exit empties its generation: released even where a pid cannot be told from a recycled one (no /proc).
 * The file stays, so its number is never made again; a crash leaves it naming a dead holder, taken over as stale.
 */
function release(path: string, content: LockContent): void {
  try {
    const holder = readHolder(path);
    if (holder === null || holder === 'gone' || holder.pid !== content.pid || holder.bridgeId !== content.bridgeId) return;
    writeFileSync(path, '');
  } catch {
    // the state dir is gone or unwritable: the generation still names this process, dead once it exits
  }
}
