// The machine's bridge ports (docs/security.md#multi-session): every bridge with a jail lists its
// host-socket and MCP ports here, one file per port holding its pid, so an egress proxy of any
// session (egress-proxy.ts: a bridge's or a keeper's) refuses a local destination on another
// session's bridge even under `allow-all`. A bridge killed without its exit handler leaves its
// files: an entry counts while its pid lives (a recycled pid keeps a port refused, never opens one).
// The dir is the machine's /tmp, sticky and world-writable like /tmp itself: a jailed CLI sees it
// read-only, and an entry only ever closes a port.
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
  const written: string[] = [];
  for (const port of ports) {
    const file = join(dir, String(port));
    try {
      rmSync(file, { force: true }); // a stale entry of a dead bridge (ours to remove only if ours: sticky dir)
    } catch {
      // another uid's, still there: writing below fails and the port stays listed by it
    }
    try {
      writeFileSync(file, `${process.pid}\n`, { mode: 0o644 });
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
        if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
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
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, String(port)), 'utf8').trim());
  } catch {
    return false;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
