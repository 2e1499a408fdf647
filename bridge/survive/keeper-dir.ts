// A state dir's keeper dirs (`<stateDir>/keepers/<id>`, launch `survive`; keeper.ts writes
// them): where they live, what a later bridge reads from one to adopt its CLI (the saved launch,
// the keeper's inputs and the MCP endpoint the CLI was given, the relay's port), and removing those nothing will read again
// (docs/bridge-internals.md#surviving-clis).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { basename, join } from 'node:path';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { KEEPER_FILES, keeperSocketPath, type KeeperSpec } from './keeper.ts';

/** Where keeper dirs live: `<stateDir>/keepers/<id>`. */
export function keeperDir(stateDir: string, id: string): string {
  return join(stateDir, 'keepers', id);
}

/** What a later bridge needs to adopt the CLI: the launch without env (never written to disk), and a hash of its reuse identity. */
export type SavedLaunch = { launch: Omit<LaunchSpec, 'env'>; key: string };

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The port of the keeper's MCP relay (its spec's `mcp`), or undefined for a keeper without one. */
export function keeperRelayPort(dir: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, KEEPER_FILES.spec), 'utf8')) as KeeperSpec).mcp?.listenPort;
  } catch {
    return undefined;
  }
}

/**
 * Removes keeper dirs nothing will read again: every dir but `keep` whose keeper is done (exit.json)
 * or gone (its socket does not answer). A dir whose keeper still answers is left alone. Run before
 * the server attaches (no start can be creating a dir meanwhile).
 */
export async function removeStaleKeeperDirs(stateDir: string, keep: string | undefined): Promise<string[]> {
  const root = join(stateDir, 'keepers');
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (name === keep) continue;
    const dir = join(root, name);
    const done = existsSync(join(dir, KEEPER_FILES.exit)) || !(await answers(dir));
    if (!done) continue;
    removeKeeperDir(dir);
    removed.push(name);
  }
  return removed;
}

/** What srt.ts names a kept CLI's egress socket; a spec naming anything else is not followed. */
const keptSocketName = /^hb-kept-[0-9a-f]{16}\.sock$/;

/**
 * Removes a keeper dir whose keeper is done or gone, and its egress socket (`spec.egress.socket`,
 * outside the dir, in the temp dir): a keeper removes it as it exits, a SIGKILLed one cannot.
 */
export function removeKeeperDir(dir: string): void {
  try {
    const socket = (JSON.parse(readFileSync(join(dir, KEEPER_FILES.spec), 'utf8')) as KeeperSpec).egress?.socket;
    if (typeof socket === 'string' && keptSocketName.test(basename(socket))) rmSync(socket, { force: true });
  } catch {
    // no readable spec: no socket to remove
  }
  rmSync(dir, { recursive: true, force: true });
}

function answers(dir: string): Promise<boolean> {
  const reachable = keeperSocketPath(dir);
  if ('error' in reachable) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(reachable.path);
    const done = (ok: boolean) => {
      reachable.release();
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * What a keeper says as a bridge connects (keeper.ts): how many writes it made to its CLI's stdin and
 * the latest (recent-inputs.ts), and the MCP endpoint the CLI was given, from the CLI's env (never written
 * to disk): an adopting bridge serves the same token, and the same port unless the keeper relays.
 */
export type KeeperInputs = { count: number; recent: string[]; mcp: { url: string; token: string; port: number } | null };

/** Longest wait for a live keeper's first line (it sends it as it accepts): a hang guard. */
const inputsWaitMs = 5_000;
/** A first line longer than this is not a keeper's. */
const maxInputsLineChars = 16 * 1024 * 1024;

/** Asks the keeper in `dir` what it wrote to its CLI's stdin (adoption); null when it does not answer. */
export function readKeeperInputs(dir: string): Promise<KeeperInputs | null> {
  const reachable = keeperSocketPath(dir);
  if ('error' in reachable) return Promise.resolve(null);
  return new Promise((resolve) => {
    const socket = connect(reachable.path);
    let text = '';
    let settled = false;
    const done = (value: KeeperInputs | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      reachable.release();
      socket.destroy();
      resolve(value);
    };
    const guard = setTimeout(() => done(null), inputsWaitMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n')) {
        const line = text.slice(0, nl);
        text = text.slice(nl + 1);
        try {
          const msg = JSON.parse(line) as { t?: unknown; count?: unknown; recent?: unknown; mcp?: unknown };
          const { count, recent } = msg;
          if (msg.t !== 'inputs' || !Number.isSafeInteger(count) || !Array.isArray(recent) || !recent.every((r) => typeof r === 'string')) continue;
          return done({ count: count as number, recent: recent as string[], mcp: mcpEndpoint(msg.mcp) });
        } catch {
          // not a keeper's line
        }
      }
      if (text.length > maxInputsLineChars) done(null);
    });
    socket.once('error', () => done(null));
    socket.once('close', () => done(null));
  });
}

function mcpEndpoint(said: unknown): KeeperInputs['mcp'] {
  if (typeof said !== 'object' || said === null) return null;
  const { url, token } = said as { url?: unknown; token?: unknown };
  if (typeof url !== 'string' || typeof token !== 'string') return null;
  try {
    const port = Number(new URL(url).port);
    return Number.isSafeInteger(port) && port > 0 ? { url, token, port } : null;
  } catch {
    return null;
  }
}

/** Reads a keeper dir's saved launch (for adoption); env is not there, a later reuse compares `key`. */
export function readSavedLaunch(dir: string): SavedLaunch | null {
  try {
    return JSON.parse(readFileSync(join(dir, KEEPER_FILES.launch), 'utf8')) as SavedLaunch;
  } catch {
    return null;
  }
}
