// One uid per session (docs/security.md#session-uid): a root bridge not told `--cli-user` runs its CLIs
// under a uid leased for its state dir from a range of the machine's (`harness-agent-<slot>`, uid and
// gid = base + slot), so no two sessions' CLIs share a uid: one session's CLI cannot read the other's
// handed-over files, signal its processes or connect to its 0600 sockets, whatever the mount layout.
//
// Leases are files in a root-only dir, one per slot (`<dir>/<slot>`): the state dir, the bridge holding
// it (pid + start time, as bridge-ports.ts keeps its entries) and the project dirs handed to the uid with
// the owner each had. They are read and written under an flock(2) on `<dir>/lock`, which the kernel drops
// when its holder dies (a SIGKILLed bridge never leaves the pool locked; bridges in other network
// namespaces share it, as they share the files). A lease belongs to its session: the next bridge for the
// same state dir (a restart, a resume, an adoption of a kept CLI) gets the same uid. A slot whose bridge is
// gone and under whose uid nothing runs (a kept CLI outlives its bridge) is taken back by the next session
// that needs one: before its CLI runs, what the uid owns goes back — the old state dir's areas to their dir's
// owner, each handed-over project to the owner it had, and the uid's entries in /tmp, /var/tmp and /dev/shm
// to root — so the new session inherits nothing of the old. Slots are created (useradd) only when none is
// free: the range holds as many users as sessions ever ran at once here.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AgentUser } from './agent-user.ts';
import { startTime } from './bridge-ports.ts';
import { giveBack } from './cli-dirs.ts';

export const SESSION_UID_DIR = '/var/lib/harness-bridge/cli-uids';
/** uid/gid of slot 0: far above login and system users and the usual subordinate-id ranges, below 2^31. */
export const SESSION_UID_BASE = 1_900_000_000;
export const SESSION_UID_SLOTS = 65_536;
/** World-writable dirs a CLI may leave files in, and how deep they are searched for a returning uid's. */
const SHARED_DIRS = ['/tmp', '/var/tmp', '/dev/shm'];
const sharedDepth = 8;
/** The lock is held for a scan and at most one useradd: a minute of waiting means something hangs. */
const maxLockWaitS = 60;
const maxCreateMs = 60_000;

type Owner = { uid: number; gid: number };
/** A project dir handed to the uid: the owner it goes back to, and the mode its root had. */
type Given = Owner & { path: string; mode?: number };
type Lease = {
  stateDir: string;
  pid: number;
  start: string;
  /** Project dirs handed to the uid, with the owner each gets back. */
  given: Given[];
  /**
   * The session's CLI ran outside a namespace (mode uid), where it could write the host's /tmp, /var/tmp and /dev/shm;
   * in a namespace those are read-only or private (srt), so a reclaim need not search them. Unknown (an older lease): searched.
   */
  shared?: boolean;
  /** Previous sessions': given back before the uid runs anything for this one (kept until done). */
  pending?: Array<{ stateDir: string; given: Given[]; shared?: boolean }>;
};

export type SessionUidOptions = {
  /** The lease dir (root-only). */
  dir?: string;
  base?: number;
  slots?: number;
  /** User names: `<prefix><slot>`. */
  prefix?: string;
  /** Where a taken-back uid's leftovers are looked for. */
  sharedDirs?: readonly string[];
};

export type SessionUid = {
  readonly user: AgentUser;
  readonly slot: number;
  /** The passwd entry was made for this lease. */
  readonly created: boolean;
  /** The slot was another session's: its state dir and how many entries went back to their owners. */
  readonly reclaimed?: { stateDir: string; changed: number };
  /** Records that the session's CLI runs outside a namespace (mode uid): a reclaim searches the shared dirs for its files. */
  runsUnshared(): void;
  /** Records a project dir about to be handed to the uid, and the owner and root mode it gets back when the slot changes hands. */
  handedOver(path: string, owner: Owner & { mode: number }): void;
};

