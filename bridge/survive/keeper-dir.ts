// A state dir's keeper dirs (`<stateDir>/keepers/<id>`, launch `survive`; keeper.ts writes
// them): where they live, what a later bridge reads from one to adopt its CLI (the saved launch,
// the MCP endpoint the CLI was given, the relay's port), and removing those nothing will read again
// (docs/bridge-internals.md#surviving-clis).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
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

/**
 * The MCP endpoint an adopted CLI was given (its env is its keeper's, which the previous bridge
 * spawned): the new bridge serves the same token, and the same port when it is free, so the CLI's
 * host tools keep working. Read from the live keeper's /proc environ (Linux; never written to disk).
 */
export function inheritedMcpEnv(dir: string): { token: string; port: number } | null {
  try {
    const pid = Number(readFileSync(join(dir, KEEPER_FILES.keeperPid), 'utf8'));
    if (!Number.isSafeInteger(pid) || pid <= 0) return null;
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('\0--keeper\0')) return null; // pid reused
    const env = new Map<string, string>();
    for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
    }
    const url = env.get(MCP_ENV_V1.urlEnvVar);
    const token = env.get(MCP_ENV_V1.tokenEnvVar);
    if (url === undefined || token === undefined) return null;
    const port = Number(new URL(url).port);
    return Number.isSafeInteger(port) && port > 0 ? { token, port } : null;
  } catch {
    return null;
  }
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
    rmSync(dir, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
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

/** What a keeper says it wrote to its CLI's stdin (keeper.ts, recent-inputs.ts): how many writes, and the latest. */
export type KeeperInputs = { count: number; recent: string[] };

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
          const msg = JSON.parse(line) as { t?: unknown; count?: unknown; recent?: unknown };
          const { count, recent } = msg;
          if (msg.t !== 'inputs' || !Number.isSafeInteger(count) || !Array.isArray(recent) || !recent.every((r) => typeof r === 'string')) continue;
          return done({ count: count as number, recent: recent as string[] });
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

/** Reads a keeper dir's saved launch (for adoption); env is not there, a later reuse compares `key`. */
export function readSavedLaunch(dir: string): SavedLaunch | null {
  try {
    return JSON.parse(readFileSync(join(dir, KEEPER_FILES.launch), 'utf8')) as SavedLaunch;
  } catch {
    return null;
  }
}
