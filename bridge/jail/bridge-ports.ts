// The machine's bridge ports (docs/security.md#multi-session): every bridge with a jail lists its
// host-socket and MCP ports here, so an egress proxy of any session (egress-proxy.ts: a bridge's or
// a keeper's) refuses a local destination on another session's bridge even under `allow-all`. One
// file per port and bridge, `<port>.<pid>.<random>`, created exclusively: a file another uid left
// (a SIGKILLed root bridge whose port a non-root bridge now holds, or one planted by a CLI that can
// write /tmp) can neither block nor replace a bridge's own entry in this sticky dir. An entry holds
// the bridge's pid and its start time (field 22 of /proc/<pid>/stat), so the file of a bridge killed
// without its exit handler stops counting once that process is gone, also when the pid is recycled;
// each bridge removes such entries at start (those its uid may remove). An entry also names the
// bridge's network namespace: a port is that bridge's only there, and a proxy dials from its own (a
// service on the same port number in another namespace is someone else's). A jailed CLI sees the dir
// read-only, and an entry only ever closes a port.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const BRIDGE_PORTS_DIR = '/tmp/harness-bridge-ports';

/** Entries read per lookup or sweep: a dir flooded with junk costs a bounded read. */
const MAX_ENTRIES = 4096;

/** This process's network namespace (`net:[<inode>]`), or '' where /proc does not say. */
export function networkNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/net');
  } catch {
    return '';
  }
}
let ownNamespace: string | undefined;

/**
 * The dir, made sticky and world-writable; false when it cannot be trusted: not a real dir (a
 * symlink), or owned by another non-root uid, who could delete entries (root takes it back).
 */
function ensureDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o1777 });
    chmodSync(dir, 0o1777); // the umask took bits off
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  try {
    const stat = lstatSync(dir);
    if (!stat.isDirectory()) return false;
    const uid = process.getuid?.() ?? 0;
    if (stat.uid === 0 || stat.uid === uid) return true;
    if (uid !== 0) return false;
    chownSync(dir, 0, 0);
    chmodSync(dir, 0o1777);
    return true;
  } catch {
    return false;
  }
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).slice(0, MAX_ENTRIES);
  } catch {
    return [];
  }
}

/** Lists `ports` as this process's; returns the clean-up (also run at exit). Best effort: a machine without the dir only loses the cross-session refusal. */
export function registerBridgePorts(ports: readonly number[], dir = BRIDGE_PORTS_DIR): () => void {
  if (!ensureDir(dir)) return () => undefined;
  sweep(dir);
  const written: string[] = [];
  const entry = `${process.pid} ${startTime(process.pid)} ${networkNamespace()}\n`;
  for (const port of ports) {
    const file = join(dir, `${port}.${process.pid}.${randomBytes(6).toString('hex')}`);
    try {
      writeFileSync(file, entry, { mode: 0o644, flag: 'wx' });
      written.push(file);
    } catch {
      // the dir went away or is full: this port only loses the cross-session refusal
    }
  }
  let done = false;
  const release = (): void => {
    if (done) return;
    done = true;
    for (const file of written) {
      try {
        rmSync(file, { force: true });
      } catch {
        // the dir is gone or was taken from us
      }
    }
  };
  process.once('exit', release);
  return release;
}

/**
 * Whether a live bridge of this machine lists `port` (its host socket or its MCP endpoint) in this process's network
 * namespace. An entry that names none, or a process that cannot tell its own, counts wherever it is (fail closed).
 */
export function isBridgePort(port: number, dir = BRIDGE_PORTS_DIR): boolean {
  const prefix = `${port}.`;
  ownNamespace ??= networkNamespace();
  for (const name of entries(dir)) {
    if (!name.startsWith(prefix)) continue;
    const entry = readEntry(join(dir, name));
    const namespace = entry.trim().split(' ')[2] ?? '';
    if ((namespace === '' || ownNamespace === '' || namespace === ownNamespace) && live(entry)) return true;
  }
  return false;
}

/**
 * An entry's text, or '' when it is not a regular file: opened without following a link and without
 * waiting, so a FIFO or a link planted in the dir cannot stall the bridge that reads it.
 */
function readEntry(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return '';
  }
  try {
    if (!fstatSync(fd).isFile()) return '';
    const buffer = Buffer.alloc(64);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, 0));
  } catch {
    return '';
  } finally {
    closeSync(fd);
  }
}

/** An entry's process still runs: the pid exists and started when the entry says. */
function live(entry: string): boolean {
  const [pidText, started] = entry.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0 || started === undefined) return false;
  return startTime(pid) === started;
}

/** Field 22 of /proc/<pid>/stat (clock ticks after boot), or '' when there is no such process. */
export function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/** Removes the entries of bridges that are gone (those of other uids where the sticky dir lets us). */
function sweep(dir: string): void {
  for (const name of entries(dir)) {
    const file = join(dir, name);
    if (live(readEntry(file))) continue;
    try {
      rmSync(file, { force: true });
    } catch {
      // not ours to remove
    }
  }
}
