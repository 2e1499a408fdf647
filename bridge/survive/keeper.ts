// Keeper mode of the bridge file (launch `survive`; keeper-start.ts gives it
// its dir and the CLI's env). The bridge runs this detached (own session) for
// the CLI, which it runs on pipes or a pty (keeper-child.ts), so the CLI's pipes
// or pty belong to the keeper and outlive a SIGKILLed bridge. Owns the keeper dir's files (spec.json in; the
// stdout/stderr captures, exit.json, keeper.pid and cli.pid out), its socket
// (stdin bytes and EOF in, `grew`/`exit` notices out) and the CLI's life until
// it exits or DIR is removed; reading the captures is kept-process.ts's.
// Dir layout and socket protocol: docs/bridge-internals.md#surviving-clis.
// Stage-1 cost: this module only defines functions; node:child_process and
// node-pty are imported dynamically, in keeper mode only.
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import type { KeptEgress, KeptEgressSpec } from '../jail/kept-egress.ts';
import { startMcpRelay, type McpRelay, type RelaySpec } from './mcp-relay.ts';
import { RecentInputs } from './recent-inputs.ts';
import { KEEPER_LIMITS } from '../limits.ts';
import { spawnKeeperChild, type ChildSpec, type KeeperChild } from './keeper-child.ts';
import { bindLoopback, goScript, listenEgress, type AheadGo, type EgressListener, type PreJail } from './jail-ahead.ts';

/** `jailed`: argv runs the CLI inside sandbox-runtime, so signals go to it through /proc (jail/jail-signals.ts), also after adoption. */
/** `mcp`: the CLI's MCP requests go through this keeper (mcp-relay.ts), which outlives the bridge. */
/** `egress`: the CLI is in a network namespace whose only way out is this keeper's egress proxy (jail/kept-egress.ts). */
/** `ahead`: the CLI runs in the jail this keeper started ahead (jail-ahead.ts): `argv` is that jail's. */
/** `pty` (ChildSpec): the CLI runs on a pty of this size (launch io.mode 'pty'); its output is the stdout capture. */
export type KeeperSpec = ChildSpec & {
  exitDrainMs: number;
  jailed?: boolean;
  mcp?: RelaySpec;
  egress?: KeptEgressSpec;
  ahead?: AheadGo;
};
export type KeeperExit = { t: 'exit'; code: number | null; signal: string | null; stdout: number; stderr: number };

export const KEEPER_FILES = {
  spec: 'spec.json',
  launch: 'launch.json',
  sock: 'sock',
  exit: 'exit.json',
  stdout: 'stdout',
  stderr: 'stderr',
  keeperPid: 'keeper.pid',
  cliPid: 'cli.pid',
} as const;

/** How often a keeper checks that its dir still exists (a destroyed session removes it: then the CLI and the keeper go). */
const dirCheckMs = 1_000;

/** A unix socket path longer than this does not fit sockaddr_un on every platform. */
const maxSocketPath = 100;

/**
 * A path to connect to the keeper socket in `dir`. Unix socket paths are limited to ~104-108
 * bytes, and state dirs are often deeper than that: on Linux a longer one is reached through an
 * open fd of the dir (`/proc/self/fd/N/sock`, short, and still guarded by the dir's 0700 mode).
 * `release` closes that fd once the connection is made (or failed).
 */
