// The directories a jailed CLI may write (docs/security.md#what-the-cli-may-write): its project
// dir (the launch's cwd), its own areas inside the state dir (the top-level entries of the state
// dir its launch names: adapters keep the CLI's HOME and config there, e.g. `claude-home`), a
// HOME and a TMPDIR of its own when the launch names none. Everything else in the state dir is
// the bridge's (token, journal, bridge.json, bridge.lock, bridge.log, keepers/, jail/) and a
// launch naming one of those is refused. With a CLI uid, these dirs are handed to that uid;
// the state dir itself becomes 0711 (traversable, not listable) so the CLI reaches its areas.
import { chmodSync, closeSync, constants, fchmodSync, fchownSync, fstatSync, mkdirSync, opendirSync, openSync, statSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { AgentUser } from './agent-user.ts';

/** Names in the state dir that are the bridge's; no launch may name them. */
export function isBridgeName(name: string): boolean {
  return /^(token|journal|bridge)/.test(name) || name === 'keepers' || name === 'jail' || name === 'network';
}

/** HOME and TMPDIR for a CLI whose launch names none (areas like any other). */
export const DEFAULT_AREAS = { home: 'home', tmp: 'tmp' } as const;

/** Roots the bridge never hands to a CLI uid, whatever a launch's cwd says. */
const systemRoots = ['/', '/bin', '/boot', '/dev', '/etc', '/lib', '/lib64', '/proc', '/root', '/run', '/sbin', '/sys', '/usr', '/var', '/var/lib', '/home', '/tmp', '/opt', '/srv'];

export type CliDirs = {
  /** Top-level entries of the state dir the CLI owns (absolute). */
  readonly areas: string[];
  /** The project dir: the launch's cwd when it is outside the state dir. */
  readonly project: string | undefined;
  /** HOME / TMPDIR to set when the launch has none. */
  readonly env: Record<string, string>;
};

function inside(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Absolute paths a launch names: cwd, argv entries (and `--opt=/path` values), env values (and `:`-lists). */
function namedPaths(launch: LaunchSpec): string[] {
  const out: string[] = [];
  const take = (value: string) => {
    for (const part of value.split(/[:=]/)) if (isAbsolute(part) && !part.includes('\0')) out.push(resolve(part));
  };
  if (launch.cwd !== undefined) take(launch.cwd);
  for (const arg of launch.argv) take(arg);
  for (const value of Object.values(launch.env ?? {})) take(value);
  return out;
}

/** What `launch` may write, or why it is refused. */
export function cliDirs(launch: LaunchSpec, stateDir: string): { ok: true; dirs: CliDirs } | { ok: false; message: string } {
  const state = resolve(stateDir);
  const areas = new Set<string>();
  for (const path of namedPaths(launch)) {
    if (!inside(state, path)) continue;
    if (path === state) return { ok: false, message: `the launch names the bridge's state dir ${state} itself; a CLI gets paths inside it, never the dir` };
    const name = path.slice(state.length + 1).split(sep)[0]!;
    if (isBridgeName(name)) return { ok: false, message: `the launch names ${join(state, name)}, which is the bridge's own (token, journal and logs are never the CLI's)` };
    areas.add(join(state, name));
  }
  const env: Record<string, string> = {};
  if (launch.env?.HOME === undefined) {
    env.HOME = join(state, DEFAULT_AREAS.home);
    areas.add(env.HOME);
  }
  if (launch.env?.TMPDIR === undefined) {
    env.TMPDIR = join(state, DEFAULT_AREAS.tmp);
    areas.add(env.TMPDIR);
  }
  const cwd = launch.cwd === undefined ? undefined : resolve(launch.cwd);
  const project = cwd !== undefined && !inside(state, cwd) ? cwd : undefined;
  return { ok: true, dirs: { areas: [...areas], project, env } };
}

/** Why `dir` must not be handed to a CLI uid, or undefined when it may be. */
export function handOverRefusal(dir: string, keep: readonly string[]): string | undefined {
  if (systemRoots.includes(dir)) return `${dir} is a system directory`;
  for (const kept of keep) {
    if (inside(dir, kept)) return `${dir} contains ${kept}, which stays the bridge's`;
    if (inside(kept, dir)) return `${dir} is inside ${kept}, which stays the bridge's`;
  }
  return undefined;
}

/**
 * Makes `dir` and everything below it owned by `user`, without following symlinks and without
 * entering `skip` paths or `.harness-bridge` dirs. A regular file with more than one hard link is
 * left alone: it may be another name for a file outside the tree.
 *
 * Race-free against a CLI that swaps entries under it (docs/security.md#what-the-cli-may-write): the
 * walk holds each directory open and reaches a child only through its parent's fd
 * (`/proc/self/fd/<dir>/<name>`, the openat(2) Node lacks: the magic link is the open directory
 * itself, not a path looked up again), opened with O_NOFOLLOW, and changes the owner of the fd it
 * opened (fchown). A name swapped for a symlink fails the open (ELOOP) and is skipped; a directory
 * swapped for a symlink to elsewhere is never entered. Only directories and regular files are
 * opened (O_NONBLOCK: a file swapped for a FIFO does not block); symlinks, sockets and FIFOs keep
 * their owner (a symlink's owner gives no rights; the CLI can replace them in its own dirs).
 */
export function handOver(dir: string, user: AgentUser, skip: readonly string[]): { changed: number } {
  return walkOwners(dir, {
    take: (info) => !(info.uid === user.uid && info.gid === user.gid) && !(info.isFile() && info.nlink > 1),
    enter: () => true,
    skip: (child, name) => name === '.harness-bridge' || skip.some((s) => inside(s, child) || inside(child, s)),
    to: user,
    missing: 'throw',
  });
}

/**
 * Gives what `from` owns in `dir` (the dir included) to `to`: a session uid's files, before that uid
 * serves another session (session-uid.ts). `from` can only have made entries in dirs it owned or that
 * anyone may write, so only those are entered (`/tmp` is walked the same way, `maxDepth` deep). The
 * same fd-based walk as handOver; files of `from` with several links are taken too (`from` can link
 * only its own files).
 */
export function giveBack(dir: string, from: number, to: { uid: number; gid: number }, options: { maxDepth?: number; rootMode?: number } = {}): { changed: number } {
  const maxDepth = options.maxDepth ?? Infinity;
  return walkOwners(dir, {
    take: (info) => info.uid === from,
    enter: (info, depth) => depth < maxDepth && (info.uid === from || (info.mode & 0o002) !== 0),
    skip: () => false,
    to,
    missing: 'nothing',
    ...(options.rootMode === undefined ? {} : { rootMode: options.rootMode }),
  });
}

/** Takes group and other access off `dir` itself (through an fd: a symlink is refused); returns the mode it had. */
export function closeToOthers(dir: string): number {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY);
  try {
    const mode = fstatSync(fd).mode & 0o7777;
    if ((mode & 0o077) !== 0) fchmodSync(fd, mode & ~0o077);
    return mode;
  } finally {
    closeSync(fd);
  }
}

type Walk = {
  /** Whether to change this entry's owner. */
  take(info: Stats): boolean;
  /** Whether to walk into this directory (as it was before any change), `depth` below the root. */
  enter(info: Stats, depth: number): boolean;
  skip(path: string, name: string): boolean;
  to: { uid: number; gid: number };
  /** A root that is not there (or a symlink): an error, or nothing to do. */
  missing: 'throw' | 'nothing';
  /** The mode the root gets when its owner is changed. */
  rootMode?: number;
};

function walkOwners(dir: string, walk: Walk): { changed: number } {
  let changed = 0;
  // Entries may vanish or change while we walk (a running CLI's, or the mount-point files a jail makes and removes).
  const skipped = (error: unknown) => ['ENOENT', 'ELOOP', 'ENOTDIR', 'ENXIO', 'EOPNOTSUPP'].includes((error as NodeJS.ErrnoException).code ?? '');
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
  const take = (fd: number, info: Stats) => {
    if (!walk.take(info)) return;
    fchownSync(fd, walk.to.uid, walk.to.gid);
    changed++;
  };
  const visit = (dirFd: number, path: string, depth: number) => {
    const names: string[] = [];
    const handle = opendirSync(`/proc/self/fd/${dirFd}`);
    try {
      for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
        if (entry.isDirectory() || entry.isFile()) names.push(entry.name);
      }
    } finally {
      handle.closeSync();
    }
    for (const name of names) {
      const child = join(path, name);
      if (walk.skip(child, name)) continue;
      let fd: number;
      try {
        fd = openSync(`/proc/self/fd/${dirFd}/${name}`, flags);
      } catch (error) {
        if (skipped(error)) continue;
        throw error;
      }
      try {
        const info = fstatSync(fd);
        if (!info.isDirectory() && !info.isFile()) continue;
        take(fd, info);
        if (info.isDirectory() && walk.enter(info, depth + 1)) visit(fd, child, depth + 1);
      } finally {
        closeSync(fd);
      }
    }
  };
  let rootFd: number;
  try {
    rootFd = openSync(dir, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_DIRECTORY);
  } catch (error) {
    if (walk.missing === 'nothing' && skipped(error)) return { changed };
    throw error;
  }
  try {
    const info = fstatSync(rootFd);
    const before = changed;
    take(rootFd, info);
    if (walk.rootMode !== undefined && changed > before) fchmodSync(rootFd, walk.rootMode);
    if (walk.enter(info, 0)) visit(rootFd, dir, 0);
  } finally {
    closeSync(rootFd);
  }
  return { changed };
}

