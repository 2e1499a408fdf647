// The keeper's side of a jail started ahead (docs/bridge-internals.md#jail-ahead): a spare keeper
// (spare-keeper.ts) may be told, before it has a CLI, to start the jail its next CLI will likely need
// — bubblewrap, the seccomp helper and srt's relays around a shell that waits on its stdin — so that
// a later spawn costs the keeper one write, not a jail's start. The bridge built the jail (jail/srt.ts,
// `ahead`) for a launch like its last kept one; when the next matches, the keeper writes the CLI's env
// and argv as a script to that shell (`goScript`), which execs the CLI, with the stdin that is now the
// CLI's. A jail not taken is killed with its process group. Stage 1 imports nothing here eagerly.
import { chmodSync, chownSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { spawnKeeperChild, type KeeperChild } from './keeper-child.ts';

/**
 * The bridge's `{"ahead": …}` line: what to start, as what uid, the egress socket srt's relays in it connect to, and
 * the port its CLI's MCP relay will listen on (bound now, so nothing takes it before the CLI comes).
 */
export type AheadStart = { argv: string[]; cwd: string; env: Record<string, string>; uid?: number; gid?: number; socket: string; mcpPort?: number };

/** What spec.json says about a CLI that takes the jail started ahead: the waiting shell's marker line, srt's env names (srt's values stand), the CLI's argv. */
export type AheadGo = { marker: string; keep: string[]; argv: string[] };

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
const isId = (value: unknown): boolean => value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0);

/** The ahead line's start, or undefined when it is not one. */
export function parseAheadStart(value: unknown): AheadStart | undefined {
  const { argv, cwd, env, uid, gid, socket, mcpPort } = (value ?? {}) as Partial<Record<keyof AheadStart, unknown>>;
  if (!isStrings(argv) || argv.length === 0 || typeof cwd !== 'string' || typeof socket !== 'string' || !isId(uid) || !isId(gid)) return undefined;
  if (mcpPort !== undefined && !(Number.isSafeInteger(mcpPort) && (mcpPort as number) > 0 && (mcpPort as number) < 65536)) return undefined;
  if (typeof env !== 'object' || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === 'string')) return undefined;
  return {
    argv,
    cwd,
    env: env as Record<string, string>,
    socket,
    ...(uid === undefined ? {} : { uid: uid as number }),
    ...(gid === undefined ? {} : { gid: gid as number }),
    ...(mcpPort === undefined ? {} : { mcpPort: mcpPort as number }),
  };
}

/** A listener for a kept CLI's egress (its srt relay's socket, or a port); connections that come before the proxy loaded wait for `accept`. */
export type EgressListener = { readonly where: string; accept(take: (socket: Socket) => void): void; close(): void };

export async function listenEgress(at: { socket?: string; port?: number }, owner: { uid?: number; gid?: number }): Promise<EgressListener> {
  const early: Socket[] = [];
  let take: ((socket: Socket) => void) | null = null;
  const listener: Server = createServer((socket) => {
    if (take !== null) return take(socket);
    socket.on('error', () => undefined);
    early.push(socket);
  });
  listener.maxConnections = 1024;
  const where = at.socket ?? `127.0.0.1:${at.port}`;
  await listenOn(listener, at.socket ?? { port: at.port });
  if (at.socket !== undefined) {
    const socketPath = at.socket;
    process.on('exit', () => rmSync(socketPath, { force: true }));
    // The CLI's uid connects to it (the relay inside the jail) and so does its jail helper, which waits for it to go.
    if (owner.uid !== undefined && owner.gid !== undefined) chownSync(socketPath, owner.uid, owner.gid);
    chmodSync(socketPath, 0o600);
  }
  return {
    where,
    accept: (taker) => {
      take = taker;
      for (const socket of early.splice(0)) taker(socket);
    },
    close: () => {
      listener.close();
      for (const socket of early.splice(0)) socket.destroy();
      if (at.socket !== undefined) rmSync(at.socket, { force: true });
    },
  };
}

