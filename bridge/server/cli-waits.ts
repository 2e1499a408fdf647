// Host calls the bridge cannot see by itself (protocol/v1/frames/host/host-wait.ts): a stdin-driven
// host tool call or a CLI's approval request travels over the CLI's own stdio, so only the host's
// `host-wait` frame tells the bridge the CLI waits on a host. Kept here so the owner-less timeout
// (owner-watch.ts) covers them as it covers MCP calls: `fail` writes the host's pre-encoded error
// answer to the CLI and journals a failed `tool-result` / `approval`, so a resuming host reads the
// call as answered (never delivers it again as live). An answer after that is refused, not kept.
import type { HostWaitFrame, RecordDraft } from '../../protocol/v1/index.ts';
import type { CommandResult, SupervisorPort } from './server-seams.ts';

export type CliWait = Pick<HostWaitFrame, 'turnId' | 'callId' | 'kind' | 'onTimeout'>;

export const CLI_WAITS_LIMITS = {
  /** Waiting calls held at once (as MCP_LIMITS.maxPendingCalls): a host cannot grow the map without bound. */
  maxWaits: 64,
  /** Ids of calls the timeout failed, remembered to refuse a late answer (oldest forgotten first). */
  maxFailed: 256,
} as const;

export class CliWaits {
  readonly #waits = new Map<string, CliWait>();
  readonly #failed = new Set<string>();
  readonly #supervisor: Pick<SupervisorPort, 'write'>;
  readonly #record: ((draft: RecordDraft) => unknown) | undefined;

  constructor(supervisor: Pick<SupervisorPort, 'write'>, record: ((draft: RecordDraft) => unknown) | undefined) {
    this.#supervisor = supervisor;
    this.#record = record;
  }

  get size(): number {
    return this.#waits.size;
  }

  ids(): string[] {
    return [...this.#waits.keys()];
  }

  add(wait: CliWait): CommandResult {
    if (this.#waits.has(wait.callId)) return { ok: true };
    if (this.#failed.has(wait.callId)) return { ok: false, code: 'unknown-call', message: `call ${wait.callId} was already failed by the owner-less timeout` };
    if (this.#waits.size >= CLI_WAITS_LIMITS.maxWaits) {
      return { ok: false, code: 'queue-full', message: `too many host calls waiting (${CLI_WAITS_LIMITS.maxWaits})` };
    }
    this.#waits.set(wait.callId, { turnId: wait.turnId, callId: wait.callId, kind: wait.kind, onTimeout: wait.onTimeout });
    return { ok: true };
  }

  /** The host answers `callId` (an `input` frame naming it): null to go on and write, or why not. */
  answer(callId: string, turnId: string, result?: { output: unknown; isError: boolean }): CommandResult | null {
    if (this.#failed.has(callId)) {
      return { ok: false, code: 'unknown-call', message: `call ${callId} was failed by the owner-less timeout (no host was attached); the CLI already read its error answer` };
    }
    this.#waits.delete(callId);
    // The result the bytes encode, journaled before them (input.ts `answer`): the journal names the answer as for an MCP call.
    if (result) this.#record?.({ kind: 'tool-result', turnId, data: { callId, output: result.output ?? null, isError: result.isError } });
    return null;
  }

  /** No turn runs: nothing waits any more (the CLI that asked is done with its turn). */
  clear(): void {
    this.#waits.clear();
  }

  /** The owner-less timeout: the CLI reads the host's error answer; the journal says the call failed. */
  fail(callId: string, reason: string): void {
    const wait = this.#waits.get(callId);
    if (!wait) return;
    this.#waits.delete(callId);
    this.#failed.add(callId);
    if (this.#failed.size > CLI_WAITS_LIMITS.maxFailed) this.#failed.delete(this.#failed.values().next().value!);
    // Journaled before the bytes, so a host that replays sees the call answered by the time the CLI reacts.
    this.#record?.(
      wait.kind === 'tool-call'
        ? { kind: 'tool-result', turnId: wait.turnId, data: { callId, output: reason, isError: true } }
        : { kind: 'approval', turnId: wait.turnId, data: { callId, approved: false, reason } },
    );
    void Promise.resolve(this.#supervisor.write(wait.turnId, wait.onTimeout)).catch(() => undefined); // a turn that ended meanwhile: nothing waits
  }
}