export async function leaseSessionUid(stateDir: string, options: SessionUidOptions = {}): Promise<{ ok: true; uid: SessionUid } | { ok: false; reason: string }> {
  const dir = options.dir ?? SESSION_UID_DIR;
  const base = options.base ?? SESSION_UID_BASE;
  const slots = options.slots ?? SESSION_UID_SLOTS;
  const prefix = options.prefix ?? 'harness-agent-';
  const state = resolve(stateDir);
  const fail = (error: unknown) => ({ ok: false as const, reason: `no uid of the session's own: ${(error as Error).message}` });
  // A root bridge in a user namespace that maps only some uids (a rootless container) could not switch to these.
  if (!mappedRange(base, slots)) return { ok: false, reason: `no uid of the session's own: uids ${base}…${base + slots - 1} are not mapped in this user namespace (/proc/self/uid_map)` };
  let unlock: () => void;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    unlock = await lock(dir);
  } catch (error) {
    return fail(error);
  }
  let slot: number | undefined;
  let lease: Lease;
  let user: AgentUser;
  let created = false;
  try {
    const leases = readLeases(dir);
    const busy = uidsInUse();
    const passwd = readPasswd();
    lease = { stateDir: state, pid: process.pid, start: startTime(process.pid), given: [], shared: false };
    const own = leases.find(([, l]) => l.stateDir === state);
    if (own !== undefined) {
      [slot] = own;
      lease.given = own[1].given;
      lease.shared = own[1].shared !== false;
      if (own[1].pending) lease.pending = own[1].pending;
    } else {
      const stale = leases.filter(([s, l]) => !live(l) && !busy.has(base + s) && fits(passwd, base + s, `${prefix}${s}`)).sort(([a], [b]) => a - b)[0];
      if (stale !== undefined) {
        [slot] = stale;
        const old = stale[1];
        // A reclaim that did not finish (its bridge died) still owes the older sessions' files.
        lease.pending = [...(old.pending ?? []), { stateDir: old.stateDir, given: old.given, shared: old.shared !== false }];
      }
    }
    if (slot !== undefined) writeLease(join(dir, String(slot)), lease);
    else {
      const leased = new Set(leases.map(([s]) => s));
      for (let s = 0; s < slots && slot === undefined; s++) {
        if (leased.has(s) || busy.has(base + s) || !fits(passwd, base + s, `${prefix}${s}`)) continue;
        try {
          const fd = openSync(join(dir, String(s)), 'wx', 0o600);
          writeSync(fd, JSON.stringify(lease));
          closeSync(fd);
          slot = s;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
      }
      if (slot === undefined) return { ok: false, reason: `no uid of the session's own: all ${slots} session uids are leased (${dir})` };
    }
    const ensured = await ensureSlotUser(passwd, base + slot, `${prefix}${slot}`);
    if (!ensured.ok) return { ok: false, reason: `no uid of the session's own: ${ensured.reason}` };
    ({ user, created } = ensured);
  } catch (error) {
    return fail(error);
  } finally {
    unlock();
  }
  // Outside the lock (the slot is this live bridge's now): the previous session's files back to their owners.
  const file = join(dir, String(slot));
  let reclaimed: { stateDir: string; changed: number } | undefined;
  const pending = lease.pending;
  if (pending !== undefined) {
    try {
      reclaimed = { stateDir: pending.at(-1)!.stateDir, changed: giveBackAll(user.uid, pending, options.sharedDirs ?? SHARED_DIRS) };
      delete lease.pending;
      writeLease(file, lease);
    } catch (error) {
      return fail(new Error(`cannot give back what uid ${user.uid} owned for ${pending.map((p) => p.stateDir).join(', ')}: ${(error as Error).message}`));
    }
  }
  return {
    ok: true,
    uid: {
      user,
      slot,
      created,
      ...(reclaimed ? { reclaimed } : {}),
      runsUnshared() {
        if (lease.shared === true) return;
        lease.shared = true;
        writeLease(file, lease);
      },
      handedOver(path, owner) {
        const abs = resolve(path);
        if (lease.given.some((g) => g.path === abs)) return;
        lease.given = [...lease.given, { path: abs, uid: owner.uid, gid: owner.gid, mode: owner.mode }];
        writeLease(file, lease);
      },
    },
  };
}