/** Creates an area (0700) owned by `user`, or hands an existing one over. */
export function prepareArea(area: string, user: AgentUser | undefined): void {
  mkdirSync(area, { recursive: true, mode: 0o700 });
  if (user) handOver(area, user, []);
}

/**
 * The first directory on the way to `path` that `user` cannot search (x), or undefined. Supplementary
 * groups do not count: a CLI spawned under a uid has none.
 */
export function blockedAncestor(path: string, user: AgentUser): { dir: string; mode: number } | undefined {
  let dir = dirname(resolve(path));
  const chain: string[] = [];
  for (;;) {
    chain.unshift(dir);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  for (const d of chain) {
    let info: Stats;
    try {
      info = statSync(d);
    } catch {
      return undefined; // missing: the spawn reports it
    }
    const bit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return { dir: d, mode: info.mode & 0o777 };
  }
  return undefined;
}

/** The state dir and its ancestors up to the nearest `.harness-bridge` (the kit's own dirs) get o+x when this process owns them. */
export function openStateDirPath(stateDir: string): void {
  let dir = resolve(stateDir);
  for (;;) {
    let info: Stats;
    try {
      info = statSync(dir);
    } catch {
      return;
    }
    if (info.uid !== process.getuid?.()) return;
    if ((info.mode & 0o001) === 0) chmodSync(dir, (info.mode & 0o7777) | 0o011);
    if (dir.endsWith(`${sep}.harness-bridge`)) return;
    const up = dirname(dir);
    if (up === dir || !inside(up, dir) || up.split(sep).length < 3) return;
    // Only the chain inside a `.harness-bridge` dir: stop at the first ancestor that is not in one.
    if (!up.split(sep).includes('.harness-bridge')) return;
    dir = up;
  }
}
