// The machine's bridge ports (docs/security.md#multi-session): every bridge with a jail lists its
// host-socket and MCP ports here, one file per port holding its pid, so an egress proxy of any
// session (egress-proxy.ts: a bridge's or a keeper's) refuses a local destination on another
// session's bridge even under `allow-all`. An entry holds the bridge's pid and its start time (field
// 22 of /proc/<pid>/stat), so the file of a bridge killed without its exit handler stops counting
// once that process is gone, also when the pid is recycled; each bridge removes such entries at start.
// The dir is the machine's /tmp, sticky and world-writable like /tmp itself: a jailed CLI sees it
// read-only, and an entry only ever closes a port.
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const BRIDGE_PORTS_DIR = '/tmp/harness-bridge-ports';

function ensureDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: 0o1777 });
    chmodSync(dir, 0o1777); // the umask took bits off
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Lists `ports` as this process's; returns the clean-up (also run at exit). Best effort: a machine without the dir only loses the cross-session refusal. */
export function registerBridgePorts(ports: readonly number[], dir = BRIDGE_PORTS_DIR): () => void {
  if (!ensureDir(dir)) return () => undefined;
  sweep(dir);
  const written: string[] = [];
  for (const port of ports) {
    const file = join(dir, String(port));
    try {
      rmSync(file, { force: true }); // a stale entry of a dead bridge (ours to remove only if ours: sticky dir)
    } catch {
      // another uid's, still there: writing below fails and the port stays listed by it
    }
    try {
      writeFileSync(file, `${process.pid} ${startTime(process.pid)}\n`, { mode: 0o644 });
      written.push(file);
    } catch {
      // listed by another uid's entry already
    }
  }
  let done = false;
  const release = (): void => {
    if (done) return;
    done = true;
    for (const file of written) {
      try {
        if (readFileSync(file, 'utf8').split(' ')[0] === String(process.pid)) rmSync(file, { force: true });
      } catch {
        // gone already
      }
    }
  };
  process.once('exit', release);
  return release;
}

/** Whether a live bridge of this machine lists `port` (its host socket or its MCP endpoint). */
export function isBridgePort(port: number, dir = BRIDGE_PORTS_DIR): boolean {
  try {
    return live(readFileSync(join(dir, String(port)), 'utf8'));
  } catch {
    return false;
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
  let names: string[];
  try {
    names = readdirSync(dir).slice(0, 4096);
  } catch {
    return;
  }
  for (const name of names) {
    const file = join(dir, name);
    try {
      if (!live(readFileSync(file, 'utf8'))) rmSync(file, { force: true });
    } catch {
      // gone, or not ours to remove
    }
  }
}