/** The top-level entries of the old state dir (its areas) to that dir's owner, each project to its owner, the shared dirs' to root. */
function giveBackAll(uid: number, pending: ReadonlyArray<{ stateDir: string; given: Given[]; shared?: boolean }>, sharedDirs: readonly string[]): number {
  let changed = 0;
  for (const session of pending) {
    let names: string[] = [];
    let owner: Owner = { uid: 0, gid: 0 };
    try {
      const info = statSync(session.stateDir);
      owner = { uid: info.uid, gid: info.gid };
      names = readdirSync(session.stateDir);
    } catch {
      // gone: nothing of it left
    }
    // The state dir is its bridge's (0711): the uid could not have swapped these names.
    for (const name of names) changed += giveBack(join(session.stateDir, name), uid, owner).changed;
    for (const given of session.given) changed += giveBack(given.path, uid, { uid: given.uid, gid: given.gid }, given.mode === undefined ? {} : { rootMode: given.mode }).changed;
  }
  // A walk of a busy /tmp costs ~0.1 s of CPU: only where a previous session could have written there.
  if (pending.some((session) => session.shared !== false)) {
    for (const shared of sharedDirs) changed += giveBack(shared, uid, { uid: 0, gid: 0 }, { maxDepth: sharedDepth }).changed;
  }
  return changed;
}

/**
 * An exclusive flock(2) on `<dir>/lock`, taken by flock(1) on an fd this process keeps open (Node has no
 * flock): the lock belongs to the open file, so it is held until that fd closes — at unlock, or when this
 * process dies.
 */
async function lock(dir: string): Promise<() => void> {
  const fd = openSync(join(dir, 'lock'), constants.O_RDWR | constants.O_CREAT, 0o600);
  const failed = await new Promise<string | undefined>((done) => {
    const child = spawn('flock', ['-x', '-w', String(maxLockWaitS), '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-300)));
    child.once('error', (error) => done(`flock could not be run: ${error.message}`));
    child.once('close', (code, signal) => done(code === 0 ? undefined : `flock on ${join(dir, 'lock')}: ${stderr.trim() || `exit ${code ?? signal}`}`));
  });
  if (failed !== undefined) {
    closeSync(fd);
    throw new Error(failed);
  }
  return () => closeSync(fd);
}

function readLeases(dir: string): Array<[number, Lease]> {
  const out: Array<[number, Lease]> = [];
  for (const name of readdirSync(dir)) {
    if (!/^\d{1,6}$/.test(name)) continue;
    const lease = readLease(join(dir, name));
    if (lease) out.push([Number(name), lease]);
  }
  return out;
}

function readLease(file: string): Lease | undefined {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<Lease> & { paths?: unknown };
    if (typeof value.stateDir !== 'string' || typeof value.pid !== 'number' || typeof value.start !== 'string') return undefined;
    const givenOf = (list: unknown): Given[] =>
      Array.isArray(list)
        ? list
            .filter((g): g is Given => typeof g?.path === 'string' && Number.isSafeInteger(g.uid) && Number.isSafeInteger(g.gid))
            .map((g) => ({ path: g.path, uid: g.uid, gid: g.gid, ...(Number.isSafeInteger(g.mode) ? { mode: g.mode } : {}) }))
        : [];
    // A lease that lists bare paths names no owners: they go back to root.
    const bare = Array.isArray(value.paths) ? value.paths.filter((p): p is string => typeof p === 'string').map((path) => ({ path, uid: 0, gid: 0 })) : [];
    const pending = Array.isArray(value.pending)
      ? value.pending.filter((p) => typeof p?.stateDir === 'string').map((p) => ({ stateDir: p.stateDir, given: givenOf(p.given), ...(typeof p.shared === 'boolean' ? { shared: p.shared } : {}) }))
      : undefined;
    const shared = typeof value.shared === 'boolean' ? { shared: value.shared } : {};
    return { stateDir: value.stateDir, pid: value.pid, start: value.start, given: [...givenOf(value.given), ...bare], ...shared, ...(pending ? { pending } : {}) };
  } catch {
    return undefined;
  }
}

function writeLease(file: string, lease: Lease): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(lease), { mode: 0o600 });
  renameSync(temp, file);
}

