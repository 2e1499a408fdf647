// The jail helper's own side (jail-helper.ts has the protocol and the bridge's side): `node bridge.mjs
// --jail-helper <sandbox-runtime's dist/index.js>`, run as the CLI's uid. Reached from stage 1 (main.ts
// dispatches on argv), so everything is imported here, in helper mode only: cold start is unchanged.
import { JAIL_HELPER_LIMITS } from '../limits.ts';
import type { JailHelperReply } from './jail-helper.ts';

/** Helper side: `node bridge.mjs --jail-helper <sandbox-runtime's dist/index.js>`. */
export async function runJailHelper(srtIndex: string): Promise<void> {
  const { pathToFileURL } = await import('node:url');
  const { createInterface } = await import('node:readline');
  const srt = (await import(pathToFileURL(srtIndex).href)) as {
    SandboxManager: {
      initialize(config: unknown): Promise<void>;
      wrapWithSandbox(command: string, binShell?: string, customConfig?: unknown): Promise<string>;
      cleanupAfterCommand(): void;
    };
  };
  const say = (reply: JailHelperReply): void => void process.stdout.write(`${JSON.stringify(reply)}\n`);
  // The bridge holds our stdin: when it is gone, so are we (the command lines we handed out die with their
  // relays), once the kept CLIs we wrapped are gone too: srt removes its mount-point files as we exit, and a
  // file removed under a running jail detaches its mount there, so the rule it carried stops applying.
  const leave = keptCliWatch();
  process.stdout.on('error', leave.now);
  process.stdin.on('end', leave.now);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, leave.now);
  // srt reads the dangerous files to protect from its cwd, walking it a few levels deep: each wrap runs in
  // the CLI's cwd, or, where this uid cannot enter it, in an empty dir of the helper's own (never `/`, whose
  // walk takes seconds). Wraps take turns, since the cwd is the process's.
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const empty = mkdtempSync(join(tmpdir(), 'hb-jail-'));
  process.chdir(empty);
  process.on('exit', () => rmSync(empty, { recursive: true, force: true }));
  const enter = (cwd: unknown): void => {
    try {
      process.chdir(typeof cwd === 'string' ? cwd : empty);
    } catch {
      process.chdir(empty);
    }
  };
  let ready: Promise<void> | undefined;
  let turn: Promise<void> = Promise.resolve();
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let message: { t?: string; id?: number; config?: unknown; command?: string; filesystem?: unknown; cwd?: unknown; kept?: unknown };
    try {
      message = JSON.parse(line) as typeof message;
    } catch {
      continue;
    }
    if (message.t === 'init' && ready === undefined) {
      ready = srt.SandboxManager.initialize(message.config);
      ready.then(
        () => say({ t: 'ready' }),
        (error: unknown) => say({ t: 'error', message: `sandbox-runtime did not start: ${(error as Error).message}` }),
      );
    } else if (message.t === 'wrap' && typeof message.id === 'number' && typeof message.command === 'string') {
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
 * The keeper sockets of the kept CLIs this helper wrapped; `now()` exits once none answers. A keeper
 * removes its socket as it ends (a SIGKILLed one leaves it, refusing connections); a socket that never
 * answered and is not there yet within `keptListenGraceMs` of its wrap is a keeper still starting.
 */
function keptCliWatch(): { watch(socket: string): void; now(): void } {
  /** By socket: when it was wrapped, and whether it has answered (after that, a missing socket is a keeper gone). */
  const kept = new Map<string, { since: number; answered: boolean }>();
  let leaving = false;
  const answers = async (socket: string, state: { since: number; answered: boolean }): Promise<boolean> => {
    const { connect } = await import('node:net');
    const { rmSync } = await import('node:fs');
    return new Promise<boolean>((resolve) => {
      const probe = connect(socket, () => {
        probe.destroy();
        state.answered = true;
        resolve(true);
      });
      probe.on('error', (error: NodeJS.ErrnoException) => {
        // Refused: its keeper was killed and left the socket; ours to remove (the CLI's uid owns it).
        if (error.code === 'ECONNREFUSED') rmSync(socket, { force: true });
        resolve(error.code === 'ENOENT' && !state.answered && Date.now() - state.since < JAIL_HELPER_LIMITS.keptListenGraceMs);
      });
    });
  };
  return {
    watch: (socket) => void kept.set(socket, { since: Date.now(), answered: false }),
    now: () => {
      if (leaving) return;
      leaving = true;
      void (async () => {
        while (kept.size > 0) {
          for (const [socket, state] of kept) if (!(await answers(socket, state))) kept.delete(socket);
          if (kept.size > 0) await new Promise((wait) => setTimeout(wait, JAIL_HELPER_LIMITS.keptPollMs));
        }
        process.exit(0);
      })();
    },
  };
}

