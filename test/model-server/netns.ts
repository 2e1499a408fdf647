// Runs the scripted model server in its own loopback-only network namespace (root only) and
// wraps other commands with `nsenter` so they join it: nothing they do can leave the machine.
// Without root/unshare/nsenter/ip it falls back to a plain child process and says why.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RecordedRequest } from './server.ts';

const mainTs = join(dirname(fileURLToPath(import.meta.url)), 'main.ts');
// The server prints its ready line in well under a second; 20 s means it is broken.
const maxStartMs = 20_000;

export interface IsolatedModelServer {
  /** `http://<hostName or 127.0.0.1>:<port>`: what a command inside the namespace dials. */
  url: string;
  /** The name the model answers to inside the namespace (its own /etc/hosts maps it to loopback), when asked for one. */
  hostName?: string;
  port: number;
  /** True when the server (and wrapped commands) run in a private loopback-only netns. */
  isolated: boolean;
  /** Why isolation was not used (when `isolated` is false). */
  reason?: string;
  /**
   * Rewrite a command so it runs inside the server's namespace (identity when not isolated). `cwd`: the
   * directory it runs in, which entering a mount namespace (with `hostName`) would otherwise reset to /.
   */
  wrap(cmd: string, args: string[], cwd?: string): { cmd: string; args: string[] };
  /** Requests recorded so far, read from the JSONL log. */
  requests(): RecordedRequest[];
  close(): Promise<void>;
}

/** Whether a loopback-only namespace can be made here; if not, the reason. */
export function netnsSupport(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: `platform ${process.platform} has no network namespaces` };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'not running as root (unshare -n and nsenter need it)' };
  for (const tool of ['unshare', 'nsenter', 'ip']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return { ok: false, reason: `${tool} is not installed` };
  }
  const probe = spawnSync('unshare', ['-n', '--', 'ip', 'link', 'set', 'lo', 'up'], { timeout: 10_000 });
  if (probe.status !== 0) return { ok: false, reason: `unshare -n failed: ${String(probe.stderr).trim() || `status ${probe.status}`}` };
  return { ok: true };
}

/**
 * `profiles`: `--profile` values for main.ts (reference profile names or module paths); default: the
 * reference profiles. A module is imported by the server process, inside the namespace.
 * `hostName` (a name under .test): the namespace also gets a mount namespace whose /etc/hosts maps it
 * to 127.0.0.1, and `url` names it — so a network policy can allow the scripted model by name
 * (docs/security.md#network-policy). Commands wrapped join both namespaces.
 */
export async function startIsolatedModelServer(opts: { logFile: string; profiles?: ReadonlyArray<string>; hostName?: string }): Promise<IsolatedModelServer> {
  const support = netnsSupport();
  const nodeArgs = ['--import', 'tsx', mainTs, '--port', '0', '--log', opts.logFile, ...(opts.profiles ?? []).flatMap((p) => ['--profile', p])];
  const named = support.ok && opts.hostName !== undefined;
  const hosts = join(dirname(opts.logFile), 'hosts');
  if (named) writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}\n127.0.0.1 ${opts.hostName}\n`);
  // `unshare` (no --fork) and `exec` keep one pid, so child.pid is the node process inside the netns.
  const child = support.ok
    ? named
      ? spawn('unshare', ['-n', '-m', '--', 'sh', '-c', 'mount --bind "$0" /etc/hosts && ip link set lo up && exec "$@"', hosts, process.execPath, ...nodeArgs], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('unshare', ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, ...nodeArgs], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, nodeArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await readyPort(child);
  const pid = String(child.pid);
  const server: IsolatedModelServer = {
    url: `http://${named ? opts.hostName : '127.0.0.1'}:${port}`,
    ...(named ? { hostName: opts.hostName } : {}),
    port,
    isolated: support.ok,
    wrap: support.ok
      ? (cmd, args, cwd) => ({ cmd: 'nsenter', args: ['-t', pid, '-n', ...(named ? ['-m', ...(cwd ? [`--wd=${cwd}`] : [])] : []), '--', cmd, ...args] })
      : (cmd, args) => ({ cmd, args }),
    requests: () =>
      existsSync(opts.logFile)
        ? readFileSync(opts.logFile, 'utf8')
            .split('\n')
            .filter((l) => l.length > 0)
            .map((l) => JSON.parse(l) as RecordedRequest)
        : [],
    close: () => stop(child),
  };
  if (!support.ok) server.reason = support.reason;
  return server;
}

function readyPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`model server not ready after ${maxStartMs} ms; stderr: ${err}`));
    }, maxStartMs);
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        const ready = JSON.parse(out.slice(0, nl)) as { type?: string; port?: number };
        if (ready.type !== 'model-server-ready' || typeof ready.port !== 'number') throw new Error(`unexpected ready line ${out.slice(0, nl)}`);
        resolve(ready.port);
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`model server exited early (${code}); stderr: ${err}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