/** Listens on a unix socket path, or on a loopback port; rejects with the listen's error. */
function listenOn(server: Server, at: string | { port: number | undefined }): Promise<void> {
  return new Promise<void>((listening, failed) => {
    server.once('error', failed);
    if (typeof at === 'string') server.listen(at, () => listening());
    else server.listen(at.port, '127.0.0.1', () => listening());
  });
}

/** A server bound to a loopback port and listening, its connections unhandled until another server takes its handle (mcp-relay.ts). */
export async function bindLoopback(port: number): Promise<Server> {
  const server = createServer();
  await listenOn(server, { port });
  return server;
}

/** A jail started ahead, its shell waiting for the go script; `mcp`: its CLI's MCP relay port, bound (mcp-relay.ts listens on it). */
export type PreJail = {
  readonly socket: string;
  readonly child: KeeperChild;
  readonly egress: EgressListener;
  readonly mcp?: { port: number; server: Server };
  alive(): boolean;
  discard(): void;
};

/** Starts the jail: its egress socket listens first (bubblewrap binds it into the jail), then the jail, in its own process group. */
export async function startPreJail(start: AheadStart): Promise<PreJail | { error: string }> {
  const owner = { ...(start.uid === undefined ? {} : { uid: start.uid }), ...(start.gid === undefined ? {} : { gid: start.gid }) };
  let mcp: { port: number; server: Server } | undefined;
  if (start.mcpPort !== undefined) {
    const port = start.mcpPort;
    try {
      mcp = { port, server: await bindLoopback(port) };
    } catch (error) {
      return { error: `cannot listen on 127.0.0.1:${port} for the MCP relay: ${(error as Error).message}` };
    }
  }
  let egress: EgressListener;
  try {
    egress = await listenEgress({ socket: start.socket }, owner);
  } catch (error) {
    mcp?.server.close();
    return { error: `cannot listen on ${start.socket}: ${(error as Error).message}` };
  }
  // The process mark a supervisor set on the bridge (and so on this keeper) goes on, as it does in a CLI's env.
  const mark = process.env.HARNESS_BRIDGE_PROCESS_MARK;
  const env = mark === undefined ? start.env : { ...start.env, HARNESS_BRIDGE_PROCESS_MARK: mark };
  const child = await spawnKeeperChild({ argv: start.argv, cwd: start.cwd, stdin: 'pipe', ...owner }, env);
  if ('error' in child) {
    egress.close();
    mcp?.server.close();
    return child;
  }
  let exited = false;
  child.onExit(() => (exited = true));
  return {
    socket: start.socket,
    child,
    egress,
    ...(mcp === undefined ? {} : { mcp }),
    alive: () => !exited,
    discard: () => {
      mcp?.server.close();
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
      egress.close();
    },
  };
}

const shellName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One POSIX shell word. */
const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * The script the waiting shell evaluates, ended by its marker line: the CLI's env (srt's names keep srt's
 * values, as bubblewrap's --setenv overrides what it inherits; the jail's own HB_JAIL_ names stay unset),
 * then the CLI, exec'd. Undefined when the env has a name a shell cannot export: that CLI starts the usual way.
 */
export function goScript(go: AheadGo, env: Record<string, string>, stdin: 'pipe' | 'null'): string | undefined {
  const keep = new Set(go.keep);
  const lines: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!shellName.test(name)) return undefined;
    if (keep.has(name) || name.startsWith('HB_JAIL_')) continue;
    lines.push(`export ${quote(`${name}=${value}`)}`);
  }
  lines.push(`set -- ${go.argv.map(quote).join(' ')}`);
  lines.push(stdin === 'null' ? 'exec "$@" </dev/null' : 'exec "$@"');
  return `${lines.join('\n')}\n${go.marker}\n`;
}
