// What the bridge does while no host owns its stream (docs/bridge-internals.md#no-owner):
// - idle exit: detached, no turn running and no call waiting, for idleExitMs → a clean `stop`
//   (the CLI is stopped, the journal closed and kept, so the next host takes the replay rung);
// - owner-less tool calls: a host tool call that has had no owner for ownerlessToolMs is answered
//   with an error result (journaled like any answer), so a turn whose host died does not wait forever;
//   a CLI-side call (a stdin tool call or a CLI's approval the host named with `host-wait`,
//   cli-waits.ts) gets the host's pre-encoded error answer or denial on its stdin the same way.
//   Off by default: a call waiting durably for a host that suspended is the design (docs/design.md#d6).
import type { ToolResultFrame } from '../../protocol/v1/index.ts';
import type { CliWaits } from './cli-waits.ts';
import type { Logger } from '../logger.ts';
import type { OwnerPolicy, PendingCall } from './server-seams.ts';

export const OWNER_WATCH_DEFAULTS = {
  /**
   * A detached bridge with nothing to do exits after this long. 30 minutes: longer than a host
   * takes to come back from a crash or a deploy, short enough that abandoned sessions do not keep a
   * bridge and its CLI for good. The journal stays, so nothing is lost by exiting.
   */
  idleExitMs: 30 * 60_000,
} as const;

export type OwnerWatchPort = {
  hasOwner(): boolean;
  /** No turn is running (the supervisor is idle). */
  idle(): boolean;
  readonly pendingCalls: Map<string, PendingCall>;
  /** CLI-side calls the host named (stdin tool calls, CLI approvals): failed by the same timeout. */
  readonly cliWaits: Pick<CliWaits, 'size' | 'ids' | 'fail' | 'clear'>;
  stop(reason: string): void;
};

/** Reads the policy from the bridge's environment (the host kit sets it at spawn); a bad value is a RangeError. */
export function ownerPolicyFromEnv(env: NodeJS.ProcessEnv): OwnerPolicy {
  const read = (name: string): number | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer (ms), got ${text}`);
    return value;
  };
  const idleExitMs = read('HARNESS_BRIDGE_IDLE_EXIT_MS');
  const ownerlessToolMs = read('HARNESS_BRIDGE_OWNERLESS_TOOL_MS');
  return { ...(idleExitMs === undefined ? {} : { idleExitMs }), ...(ownerlessToolMs === undefined ? {} : { ownerlessToolMs }) };
}

export class OwnerWatch {
  readonly #idleExitMs: number;
  readonly #ownerlessToolMs: number | undefined;
  readonly #port: OwnerWatchPort;
  readonly #log: Logger;
  readonly #timer: NodeJS.Timeout;
  /** Since when nothing at all happened without an owner (undefined: not idle). */
  #idleSince: number | undefined;
  /** When each waiting call was first seen without an owner. */
  readonly #orphaned = new Map<string, number>();
  #stopped = false;

  constructor(policy: OwnerPolicy, port: OwnerWatchPort, log: Logger) {
    this.#idleExitMs = policy.idleExitMs ?? OWNER_WATCH_DEFAULTS.idleExitMs;
    this.#ownerlessToolMs = policy.ownerlessToolMs;
    this.#port = port;
    this.#log = log;
    // A tenth of the shortest period, within [50 ms, 5 s]: an exit or a failed call comes at most that late.
    const shortest = Math.min(this.#idleExitMs, this.#ownerlessToolMs ?? Infinity);
    this.#timer = setInterval(() => this.check(Date.now()), Math.min(5_000, Math.max(50, Math.floor(shortest / 10))));
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
  }

  /** One look (the timer's; tests call it with their own clock). */
  check(now: number): void {
    if (this.#stopped) return;
    const port = this.#port;
    if (port.hasOwner()) {
      this.#idleSince = undefined;
      this.#orphaned.clear();
      return;
    }
    if (port.idle()) port.cliWaits.clear(); // no turn: no CLI waits on its stdin any more
    this.#failOrphanedCalls(now);
    if (!port.idle() || port.pendingCalls.size > 0) {
      this.#idleSince = undefined;
      return;
    }
    this.#idleSince ??= now;
    if (now - this.#idleSince < this.#idleExitMs) return;
    this.#stopped = true;
    this.close();
    this.#log.info({ idleExitMs: this.#idleExitMs }, 'no owner and no turn for idleExitMs; stopping (journal kept for replay)');
    port.stop(`idle for ${this.#idleExitMs} ms without a host`);
  }

  #failOrphanedCalls(now: number): void {
    const limit = this.#ownerlessToolMs;
    if (limit === undefined) return;
    const port = this.#port;
    const calls = port.pendingCalls;
    const cliIds = new Set(port.cliWaits.ids().map((id) => `cli:${id}`));
    for (const key of this.#orphaned.keys()) if (!calls.has(key) && !cliIds.has(key)) this.#orphaned.delete(key);
    for (const key of cliIds) {
      const since = this.#orphaned.get(key) ?? now;
      this.#orphaned.set(key, since);
      if (now - since < limit) continue;
      this.#orphaned.delete(key);
      const callId = key.slice('cli:'.length);
      this.#log.warn({ callId, ownerlessToolMs: limit }, 'host call over the CLI\'s stdio had no host for ownerlessToolMs; failing it');
      port.cliWaits.fail(callId, `no host answered this call: the session had no host attached for ${limit} ms`);
    }
    for (const [callId, call] of calls) {
      if (call.kind !== 'tool-call') continue;
      const since = this.#orphaned.get(callId) ?? now;
      this.#orphaned.set(callId, since);
      if (now - since < limit) continue;
      calls.delete(callId);
      this.#orphaned.delete(callId);
      this.#log.warn({ callId, ownerlessToolMs: limit }, 'host tool call had no host for ownerlessToolMs; failing it');
      const frame: ToolResultFrame = {
        type: 'tool-result',
        callId,
        output: `no host answered this call: the session had no host attached for ${limit} ms`,
        isError: true,
      };
      call.answer(frame);
    }
  }
}
