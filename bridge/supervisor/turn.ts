// One turn as the supervisor runs it: its launch and process, what ends it — the turnEnd matchers
// (lifetime 'session') on each complete output line, held back by the inputAck gate
// (docs/bridge-internals.md#input-ack) — and how it is interrupted (abort: interrupt, then SIGKILL
// after the grace). Starting turns, processes and the turn-end record are supervisor.ts's.
import type { SignalName } from '../../protocol/v1/common.ts';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { compileInputAck, type InputAckTest } from './input-ack.ts';
import { LineJson, type OutputStream } from './output-line.ts';
import type { ProcEntry } from './proc-entry.ts';
import type { SupervisorLogger } from './supervised-process.ts';
import { compileTurnEnd, type CompileResult, type TurnEndTest } from './turn-end-matcher.ts';

export type TurnEndReason = 'matched' | 'exit' | 'aborted' | 'stopped' | 'spawn-failed' | 'capped';

/** What a turn needs from the supervisor running it (Supervisor's #turnContext). */
export type TurnContext = {
  /** Journals a draft (the supervisor's emit). */
  readonly emit: (draft: RecordDraft) => void;
  readonly log: SupervisorLogger;
  /** limits.inputAckMaxWaitMs: how long a held match waits when the launch's inputAck does not say. */
  readonly inputAckMaxWaitMs: number;
  /** Whether `turn` is still the running one (its timers act only while it is). */
  readonly isRunning: (turn: Turn) => boolean;
  /** Ends `turn` with its turn-end record if it is still the running one (Supervisor's #endTurn). */
  readonly end: (turn: Turn, reason: TurnEndReason, code?: number | null, message?: string, unacknowledged?: string[]) => void;
};

export class Turn {
  readonly turnId: string;
  readonly launch: LaunchSpec;
  /** null while spawning (a pty launch awaits the node-pty import). */
  entry: ProcEntry | null;
  readonly test: TurnEndTest | null;
  /** launch.inputAck compiled (lifetime 'session' with turnEnd matchers only), or null. */
  readonly ack: InputAckTest | null;
  /** Ids of this turn's inputs the CLI has not acknowledged yet: turnEnd matches wait for them. */
  readonly pending = new Set<string>();
  /** Runs from a match held for `pending` until an ack arrives; firing ends the turn anyway. */
  ackTimer: NodeJS.Timeout | null = null;
  /** One JSON parse per line for `test` and `ack`. */
  readonly json: LineJson;
  /** A prefix matcher fired on the first piece of a split line on this stream: the line's last piece ends the turn. */
  endWithLine: OutputStream | null = null;
  /** Set by abort/stop/cap: the reason the turn ends with, whatever ends it. */
  ending: 'aborted' | 'stopped' | 'capped' | null = null;
  /** With ending 'capped': which cap, in words (the turn-end record's message). */
  endingMessage: string | undefined = undefined;
  abortTimer: NodeJS.Timeout | null = null;
  readonly #context: TurnContext;

  /**
   * A turn's state with its launch's turnEnd (lifetime 'session') and inputAck compiled over one
   * LineJson; `compiled` is not ok when a matcher does not compile (the start then fails as spawn-failed).
   */
  static create(context: TurnContext, turnId: string, launch: LaunchSpec, entry: ProcEntry | null): { turn: Turn; compiled: CompileResult } {
    const json = new LineJson();
    const compiled = launch.lifetime === 'session' ? compileTurnEnd(launch.turnEnd, json) : ({ ok: true, test: null } as const);
    const ack = compiled.ok && compiled.test && launch.inputAck ? compileInputAck(launch.inputAck, json) : null;
    return { turn: new Turn(context, turnId, launch, entry, compiled.ok ? compiled.test : null, ack, json), compiled };
  }

  private constructor(
    context: TurnContext,
    turnId: string,
    launch: LaunchSpec,
    entry: ProcEntry | null,
    test: TurnEndTest | null,
    ack: InputAckTest | null,
    json: LineJson,
  ) {
    this.#context = context;
    this.turnId = turnId;
    this.launch = launch;
    this.entry = entry;
    this.test = test;
    this.ack = ack;
    this.json = json;
  }

  /** inputAck: the ids this write names stay pending until the CLI acknowledges them. */
  awaitAcks(text: string): void {
    if (!this.ack || this.ending) return;
    for (const id of this.ack.inputIds(text)) this.pending.add(id);
  }

