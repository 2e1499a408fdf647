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
import type { JailAhead } from '../jail/cli-jail.ts';
import { spawnCapped } from '../jail/pids-cap.ts';

/** A child's stdio pipe is a net.Socket, which can be (un)referenced. */
const pipe = (stream: unknown): Socket | null => (stream ?? null) as Socket | null;

/** A jail made ahead for a spare keeper to start (jail/cli-jail.ts), with the MCP relay port its launch was made with. */
export type MadeAhead = { jail: JailAhead; relayPort?: number };

export class SpareKeepers {
  #spare: ChildProcess | null = null;
  /** The jail the waiting spare started ahead (jail-ahead.ts). */
  #ahead: { spare: ChildProcess; made: MadeAhead } | null = null;
  #making: Promise<void> | null = null;
  #makeAhead: (() => Promise<MadeAhead | undefined>) | undefined;
  #closed = false;
  /** Where keepers wait: `<stateDir>/keepers` (a local sandbox's destroy finds keepers by their cwd). */
  readonly #cwd: string;

  /** `stateDir`: the bridge's; its keepers' dirs are under `<stateDir>/keepers` too (keeper-dir.ts). */
  constructor(readonly stateDir: string) {
    this.#cwd = join(stateDir, 'keepers');
  }

  /** How a spare gets its jail ahead: the supervisor makes one for a launch like its last kept one. */
  aheadBy(make: () => Promise<MadeAhead | undefined>): void {
    this.#makeAhead = make;
  }

  /** The MCP relay port of the waiting spare's jail: a launch that is to take it is relayed through that port. */
  get aheadRelayPort(): number | undefined {
    return this.#ahead?.made.relayPort;
  }

  /** While the waiting spare's jail is being made: settles once it was handed to the spare, or none could be. */
  get aheadMaking(): Promise<void> | null {
    return this.#making;
  }

  /** The waiting spare's jail, for a launch whose jail has `key`, when it fits: the next take() is that spare's. */
  claim(key: string): JailAhead | undefined {
    const ahead = this.#ahead;
    if (ahead === null || ahead.made.jail.key !== key || ahead.spare !== this.#spare || !waiting(ahead.spare)) return undefined;
    this.#ahead = null;
    return ahead.made.jail;
  }

  /** A keeper process for a CLI: the spare when it is alive, else one started now (`egress`: it will run a namespaced CLI's egress proxy). */
  take(egress: boolean): ChildProcess {
    const spare = this.#spare;
    this.#spare = null;
    // A jail the spare started and no launch claimed: its keeper ends it when told of a CLI that does not take it.
    this.#dropAhead();
    if (spare !== null && waiting(spare)) {
      pipe(spare.stdout)?.ref();
      return spare;
    }
    spare?.stdin?.destroy();
    return this.#start(egress);
  }

  /**
   * Starts a spare unless one waits (`egress`: it loads the egress proxy ahead). `ahead`: the spare also starts the jail
   * its CLI will likely need (the CLI before it has gone quiet or ended: the jail's start takes nothing from it).
   */
  refill(egress: boolean, ahead = false): void {
    if (this.#closed) return;
    if (this.#spare === null) {
      const spare = this.#start(egress);
      // A waiting spare does not keep the bridge's event loop alive.
      spare.unref();
      pipe(spare.stdin)?.unref();
      pipe(spare.stdout)?.unref();
      spare.once('exit', () => {
        if (this.#ahead?.spare === spare) this.#dropAhead();
      });
      this.#spare = spare;
    }
    if (ahead && this.#ahead === null && this.#making === null && this.#makeAhead !== undefined) this.#startAhead(this.#spare, this.#makeAhead);
  }

  /** Ends the waiting spare (it exits at EOF, and ends its jail) and starts no more. */
  close(): void {
    this.#closed = true;
    this.#dropAhead();
    this.#spare?.stdin?.end();
    this.#spare = null;
  }

  #startAhead(spare: ChildProcess, make: () => Promise<MadeAhead | undefined>): void {
    this.#making = make()
      .catch(() => undefined)
      .then((made) => {
        this.#making = null;
        if (made === undefined) return;
        if (this.#closed || this.#spare !== spare || !waiting(spare)) return made.jail.release();
        const { start, credentials, socket } = made.jail;
        const mcpPort = made.relayPort === undefined ? {} : { mcpPort: made.relayPort };
        spare.stdin!.write(`${JSON.stringify({ ahead: { ...start, ...credentials, socket, ...mcpPort } })}\n`);
        this.#ahead = { spare, made };
      });
  }

  #dropAhead(): void {
    this.#ahead?.made.jail.release();
    this.#ahead = null;
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

/** A spare still waiting for its work line. */
function waiting(spare: ChildProcess): boolean {
  return spare.exitCode === null && spare.signalCode === null && spare.stdin?.writable === true;
}