/** The lease's bridge still runs (same pid, same start time). */
function live(lease: Lease): boolean {
  return lease.pid > 0 && lease.start !== '' && startTime(lease.pid) === lease.start;
}

/** Every real, effective, saved and file-system uid of a running process (a zombie's too). */
function uidsInUse(): Set<number> {
  const uids = new Set<number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const line = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      for (const uid of line?.trim().split(/\s+/) ?? []) uids.add(Number(uid));
    } catch {
      // exited
    }
  }
  return uids;
}

/** Every uid in [first, first + count) is mapped in this process's user namespace (no uid_map: no namespaces, all are). */
function mappedRange(first: number, count: number): boolean {
  let text: string;
  try {
    text = readFileSync('/proc/self/uid_map', 'utf8');
  } catch {
    return true;
  }
  return text
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number))
    .some(([inside, , length]) => inside !== undefined && length !== undefined && inside <= first && first + count <= inside + length);
}

type Passwd = { byUid: Map<number, string>; byName: Map<string, number> };

function readPasswd(): Passwd {
  const byUid = new Map<number, string>();
  const byName = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // none: every slot is created
  }
  for (const line of text.split('\n')) {
    const [name, , uidText] = line.split(':');
    if (!name || uidText === undefined || uidText === '') continue;
    const uid = Number(uidText);
    if (!Number.isSafeInteger(uid)) continue;
    if (!byUid.has(uid)) byUid.set(uid, name);
    byName.set(name, uid);
  }
  return { byUid, byName };
}

/** The slot's uid and name are free, or already each other's. */
function fits(passwd: Passwd, uid: number, name: string): boolean {
  const owner = passwd.byUid.get(uid);
  const id = passwd.byName.get(name);
  return (owner === undefined || owner === name) && (id === undefined || id === uid);
}

/** The slot's passwd entry (name `name`, uid = gid = `id`), created when missing; useradd is retried while another holds /etc/passwd's lock. */
async function ensureSlotUser(passwd: Passwd, id: number, name: string): Promise<{ ok: true; user: AgentUser; created: boolean } | { ok: false; reason: string }> {
  if (passwd.byUid.get(id) === name) return { ok: true, user: { name, uid: id, gid: id }, created: false };
  const attempts: Array<[string, string[]]> = [
    // -l: no lastlog/faillog record (a sparse file sized by the uid).
    ['sh', ['-c', 'groupadd -g "$1" "$0" 2>/dev/null; useradd -u "$1" -g "$1" -M -N -l -d /nonexistent -s /usr/sbin/nologin "$0"', name, String(id)]],
    ['sh', ['-c', 'addgroup -g "$1" "$0" 2>/dev/null; adduser -u "$1" -G "$0" -S -D -H -h /nonexistent -s /sbin/nologin "$0"', name, String(id)]],
  ];
  const errors: string[] = [];
  for (let round = 0; round < 5; round++) {
    for (const [command, args] of attempts) {
      const run = spawnSync(command, args, { encoding: 'utf8', timeout: maxCreateMs, stdio: ['ignore', 'ignore', 'pipe'] });
      if (readPasswd().byUid.get(id) === name) return { ok: true, user: { name, uid: id, gid: id }, created: true };
      errors.push(run.error?.message ?? (run.stderr.trim() || `exit ${run.status}`));
    }
    // Another tool (or a bridge's --cli-user useradd) may hold /etc/passwd's lock for a moment.
    if (!errors.some((e) => /lock/i.test(e))) break;
    await new Promise((done) => setTimeout(done, 100 + Math.floor(Math.random() * 200)));
  }
  return { ok: false, reason: `cannot create the session user ${name} (${[...new Set(errors)].slice(0, 3).join('; ')})` };
}