  /** A complete line: the ack it carries, if any, is taken before the turnEnd test sees the line. */
  takeAck(stream: OutputStream, line: string): void {
    if (!this.ack || this.pending.size === 0) return;
    const id = this.ack.ackedId(stream, line);
    if (id === undefined || !this.pending.delete(id)) return;
    // The CLI is taking inputs up: a held match no longer times out (the next held match waits afresh).
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
  }

  /** A complete output line of the turn's process: its ack is taken, then the turnEnd matchers see it. */
  completeLine(stream: OutputStream, line: string): void {
    if (this.test === null) return;
    this.takeAck(stream, line);
    const ends = this.test(stream, line);
    this.json.forget();
    if (ends) this.#matched();
  }

  /**
   * A line or `cont` piece from the turn's process (`first`: it begins a line). A match is a whole
   * matching line, or the last piece of a line whose first piece a prefix matcher matched.
   */
  piece(stream: OutputStream, text: string, first: boolean, cont: boolean): void {
    if (this.test === null) return;
    if (first && !cont) {
      this.completeLine(stream, text);
    } else if (!first && !cont && this.endWithLine === stream) {
      this.endWithLine = null;
      this.#matched();
    } else if (first && cont && this.test(stream, text, false)) {
      this.endWithLine = stream; // a prefix matcher saw the start of an over-long line
    }
  }

  /** A turnEnd match ends the turn unless inputs are still unacknowledged (an aborting or stopping turn never waits). */
  #matched(): void {
    if (this.pending.size > 0 && !this.ending) {
      this.#context.log.debug({ turnId: this.turnId, pending: this.pending.size }, 'turn end held: inputs not yet acknowledged');
      this.ackTimer ??= this.#ackWait();
      return;
    }
    this.#context.end(this, this.ending ?? 'matched');
  }

  /** The bound on a held match: no ack within maxWaitMs ends the turn there, naming the ids never acknowledged. */
  #ackWait(): NodeJS.Timeout {
    const waitMs = this.launch.inputAck?.maxWaitMs ?? this.#context.inputAckMaxWaitMs;
    return setTimeout(() => {
      this.ackTimer = null;
      if (!this.#context.isRunning(this)) return;
      const unacknowledged = [...this.pending];
      this.#context.log.warn({ turnId: this.turnId, unacknowledged, waitMs }, 'turn ended at a held match: inputs never acknowledged');
      this.#context.end(this, this.ending ?? 'matched', undefined, undefined, unacknowledged);
    }, waitMs);
  }

  /** launch.interrupt: its input written to the process if it can be, else its signal (SIGINT by default) to the group. */
  interrupt(entry: ProcEntry, reason: string): void {
    const how = this.launch.interrupt;
    if ('input' in how) {
      if (entry.proc.write(how.input)) {
        this.#context.emit({ kind: 'stdin', turnId: this.turnId, data: { text: how.input } });
        return;
      }
    }
    const signal: SignalName = 'signal' in how ? how.signal : 'SIGINT';
    this.#context.emit({ kind: 'signal', turnId: this.turnId, data: { signal, reason } });
    entry.proc.killGroup(signal);
  }

  /** Abort: the interrupt, then SIGKILL for the group if the turn has not ended after graceMs. */
  abortNow(entry: ProcEntry, graceMs: number): void {
    this.interrupt(entry, 'abort');
    this.armAbortKill(entry, graceMs);
  }

  /** SIGKILL for the group if the aborting turn has not ended after graceMs. */
  armAbortKill(entry: ProcEntry, graceMs: number): void {
    const turnId = this.turnId;
    this.abortTimer = setTimeout(() => {
      this.abortTimer = null;
      if (!this.#context.isRunning(this) || entry.proc.exited) return;
      this.#context.emit({ kind: 'signal', turnId, data: { signal: 'SIGKILL', reason: 'abort-grace-expired' } });
      entry.proc.killGroup('SIGKILL');
      entry.proc.resume(); // a paused process could not deliver its exit
    }, graceMs);
  }

  /** The turn ended: neither its abort kill nor its held match may fire any more. */
  clearTimers(): void {
    if (this.abortTimer) clearTimeout(this.abortTimer);
    this.abortTimer = null;
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = null;
  }
}
