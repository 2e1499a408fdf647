// A cap on the processes of one session's CLIs (docs/security.md#multi-session): a root bridge on a
// machine with the cgroup v1 pids controller makes a cgroup of the session's own
// (`<its pids cgroup>/harness-bridge/<hash of the state dir>`, pids.max = the cap), and every CLI is
// forked from the bridge's main thread while that thread alone sits in it, so the CLI and all it
// starts are born inside: no window in which a child runs uncapped, and the bridge's other threads
// stay where they were. A fork bomb in one session's CLI ends at its cap; other sessions' CLIs (the
// same uid) and bridges keep their share of the machine's processes. The CLI cannot leave it: the
// cgroup's files are root's (and read-only in the jail's mount namespace).
// Without that controller (cgroup v2 only), a CLI that runs as a uid of the session's own
// (session-uid.ts) starts under RLIMIT_NPROC = the cap, set by prlimit right before it execs: the
// kernel counts every task of that uid, and no other session has it, so the limit is the session's.
// Elsewhere (not root: every session's CLI shares the bridge's uid) there is no cap and the bridge says why.
import { createHash } from 'node:crypto';
import { accessSync, chmodSync, constants, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Tasks (threads count) one session's CLIs may hold at once: room for builds and test runners, not for a bomb. */
export const DEFAULT_SESSION_PIDS_MAX = 4096;

const PIDS_MOUNT = '/sys/fs/cgroup/pids';

export type PidsCap = {
  readonly dir: string;
  readonly max: number;
  /** Why a spawn ran uncapped (the cgroup could not be entered), newest last. */
  readonly failures: readonly string[];
  /** Runs `spawn` (a synchronous fork) with the bridge's main thread in the session's cgroup. */
  around<T>(spawn: () => T): T;
};

let current: PidsCap | undefined;
let nproc: string[] = [];

/** The argv prefix that starts a session-uid CLI under the session's RLIMIT_NPROC (none: []). */
export function nprocPrefix(): readonly string[] {
  return nproc;
}

/**
 * The fallback cap for a CLI with a uid of the session's own: RLIMIT_NPROC = `max` on that uid, set by
 * util-linux prlimit before the CLI execs (nprocPrefix). Fails when there is no prlimit.
 */
export function openNprocCap(max = DEFAULT_SESSION_PIDS_MAX): { ok: true; prlimit: string } | { ok: false; reason: string } {
  const prlimit = ['/usr/bin/prlimit', '/bin/prlimit', '/usr/sbin/prlimit'].find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (prlimit === undefined) return { ok: false, reason: 'no prlimit (util-linux) to set RLIMIT_NPROC on the session\'s uid' };
  nproc = [prlimit, `--nproc=${max}:${max}`, '--'];
  return { ok: true, prlimit };
}

/** Spawns through the session's cap when there is one (supervised-process.ts, spare-keeper.ts). */
export function spawnCapped<T>(spawn: () => T): T {
  return current === undefined ? spawn() : current.around(spawn);
}

/** Sets up the session's cap, or says why there is none. */
export function openPidsCap(stateDir: string, max = DEFAULT_SESSION_PIDS_MAX): { ok: true; cap: PidsCap } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: 'pids cgroups are Linux only' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'the bridge does not run as root, so it cannot make a pids cgroup' };
  let own: string | undefined;
  try {
    own = /^\d+:pids:(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  } catch {
    own = undefined;
  }
  if (own === undefined) return { ok: false, reason: 'no cgroup v1 pids controller (under cgroup v2 the host caps each sandbox: a pids.max on its cgroup)' };
  // Where this process sits in the mounted hierarchy: the path /proc names, or the mount's root where the
  // mount is the container's own cgroup (no cgroup namespace); elsewhere it is not ours to guess.
  const from = [join(PIDS_MOUNT, own), PIDS_MOUNT].find((dir) => holdsThisProcess(dir));
  if (from === undefined) return { ok: false, reason: `this process is not in ${join(PIDS_MOUNT, own)} as /proc/self/cgroup says` };
  const parent = join(from, 'harness-bridge');
  const dir = join(parent, `s-${createHash('sha256').update(stateDir).digest('hex').slice(0, 16)}`);
  const make = (): void => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'pids.max'), String(max));
  };
  try {
    // Sessions that are gone leave empty cgroups: removed here (a cgroup with tasks refuses rmdir).
    for (const name of readdirSync(parent, { withFileTypes: true })) {
      if (name.isDirectory() && join(parent, name.name) !== dir) {
        try {
          rmdirSync(join(parent, name.name));
        } catch {
          // still holds a session's processes
        }
      }
    }
  } catch {
    // no parent yet
  }
  try {
    make();
    chmodSync(dir, 0o755);
  } catch (error) {
    return { ok: false, reason: `cannot make the pids cgroup ${dir}: ${(error as Error).message}` };
  }
  const move = (to: string): void => writeFileSync(join(to, 'tasks'), String(process.pid));
  const failures: string[] = [];
  const cap: PidsCap = {
    dir,
    max,
    failures,
    around(spawn) {
      let moved = false;
      for (let attempt = 0; attempt < 2 && !moved; attempt++) {
        try {
          if (attempt > 0) make(); // another bridge's start removed it while it was empty
          move(dir);
          moved = true;
        } catch (error) {
          failures.push((error as Error).message);
        }
      }
      try {
        return spawn();
      } finally {
        if (moved) move(from);
      }
    },
  };
  current = cap;
  return { ok: true, cap };
}

function holdsThisProcess(dir: string): boolean {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').includes(String(process.pid));
  } catch {
    return false;
  }
}
