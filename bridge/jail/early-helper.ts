// The jail helper started with the bridge (stage 1), before its isolation is decided: the helper's Node
// start and sandbox-runtime's load (~80 ms) run beside the bridge's own start, stage 2 and the host's attach,
// so the first CLI spawn finds it ready instead of waiting for it (docs/bridge-internals.md#first-output).
// The CLI's uid is not known yet (a session uid is leased in stage 2), so a root bridge starts it as root and
// hands it that uid with srt's config; it takes it (setgid, setuid) before srt starts anything
// (jail-helper-main.ts). Started only where a namespace may be used; stage 2 adopts it (srt.ts, jail-helper.ts)
// or ends it. Its builtins load only then: stage 1's own are pinned (test/bridge/bundle.test.ts).
import type { ChildProcess, spawn as Spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { Credentials } from './cli-jail.ts';
import { onPath, type JailArgs } from './jail-args.ts';
import { findSrt, srtIndexOf } from './srt-path.ts';

/** A helper process (`--jail-helper <srt's index.js>`): JailHelper's own spawn, and the bridge's at its start. */
export function spawnJailHelper(spawn: typeof Spawn, bridgeFile: string, srtIndex: string, credentials?: Credentials): ChildProcess {
  return spawn(process.execPath, [bridgeFile, '--jail-helper', srtIndex], {
    // Not the bridge's cwd, which the CLI's uid may not be able to enter; each wrap names the dir srt walks (jail-helper-main.ts).
    cwd: '/',
    stdio: ['pipe', 'pipe', 'pipe'],
    env: helperEnv(),
    ...credentials,
  });
}

/** A helper for `--isolation` auto, namespace or uid+namespace on Linux with bubblewrap and srt; else undefined. Never rejects. */
export async function startEarlyHelper(jail: JailArgs, bridgeFile: string): Promise<ChildProcess | undefined> {
  if (jail.requested === 'none' || jail.requested === 'uid' || process.platform !== 'linux' || onPath('bwrap') === undefined) return undefined;
  try {
    const [{ spawn }, { createRequire }] = await Promise.all([import('node:child_process'), import('node:module')]);
    const found = findSrt(jail.srt, bridgeFile, createRequire);
    if ('error' in found) return undefined;
    const child = spawnJailHelper(spawn, resolve(bridgeFile), srtIndexOf(found.pkg));
    child.on('error', () => undefined); // a helper that did not start is not adopted (srt.ts starts another)
    child.stdin?.on('error', () => undefined);
    return child;
  } catch {
    return undefined;
  }
}

/** Ends a helper: EOF on its stdin (it cleans up and goes), and SIGTERM. */
export function endJailHelper(child: ChildProcess): void {
  child.stdin?.end();
  child.kill('SIGTERM');
}

/** Still running, so it can be adopted. */
export function helperAlive(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/**
 * The jail helper's environment: the bridge's, with srt's TMPDIR, without NODE_EXTRA_CA_CERTS. Node parses
 * that bundle at every start (~65 ms of CPU for a system bundle, before the first part), and the helper
 * makes no TLS connection: srt's relays lead to the egress proxy, which tunnels. The CLIs keep it (their
 * env is their launch's, supervised-process.ts). TMPDIR as os.tmpdir() reads it (stage 1 does not load node:os).
 */
export function helperEnv(): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _unused, ...env } = process.env;
  const tmp = (env.TMPDIR || env.TMP || env.TEMP || '/tmp').replace(/(.)\/$/, '$1');
  return { ...env, TMPDIR: tmp };
}
