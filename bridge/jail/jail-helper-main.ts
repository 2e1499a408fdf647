// The jail helper's own side (jail-helper.ts has the protocol and the bridge's side): `node bridge.mjs
// --jail-helper <sandbox-runtime's dist/index.js>`, run as the CLI's uid: from its start, or, started by a root
// bridge before that uid was known (early-helper.ts), from init on, taken before srt starts anything. Reached
// from stage 1 (main.ts dispatches on argv), so everything is imported here, in helper mode only: cold start is unchanged.
import { JAIL_HELPER_LIMITS } from '../limits.ts';
import type { JailHelperReply } from './jail-helper.ts';
import { loadSrt, SRT_BUNDLE_FILE } from './srt-bundle.ts';

/** Helper side: `node bridge.mjs --jail-helper <sandbox-runtime's dist/index.js>`. */
export async function runJailHelper(srtIndex: string): Promise<void> {
  const startedMs = performance.now(); // since this process began: Node's start and the bridge file's
  const { createInterface } = await import('node:readline');
  const { dirname, join } = await import('node:path');
  // The bridge file is our argv[1]: the bundle, when the recipe shipped one, sits beside it.
  const loaded = await loadSrt(srtIndex, join(dirname(process.argv[1] ?? ''), SRT_BUNDLE_FILE));
  const srt = loaded.srt;
  const loadedMs = performance.now();
  const say = (reply: JailHelperReply): void => void process.stdout.write(`${JSON.stringify(reply)}\n`);
  // srt reads the dangerous files to protect from its cwd, walking it a few levels deep: each wrap runs in
  // the CLI's cwd, or, where this uid cannot enter it, in an empty dir of the helper's own (never `/`, whose
  // walk takes seconds). Wraps take turns, since the cwd is the process's.
  // Made at init, as the uid the helper runs as from then on (so that uid can remove it).
  const { mkdtempSync, readdirSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  let empty = '/';
  const removeEmpty = (): void => {
    if (empty !== '/') rmSync(empty, { recursive: true, force: true });
  };
  process.on('exit', removeEmpty);
  // The bridge holds our stdin: when it is gone, so are we (the command lines we handed out die with their
  // relays). Kept CLIs we wrapped may run on: then srt's mount points stay (keptCliWatch).
  let ready: Promise<void> | undefined;
  const leave = keptCliWatch(() => {
    removeEmpty();
    // Before init there are no relays, and no wrap has named a socket.
    const sockets = ready === undefined ? [] : [srt.SandboxManager.getLinuxHttpSocketPath?.(), srt.SandboxManager.getLinuxSocksSocketPath?.()];
    endRelaysAndJails({ readdirSync, readFileSync, rmSync }, sockets);
  });
  process.stdout.on('error', leave.now);
  process.stdin.on('end', leave.now);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, leave.now);
  const enter = (cwd: unknown): void => {
    try {
      process.chdir(typeof cwd === 'string' ? cwd : empty);
    } catch {
      process.chdir(empty);
    }
  };
  let turn: Promise<void> = Promise.resolve();
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let message: { t?: string; id?: number; config?: unknown; credentials?: unknown; command?: string; filesystem?: unknown; cwd?: unknown; kept?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      continue;
    }
    if (message.t === 'init' && ready === undefined) {
      const initAt = performance.now();
      const refused = takeCredentials(message.credentials);
      if (refused !== undefined) {
        say({ t: 'error', message: refused });
        leave.now();
        break;
      }
      empty = mkdtempSync(join(tmpdir(), 'hb-jail-'));
      process.chdir(empty);
      ready = srt.SandboxManager.initialize(message.config);
      ready.then(
        () => {
          // srt cleans up on SIGINT/SIGTERM by itself, whatever still runs: only leave.now decides that here.
          for (const signal of ['SIGINT', 'SIGTERM'] as const) for (const listener of process.listeners(signal)) if (listener !== leave.now) process.off(signal, listener);
          const ms = { start: Math.round(startedMs), load: Math.round(loadedMs - startedMs), initialize: Math.round(performance.now() - initAt) };
          say({ t: 'ready', srt: loaded.from, ms, ...(loaded.note === undefined ? {} : { note: loaded.note }) });
        },
        (error: unknown) => say({ t: 'error', message: `sandbox-runtime did not start: ${(error as Error).message}` }),
      );
    } else if (message.t === 'wrap' && typeof message.id === 'number' && typeof message.command === 'string') {
      if (ready === undefined) {
        // Before init srt has no config, and the empty dir a wrap falls back to is not made yet.
        say({ t: 'error', id: message.id, message: 'the jail helper was asked to wrap before init' });
        continue;
      }
      const id = message.id;
      const command = message.command;
      const filesystem = message.filesystem;
      const cwd = message.cwd;
      if (typeof message.kept === 'string') leave.watch(message.kept);
      turn = turn.then(async () => {
        try {
          await ready;
          enter(cwd);
          say({ t: 'wrapped', id, command: await srt.SandboxManager.wrapWithSandbox(command, undefined, { filesystem }) });
        } catch (error) {
          say({ t: 'error', id, message: (error as Error).message });
        }
      });
    } else if (message.t === 'forget' && typeof message.kept === 'string') {
      leave.forget(message.kept);
    } else if (message.t === 'cleanup') {
      try {
        srt.SandboxManager.cleanupAfterCommand();
      } catch {
        // nothing to clean
      }
    }
  }
  leave.now();
}