export function keeperSocketPath(dir: string): { path: string; release(): void } | { error: string } {
  const full = join(dir, KEEPER_FILES.sock);
  if (full.length <= maxSocketPath) return { path: full, release: () => undefined };
  if (process.platform !== 'linux') return { error: `the keeper socket path ${full} is longer than ${maxSocketPath} bytes; use a shorter state dir` };
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch (error) {
    return { error: `cannot open keeper dir ${dir}: ${(error as Error).message}` };
  }
  let open = true;
  return {
    path: `/proc/self/fd/${fd}/${KEEPER_FILES.sock}`,
    release: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** How the keeper gets the egress proxy: its own embedded bundle (jail/kept-egress-loader.ts), loaded only by keepers of namespaced CLIs. */
export type LoadKeptEgress = () => Promise<(spec: KeptEgressSpec, keeperId: string) => Promise<KeptEgress>>;

/** Runs the CLI of the keeper dir `given` with `env`, the CLI's (keeper-start.ts got both on stdin); `pre`: a jail started ahead (jail-ahead.ts). */
export async function runKeeper(given: string, loadEgress: LoadKeptEgress, env: NodeJS.ProcessEnv, pre?: PreJail): Promise<void> {
  const dir = resolve(given);
  const spec = JSON.parse(readFileSync(join(dir, KEEPER_FILES.spec), 'utf8')) as KeeperSpec;
  const say = (obj: object): void => {
    try {
      process.stdout.write(`${JSON.stringify(obj)}\n`);
      process.stdout.end();
    } catch {
      // the spawning bridge is gone already; it will learn the rest from the files
    }
  };
  process.stdout.on('error', () => undefined);
  for (const signal of ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGPIPE'] as const) process.on(signal, () => undefined); // only the CLI's exit ends a keeper

  const files = {
    stdout: openSync(join(dir, KEEPER_FILES.stdout), 'a', 0o600),
    stderr: openSync(join(dir, KEEPER_FILES.stderr), 'a', 0o600),
  };
  const sizes = { stdout: 0, stderr: 0 };
  // A jail started ahead (jail-ahead.ts) is this CLI's only when spec.json says so; else it goes.
  const ahead = spec.ahead !== undefined && pre !== undefined && pre.alive() ? pre : undefined;
  if (pre !== undefined && ahead === undefined) pre.discard();
  const go = ahead !== undefined ? goScript(spec.ahead!, env as Record<string, string>, spec.stdin) : undefined;
  if (spec.ahead !== undefined && go === undefined) {
    ahead?.discard();
    say({ error: ahead === undefined ? 'the jail started ahead for this CLI is gone' : "the CLI's env has a name a shell cannot export", ahead: 'gone' });
    process.exit(0);
  }
  // The MCP relay's port is bound before any CLI runs: one taken since the bridge picked it (another session's
  // keeper picked the same one) fails here, and the bridge spawns again with another (`again`). The relay itself
  // (node:http) starts listening on it while the CLI starts. A jail started ahead bound its port with it (jail-ahead.ts).
  let relay: McpRelay | undefined;
  const relaySpec = spec.mcp;
  let bound = ahead?.mcp !== undefined && ahead.mcp.port === relaySpec?.listenPort ? ahead.mcp.server : undefined;
  if (bound === undefined) ahead?.mcp?.server.close();
  if (relaySpec !== undefined && bound === undefined) {
    try {
      bound = await bindLoopback(relaySpec.listenPort);
    } catch (error) {
      ahead?.discard();
      say({ error: `keeper MCP relay: cannot listen on 127.0.0.1:${relaySpec.listenPort}: ${(error as Error).message}`, again: 'port' });
      process.exit(0);
    }
  }
  const relayStarted = relaySpec ? startMcpRelay(relaySpec, env[MCP_ENV_V1.tokenEnvVar], bound).then((started) => (relay = started)) : undefined;
  relayStarted?.catch(() => undefined); // awaited below, after the spawn
  // The egress port is bound here, before the CLI starts (a taken port fails the spawn); the proxy
  // itself (its own bundle, unless a spare keeper loaded it while it waited) loads right after the spawn, while the
  // CLI's srt starts, which takes longer, and a connection that comes first waits in `early` until the proxy
  // takes it. The keeper answers only once both are ready.
  let egress: KeptEgress | undefined;
  let startEgress: (() => Promise<KeptEgress>) | undefined;
  if (spec.egress) {
    const egressSpec = spec.egress;
    let listening: EgressListener;
    try {
      listening = ahead !== undefined ? ahead.egress : await listenEgress(egressSpec, spec);
    } catch (error) {
      ahead?.discard();
      relay?.close();
      bound?.close();
      // Nothing ran yet: a port taken meanwhile is picked again by the bridge.
      say({ error: `keeper egress proxy: cannot listen on ${egressSpec.socket ?? `127.0.0.1:${egressSpec.port}`}: ${(error as Error).message}`, again: 'port' });
      process.exit(0);
    }
    startEgress = () =>
      loadEgress()
        .then((start) => start(egressSpec, basename(dir)))
        .then((proxy) => {
          listening.accept(proxy.accept);
          return proxy;
        });
  }
  let child: KeeperChild | { error: string };
  if (ahead !== undefined) {
    // Its relay listens before the CLI starts: a port that could not be taken fails before any CLI ran, and the bridge starts it the usual way.
    if (relayStarted) {
      try {
        await relayStarted;
      } catch (error) {
        ahead.discard();
        say({ error: `keeper MCP relay: cannot listen on 127.0.0.1:${relaySpec!.listenPort}: ${(error as Error).message}`, ahead: 'gone' });
        process.exit(0);
      }
    }
    child = ahead.child;
    child.write(Buffer.from(go!));
    if (spec.stdin === 'null') child.end();
  } else {
    child = await spawnKeeperChild(spec, env);
  }
  if ('error' in child) {
    say({ error: child.error });
    process.exit(0);
  }
  const egressLoaded = startEgress?.();
  egressLoaded?.catch(() => undefined); // awaited below
  const pid = child.pid;

  const inputs = new RecentInputs();
  // The MCP endpoint the CLI was given: an adopting bridge serves the same token (and port, unless relayed).
  const mcpUrl = env[MCP_ENV_V1.urlEnvVar];
  const mcpToken = env[MCP_ENV_V1.tokenEnvVar];
  const mcpEnv = mcpUrl !== undefined && mcpToken !== undefined ? { mcp: { url: mcpUrl, token: mcpToken } } : {};
  let bridge: Socket | null = null;
  /** The pid line is said (the spawning bridge connects after it). */
  let ready = false;
  const notify = (line: string): void => {
    if (bridge !== null && !bridge.destroyed) bridge.write(line);
  };
  // One notice per event-loop turn, however many chunks it appended: the bridge reads to the end of both files anyway.
  let grewQueued = false;
  const grew = (): void => {
    if (grewQueued) return;
    grewQueued = true;
    setImmediate(() => {
      grewQueued = false;
      notify('{"t":"grew"}\n');
    });
  };
  // Backpressure: what the connected bridge says it has read (`{"t":"read"}`); a stream whose capture runs
  // more than maxAheadBytes ahead of it is held until the bridge read to within half of that (so a flood
  // is held and released per half of it, not per chunk). No bridge, or the CLI exited: nothing is held.
  const read = { stdout: 0, stderr: 0 };
  const held = { stdout: false, stderr: false };
  let exited = false;
  const throttle = (name: 'stdout' | 'stderr'): void => {
    const limit = held[name] ? KEEPER_LIMITS.maxAheadBytes / 2 : KEEPER_LIMITS.maxAheadBytes;
    const hold = bridge !== null && !exited && sizes[name] - read[name] > limit;
    if (hold === held[name]) return;
    held[name] = hold;
    child.hold(name, hold);
  };
  child.onOutput((name, chunk) => {
    for (let done = 0; done < chunk.length; ) done += writeSync(files[name], chunk, done);
    sizes[name] += chunk.length;
    throttle(name);
    grew();
  });

  const server = createServer((socket) => {
    bridge?.destroy(); // one bridge at a time: the newest (the old one is gone or being replaced)
    bridge = socket;
    socket.on('error', () => undefined);
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      buffered += text;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let msg: { t?: unknown; b?: unknown; j?: unknown; port?: unknown; o?: unknown };
        try {
          msg = JSON.parse(line) as typeof msg;
        } catch {
          continue;
        }
        if (msg.t === 'in' && typeof msg.b === 'string') {
          const bytes = Buffer.from(msg.b, 'base64');
          if (child.write(bytes)) inputs.took(typeof msg.j === 'string' ? msg.j : bytes.toString('utf8'));
        }
        else if (msg.t === 'eof') child.end();
        else if (msg.t === 'up' && typeof msg.port === 'number' && Number.isSafeInteger(msg.port)) relay?.setUpstream(msg.port);
        else if (msg.t === 'read' && Array.isArray(msg.o) && msg.o.length === 2 && msg.o.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) {
          [read.stdout, read.stderr] = msg.o as [number, number];
          throttle('stdout');
          throttle('stderr');
        }
      }
    });
    socket.on('close', () => {
      if (bridge !== socket) return;
      bridge = null;
      throttle('stdout');
      throttle('stderr');
    });
    // A new bridge counts as caught up (it reads from its journal's offsets and says how far after its first pump).
    read.stdout = sizes.stdout;
    read.stderr = sizes.stderr;
    throttle('stdout');
    throttle('stderr');
    notify(`${JSON.stringify({ t: 'inputs', count: inputs.count, recent: inputs.recent, ...mcpEnv })}\n`); // what an adopting bridge checks its journal against, and the MCP endpoint it serves
    notify('{"t":"grew"}\n'); // whatever the files hold now is news to the new bridge
  });
  server.on('error', (error) => {
    say({ error: `keeper socket: ${error.message}` });
    process.kill(-pid, 'SIGKILL');
    process.exit(1);
  });
  // Before any await: a CLI (or its srt) that ends at once must not end unseen.
  let exitInfo: { code: number | null; signal: string | null } | null = null;
  child.onExit((code, signal) => {
    exitInfo = { code, signal };
    // What is left in the pipes is read now, bridge or not (the drain below would drop it).
    exited = true;
    throttle('stdout');
    throttle('stderr');
    // A leftover grandchild holding the pipes open: kill the group, as the bridge does for its own CLIs.
    setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
      child.dropOutput();
    }, spec.exitDrainMs).unref();
  });
  child.onClose((code, signal) => {
    const info = exitInfo ?? { code, signal };
    closeSync(files.stdout);
    closeSync(files.stderr);
    const exit: KeeperExit = { t: 'exit', code: info.code, signal: info.signal, stdout: sizes.stdout, stderr: sizes.stderr };
    const line = `${JSON.stringify(exit)}\n`;
    const path = join(dir, KEEPER_FILES.exit);
    writeFileSync(`${path}.tmp`, line, { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    relay?.close();
    void egress?.close();
    server.close();
    if (!ready) say({ pid }); // it ended before the keeper was ready: the bridge learns the rest from exit.json
    const socket = bridge;
    if (socket === null || socket.destroyed) process.exit(0);
    socket.end(line, () => process.exit(0));
    setTimeout(() => process.exit(0), 2_000).unref();
  });
  if (relayStarted && relaySpec) {
    try {
      await relayStarted;
    } catch (error) {
      process.kill(-pid, 'SIGKILL');
      say({ error: `keeper MCP relay: cannot listen on 127.0.0.1:${relaySpec.listenPort}: ${(error as Error).message}` });
      process.exit(0);
    }
  }
  if (egressLoaded) {
    try {
      egress = await egressLoaded;
    } catch (error) {
      process.kill(-pid, 'SIGKILL');
      relay?.close();
      say({ error: `keeper egress proxy: ${(error as Error).message}` });
      process.exit(0);
    }
  }
  // Listen by a relative name from inside the dir: the socket path limit never applies to us.
  process.chdir(dir);
  await new Promise<void>((done) => server.listen(KEEPER_FILES.sock, done));
  writeFileSync(join(dir, KEEPER_FILES.keeperPid), `${process.pid}\n`, { mode: 0o600 });
  writeFileSync(join(dir, KEEPER_FILES.cliPid), `${pid}\n`, { mode: 0o600 });
  ready = true;
  say({ pid });
  // Nothing can adopt a CLI whose dir is gone (its session was destroyed, perhaps with no bridge left to
  // stop it): kill its group and go, rather than run on unseen.
  const dirCheck = setInterval(() => {
    if (existsSync(join(dir, KEEPER_FILES.spec))) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
    process.exit(0);
  }, dirCheckMs);
  dirCheck.unref();

}
