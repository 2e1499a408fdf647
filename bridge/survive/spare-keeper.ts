// The bridge's side of keeper processes (launch `survive`): a keeper is started ahead of need
// (`--keeper`, keeper-start.ts), so that a kept spawn hands its CLI to a process whose Node already
// runs instead of paying a Node start (~0.1 s) per spawn. One spare at a time: the first as the bridge
// starts serving (Supervisor.startKeeperAhead), then one when a kept turn starts (while its jail wraps)
// unless one waits, and again once the CLI that took it goes quiet after its first output, or ends
// (kept-process.ts). A spare ends at EOF on its stdin: close() (the supervisor's
// stop) or its bridge's death. docs/bridge-internals.md#surviving-clis.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { spawnCapped } from '../jail/pids-cap.ts';

/** A child's stdio pipe is a net.Socket, which can be (un)referenced. */
const pipe = (stream: unknown): Socket | null => (stream ?? null) as Socket | null;

export class SpareKeepers {
  #spare: ChildProcess | null = null;
  #closed = false;
  /** Where keepers wait: `<stateDir>/keepers` (a local sandbox's destroy finds keepers by their cwd). */
  readonly #cwd: string;

  /** `stateDir`: the bridge's; its keepers' dirs are under `<stateDir>/keepers` too (keeper-dir.ts). */
  constructor(readonly stateDir: string) {
    this.#cwd = join(stateDir, 'keepers');
  }

  /** A keeper process for a CLI: the spare when it is alive, else one started now (`egress`: it will run a namespaced CLI's egress proxy). */
  take(egress: boolean): ChildProcess {
    const spare = this.#spare;
    this.#spare = null;
    if (spare !== null && spare.exitCode === null && spare.signalCode === null && spare.stdin?.writable === true) {
      pipe(spare.stdout)?.ref();
      return spare;
    }
    spare?.stdin?.destroy();
    return this.#start(egress);
  }

  /** Starts a spare unless one waits (`egress`: it loads the egress proxy ahead). */
  refill(egress: boolean): void {
    if (this.#closed || this.#spare !== null) return;
    const spare = this.#start(egress);
    // A waiting spare does not keep the bridge's event loop alive.
    spare.unref();
    pipe(spare.stdin)?.unref();
    pipe(spare.stdout)?.unref();
    this.#spare = spare;
  }

  /** Ends the waiting spare (it exits at EOF) and starts no more. */
  close(): void {
    this.#closed = true;
    this.#spare?.stdin?.end();
    this.#spare = null;
  }

  #start(egress: boolean): ChildProcess {
    mkdirSync(this.#cwd, { recursive: true, mode: 0o700 });
    // Inside the session's pids cap (jail/pids-cap.ts), like the CLI it will start.
    const keeper = spawnCapped(() => spawn(process.execPath, [process.argv[1]!, '--keeper', ...(egress ? ['--egress'] : [])], {
      cwd: this.#cwd,
      // The CLI's env comes on stdin with its dir; only the process mark a supervisor (a test run, a CI
      // job) set on the bridge is passed on, so it finds keepers as it finds every other process of the session.
      env: process.env.HARNESS_BRIDGE_PROCESS_MARK === undefined ? {} : { HARNESS_BRIDGE_PROCESS_MARK: process.env.HARNESS_BRIDGE_PROCESS_MARK },
      stdio: ['pipe', 'pipe', 'ignore'],
      detached: true, // its own session: a SIGKILLed bridge's group kill or terminal hangup never reaches it
    }));
    keeper.on('error', () => undefined);
    keeper.stdin?.on('error', () => undefined);
    return keeper;
  }
}