/**
 * The uid and gid of init's `credentials` taken for good (supplementary groups dropped first, then the gid,
 * then the uid: a root process keeps nothing of root's, capabilities included); nothing when absent or already
 * ours. Why not, when they cannot be taken.
 */
function takeCredentials(credentials: unknown): string | undefined {
  if (credentials === undefined) return undefined;
  const { uid, gid } = (credentials ?? {}) as { uid?: unknown; gid?: unknown };
  if (!Number.isSafeInteger(uid) || !Number.isSafeInteger(gid) || (uid as number) < 0 || (gid as number) < 0) return 'the jail helper was given credentials that are not a uid and gid';
  if (process.getuid?.() === uid && process.getgid?.() === gid) return undefined;
  if (process.getuid?.() !== 0) return `the jail helper runs as uid ${process.getuid?.()} and cannot take uid ${uid as number}`;
  try {
    process.setgroups?.([]);
    process.setgid?.(gid as number);
    process.setuid?.(uid as number);
  } catch (error) {
    return `the jail helper could not take uid ${uid as number}: ${(error as Error).message}`;
  }
  return process.getuid?.() === uid && process.getgid?.() === gid ? undefined : `the jail helper did not become uid ${uid as number}`;
}

/**
 * Ends srt's relays to its proxy (socat processes, our only children once the wraps are done) and removes
 * their sockets, as srt's clean-up would: a kept CLI's jail reaches its keeper's socket, never them
 * (srt.ts), and with this process gone they lead to a closed port. Without this they outlive us.
 * Also ends every jail that binds those sockets: only jails that are not kept do, and those die with the
 * bridge (`exec bwrap --die-with-parent`, srt.ts) — unless the bridge died while one was starting, before
 * bubblewrap set its parent-death signal: then bubblewrap, srt's relays inside and the CLI ran on under
 * init. This runs as the bridge goes, so such a jail is found by the sockets it names.
 */
function endRelaysAndJails(fs: Pick<typeof import('node:fs'), 'readdirSync' | 'readFileSync' | 'rmSync'>, sockets: Array<string | undefined>): void {
  const paths = sockets.filter((socket): socket is string => socket !== undefined);
  for (const socket of paths) fs.rmSync(socket, { force: true });
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return; // no /proc: srt's Linux relays do not exist either
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && stat.includes('(socat)')) process.kill(Number(entry), 'SIGTERM');
      else if (paths.length > 0 && namesAny(fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8'), paths)) process.kill(Number(entry), 'SIGKILL');
    } catch {
      // gone meanwhile, or not ours to signal
    }
  }
}

/** Whether a command line names one of `paths` (bubblewrap's bind, a relay's address, the shell that execs bubblewrap). */
function namesAny(cmdline: string, paths: string[]): boolean {
  return paths.some((path) => cmdline.includes(path));
}

/**
 * The keeper sockets of the kept CLIs this helper wrapped. `now()` exits: with srt's clean-up when none
 * of them answers, else without it, leaving srt's mount points where they are: a mount point removed under
 * a running jail detaches its mount there (the rule it carried stops applying), and a jail wrapped by
 * another srt while it existed binds it as it is. A socket not there yet within `keptListenGraceMs` of
 * its wrap is a keeper still starting. The bridge says when a kept CLI ended (`forget`).
 */
function keptCliWatch(ownCleanUp: () => void): { watch(socket: string): void; forget(socket: string): void; now(): void } {
  const kept = new Map<string, number>();
  const bridgePid = process.ppid;
  let leaving = false;
  const answers = async (socket: string, since: number): Promise<boolean> => {
    const { connect } = await import('node:net');
    return new Promise<boolean>((resolve) => {
      const probe = connect(socket, () => {
        probe.destroy();
        resolve(true);
      });
      probe.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ENOENT' && Date.now() - since < JAIL_HELPER_LIMITS.keptListenGraceMs));
    });
  };
  return {
    watch: (socket) => void kept.set(socket, Date.now()),
    forget: (socket) => void kept.delete(socket),
    now: () => {
      if (leaving) return;
      leaving = true;
      void (async () => {
        const running = await Promise.all([...kept].map(([socket, since]) => answers(socket, since)));
        // The relays go either way: srt registers its own clean-up only once its initialize has finished, so a
        // helper told to leave while srt starts would leave the relay it already spawned running.
        ownCleanUp();
        // A bridge that died (we were handed to another parent) may have been forking a jail: a child not yet
        // past its exec names no socket at the first look.
        if (process.ppid !== bridgePid) {
          await new Promise((resolve) => setTimeout(resolve, JAIL_HELPER_LIMITS.orphanJailLookAgainMs));
          ownCleanUp();
        }
        // With a kept CLI running, srt's clean-up (an exit handler) would remove its mount points: none runs.
        if (running.includes(true)) process.removeAllListeners('exit');
        process.exit(0);
      })();
    },
  };
}
