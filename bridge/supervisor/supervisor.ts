// The supervisor runs the CLI for each turn and turns everything it does into
// record drafts (docs/design.md#d1: it knows nothing about any particular CLI). Owns the
// turn state machine, both CLI shapes, abort/stop/signals and turn-end
// detection; the process itself is supervised-process.ts's, seq/disk is the
// journal's, and frames are the server's.
//
// Contract (docs/bridge-internals.md#supervisor):
// - One turn at a time; start's checks and its `turn-start` record happen
//   synchronously in the call, so call order decides which start wins.
// - Record order per turn: turn-start, spawn (only when spawning), stdin (each
//   write, start input included), stdout/stderr lines or pty chunks, signal
//   (each signal sent), exit, turn-end — exactly one turn-end per turn-start,
//   also when the spawn fails (turn-start, then turn-end 'spawn-failed').
// - lifetime 'turn': process exit ends the turn. lifetime 'session': a turnEnd
//   matcher on a complete line (or exit) ends it and the process lives on; the
//   next start with the same argv/env/cwd/stdin/io writes its input to that
//   process. A different launch retires the old process (SIGTERM, then SIGKILL).
// - Output after a turn ended (between turns) is recorded with turnId null.
// - launch.inputAck (session only) holds a turnEnd match back while a stdin line
//   naming an id awaits the CLI's acknowledgement, for at most inputAck.maxWaitMs,
//   so a queued message's answer stays in its turn; exit, abort and stop still end
//   it (docs/bridge-internals.md#input-ack).
// Not guaranteed: turnEnd matchers are not used for lifetime 'turn' (exit ends
// those turns); for a pty they see the raw terminal text, escapes included.
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';
import type { SignalName } from '../../protocol/v1/common.ts';
import type { HostToolSpec } from '../../protocol/v1/tool-spec.ts';
import { SUPERVISOR_LIMITS, type SupervisorLimits } from '../limits.ts';
import { loadPty, type PtyImporter } from './pty.ts';
import {
  spawnPipes,
  spawnPty,
  type ProcessEvents,
  type SupervisedProcess,
  type SupervisorLogger,
} from './supervised-process.ts';
import { adoptKept, hashKey, KeptProcess, spawnKept, type KeptStart } from '../survive/kept-process.ts';
import { randomBytes } from 'node:crypto';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import { compileInputAck, compileTurnEnd, LineJson, type InputAckTest, type OutputStream, type TurnEndTest } from './turn-end-matcher.ts';

export type { SupervisorLogger } from './supervised-process.ts';

export type StartResult = { ok: true } | { ok: false; code: 'turn-busy' | 'spawn-failed' | 'stopping'; message: string };
export type TurnCommandResult = { ok: true } | { ok: false; code: 'unknown-turn' | 'no-process'; message: string };
export type SupervisorState = 'idle' | 'running' | 'stopping';
type TurnEndReason = 'matched' | 'exit' | 'aborted' | 'stopped' | 'spawn-failed';

export type SupervisorOptions = {
  emit: (draft: RecordDraft) => void;
  limits?: Partial<SupervisorLimits>;
  log?: SupervisorLogger;
  /** How node-pty is imported (default: `import('node-pty')`); tests inject a failing one. */
  ptyImporter?: PtyImporter;
  /** The state dir: launches with `survive` keep their CLI's keeper dir under `<stateDir>/keepers/`. */
  stateDir?: string;
  /** Runs `fn` once every record emitted so far is durable (a kept CLI's dir is removed only after its exit is journaled). */
  afterDurable?: (fn: () => void) => void;
};

/** A surviving CLI a restarted bridge takes over (launch `survive`; see adopt()). */
export type Adoption = {
  /** The unfinished turn running on it, or null (a session process between turns). */
  turnId: string | null;
  pid: number;
  dir: string;
  launch: LaunchSpec;
  /** The saved reuse identity (a hash: env is never written to disk). */
  key: string;
  /** Capture offsets after the last journaled piece of each stream, and whether that piece was `cont`. */
  from: KeptStart;
  cont: { stdout: boolean; stderr: boolean };
  /** The turn's stdin writes and complete output lines so far, in order, for its inputAck pending set (launch.inputAck only). */
  history: Array<{ stdin: string } | { stream: OutputStream; line: string }>;
  /** The previous bridge had begun aborting the turn (its interrupt is journaled). */
  aborting: boolean;
};

/** One spawned process and what the supervisor tracks about its output. */
type ProcEntry = {
  proc: SupervisedProcess;
  lifetime: LaunchSpec['lifetime'];
  /** Identity for reuse across turns (argv, env, cwd, stdin, io). */
  key: string;
  /** The previous piece on this stream had cont:true, so the next piece is not a complete line. */
  cont: { stdout: boolean; stderr: boolean };
  /** pty only: text of the current line, for turnEnd matching. */
  ptyLine: string;
  ptyLineOverlong: boolean;
};

type Turn = {
  turnId: string;
  launch: LaunchSpec;
  /** null while spawning (a pty launch awaits the node-pty import). */
  entry: ProcEntry | null;
  test: TurnEndTest | null;
  /** launch.inputAck compiled (lifetime 'session' with turnEnd matchers only), or null. */
  ack: InputAckTest | null;
  /** Ids of this turn's inputs the CLI has not acknowledged yet: turnEnd matches wait for them. */
  pending: Set<string>;
  /** Runs from a match held for `pending` until an ack arrives; firing ends the turn anyway. */
  ackTimer: NodeJS.Timeout | null;
  /** One JSON parse per line for `test` and `ack`. */
  json: LineJson;
  /** A prefix matcher fired on the first piece of a split line on this stream: the line's last piece ends the turn. */
  endWithLine: OutputStream | null;
  /** Set by abort/stop: the reason the turn ends with, whatever ends it. */
  ending: 'aborted' | 'stopped' | null;
  abortTimer: NodeJS.Timeout | null;
};

/**
 * A turn's state with its launch's turnEnd (lifetime 'session') and inputAck compiled over one
 * LineJson; `compiled` is not ok when a matcher does not compile (the start then fails as spawn-failed).
 */
function newTurn(turnId: string, launch: LaunchSpec, entry: ProcEntry | null): { turn: Turn; compiled: ReturnType<typeof compileTurnEnd> | { ok: true; test: null } } {
  const json = new LineJson();
  const compiled = launch.lifetime === 'session' ? compileTurnEnd(launch.turnEnd, json) : ({ ok: true, test: null } as const);
  const ack = compiled.ok && compiled.test && launch.inputAck ? compileInputAck(launch.inputAck, json) : null;
  const turn: Turn = {
    turnId,
    launch,
    entry,
    test: compiled.ok ? compiled.test : null,
    ack,
    pending: new Set(),
    ackTimer: null,
    json,
    endWithLine: null,
    ending: null,
    abortTimer: null,
  };
  return { turn, compiled };
}

const NOOP_LOG: SupervisorLogger = { debug() {}, warn() {} };

export function resolveSupervisorLimits(overrides: Partial<SupervisorLimits> = {}): SupervisorLimits {
  const limits: SupervisorLimits = { ...SUPERVISOR_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`SUPERVISOR_LIMITS.${name} must be a non-negative integer, got ${value}`);
  }
  if (limits.minLineBytes < 4) throw new RangeError(`SUPERVISOR_LIMITS.minLineBytes must be >= 4, got ${limits.minLineBytes}`);
  if (limits.maxLineBytesCeiling < limits.minLineBytes) throw new RangeError('SUPERVISOR_LIMITS.maxLineBytesCeiling must be >= minLineBytes');
  if (limits.maxLineBytes < limits.minLineBytes || limits.maxLineBytes > limits.maxLineBytesCeiling) {
    throw new RangeError(`SUPERVISOR_LIMITS.maxLineBytes must be within [minLineBytes, maxLineBytesCeiling], got ${limits.maxLineBytes}`);
  }
  if (limits.exitDrainMs < 1) throw new RangeError('SUPERVISOR_LIMITS.exitDrainMs must be >= 1');
  if (limits.inputAckMaxWaitMs < 1) throw new RangeError('SUPERVISOR_LIMITS.inputAckMaxWaitMs must be >= 1');
  return limits;
}

function checkGraceMs(graceMs: number): void {
  if (!Number.isFinite(graceMs) || graceMs < 0) throw new RangeError(`graceMs must be a finite number >= 0, got ${graceMs}`);
}

function processKey(launch: LaunchSpec): string {
  if (launch.reuseKey !== undefined) return JSON.stringify(['reuse-key', launch.reuseKey]);
  return JSON.stringify([launch.argv, launch.env ?? null, launch.cwd ?? null, launch.stdin, launch.io]);
}

/** A process entry's reuse identity: for a kept CLI its hash (saved in the keeper dir, so an adopting bridge can compare it without the env). */
function entryKey(launch: LaunchSpec): string {
  return launch.survive === true ? `sha256:${hashKey(survivorKey(launch))}` : processKey(launch);
}

/**
 * A kept CLI's identity across bridge processes: the bridge's MCP endpoint variables are left out
 * (each bridge process has its own port and token, so an adopted CLI would otherwise never be reused).
 */
function survivorKey(launch: LaunchSpec): string {
  if (launch.env === undefined) return processKey(launch);
  const env = { ...launch.env };
  delete env[MCP_ENV_V1.urlEnvVar];
  delete env[MCP_ENV_V1.tokenEnvVar];
  return processKey({ ...launch, env });
}

export class Supervisor {
  readonly limits: SupervisorLimits;
  readonly #emit: (draft: RecordDraft) => void;
  readonly #log: SupervisorLogger;
  readonly #ptyImporter: PtyImporter | undefined;
  #turn: Turn | null = null;
  /** The running turn's process, or the live lifetime:'session' process between turns. */
  #current: ProcEntry | null = null;
  /** Processes on their way out (a replaced session process); stop() waits for them too. */
  readonly #retiring = new Set<ProcEntry>();
  #stopping: Promise<void> | null = null;
  #paused = false;
  readonly #stateDir: string | undefined;
  readonly #afterDurable: (fn: () => void) => void;

  constructor(options: SupervisorOptions) {
    this.limits = resolveSupervisorLimits(options.limits);
    this.#stateDir = options.stateDir;
    this.#afterDurable = options.afterDurable ?? (() => undefined);
    this.#emit = options.emit;
    this.#log = options.log ?? NOOP_LOG;
    this.#ptyImporter = options.ptyImporter;
  }

  get state(): SupervisorState {
    if (this.#stopping) return 'stopping';
    return this.#turn ? 'running' : 'idle';
  }

  get turnId(): string | null {
    return this.#turn?.turnId ?? null;
  }

  /** A lifetime:'session' process is alive (between turns, or running the current one). */
  get hasLiveProcess(): boolean {
    const cur = this.#current;
    return cur !== null && cur.lifetime === 'session' && !cur.proc.exited;
  }

  /**
   * Starts a turn. Resolves once the process is spawned (or the input written
   * to the live session process), or the spawn failed. `input` is written to
   * stdin verbatim (add the `\n` a line-oriented CLI needs) when stdin is a pipe.
   */
  async start(
    turnId: string,
    launch: LaunchSpec,
    input?: string,
    meta?: { tools?: HostToolSpec[]; rerun?: boolean },
  ): Promise<StartResult> {
    if (this.#stopping) return { ok: false, code: 'stopping', message: 'the supervisor is stopping' };
    if (this.#turn) return { ok: false, code: 'turn-busy', message: `turn ${this.#turn.turnId} is still running` };

    const { turn, compiled } = newTurn(turnId, launch, null);
    const live = this.#current;
    const reuse =
      live !== null && !live.proc.exited && live.lifetime === 'session' && launch.lifetime === 'session' && live.key === entryKey(launch);
    if (live && !reuse && compiled.ok) this.#retire(live);

    this.#turn = turn;
    const data: { input?: string; tools?: HostToolSpec[]; argv: string[]; rerun?: boolean } = { argv: launch.argv };
    if (input !== undefined) data.input = input;
    if (meta?.tools) data.tools = meta.tools;
    if (meta?.rerun) data.rerun = true;
    this.#emit({ kind: 'turn-start', turnId, data });

    if (!compiled.ok) return this.#spawnFailed(turn, compiled.message);
    if (reuse) {
      turn.entry = live;
      this.#writeInput(turn, live, input);
      return { ok: true };
    }

    const options = { maxLineBytes: this.#lineCap(launch), exitDrainMs: this.limits.exitDrainMs, paused: this.#paused, log: this.#log };
    let entry: ProcEntry;
    if (launch.io.mode === 'pty') {
      const load = await loadPty(this.#ptyImporter);
      if (this.#turn !== turn || turn.ending) {
        // Aborted or stopped while node-pty loaded: nothing was spawned.
        this.#endTurn(turn, turn.ending ?? 'aborted');
        return this.#stopping ? { ok: false, code: 'stopping', message: 'the supervisor is stopping' } : { ok: true };
      }
      if (!load.ok) return this.#spawnFailed(turn, load.message);
      const shell = this.#newEntry(launch);
      const spawned = spawnPty(load.pty, launch, options, shell.events);
      if (!spawned.ok) return this.#spawnFailed(turn, spawned.message);
      entry = shell.attach(spawned.proc);
    } else if (launch.survive === true) {
      if (this.#stateDir === undefined) return this.#spawnFailed(turn, 'survive: this supervisor has no state dir for keeper files');
      const shell = this.#newEntry(launch);
      const spawned = await spawnKept(this.#stateDir, randomBytes(6).toString('hex'), launch, survivorKey(launch), options, shell.events);
      if (!spawned.ok) return this.#spawnFailed(turn, spawned.message);
      entry = shell.attach(spawned.proc);
      if (this.#stopping) {
        // Stopped while the keeper started: stop() did not see this process.
        spawned.proc.killGroup('SIGKILL');
        spawned.proc.begin();
        return { ok: false, code: 'stopping', message: 'the supervisor is stopping' };
      }
    } else {
      const shell = this.#newEntry(launch);
      const spawned = spawnPipes(launch, options, shell.events);
      if (!spawned.ok) return this.#spawnFailed(turn, await spawned.message);
      entry = shell.attach(spawned.proc);
    }
    this.#current = entry;
    turn.entry = entry;
    const kept = entry.proc instanceof KeptProcess ? entry.proc : null;
    this.#emit({
      kind: 'spawn',
      turnId,
      data: { pid: entry.proc.pid, argv: launch.argv, pty: entry.proc.pty, ...(kept ? { keeper: kept.keeper } : {}) },
    });
    kept?.begin();
    if (kept && turn.ending === 'aborted' && this.#turn === turn) this.#abortNow(turn, entry, this.limits.abortGraceMs);
    this.#writeInput(turn, entry, input);
    return { ok: true };
  }

  /** Writes text to the running turn's process stdin (or pty). */
  write(turnId: string, text: string): TurnCommandResult {
    const found = this.#running(turnId);
    if (!found.ok) return found;
    if (!found.entry.proc.write(text)) return { ok: false, code: 'no-process', message: 'the process has no open stdin' };
    this.#emit({ kind: 'stdin', turnId, data: { text } });
    this.#awaitAcks(this.#turn!, text);
    return { ok: true };
  }

  /** Sends a signal to the running turn's process group. */
  signal(turnId: string, signal: SignalName): TurnCommandResult {
    const found = this.#running(turnId);
    if (!found.ok) return found;
    this.#emit({ kind: 'signal', turnId, data: { signal, reason: 'host' } });
    if (!found.entry.proc.killGroup(signal)) return { ok: false, code: 'no-process', message: 'the process group is gone' };
    return { ok: true };
  }

  /**
   * Interrupts the running turn (launch.interrupt: its input, or its signal),
   * then SIGKILLs the process group if the turn has not ended after graceMs.
   * The turn ends with reason 'aborted' whatever ends it. Idempotent per turn.
   */
  abort(turnId: string, graceMs: number = this.limits.abortGraceMs): TurnCommandResult {
    checkGraceMs(graceMs);
    const turn = this.#turn;
    if (!turn || turn.turnId !== turnId) return { ok: false, code: 'unknown-turn', message: `no running turn ${turnId}` };
    if (turn.ending) return { ok: true };
    turn.ending = 'aborted';
    const entry = turn.entry;
    if (!entry) return { ok: true }; // still spawning: start() ends the turn without spawning (a kept CLI: aborts it once spawned)
    this.#abortNow(turn, entry, graceMs);
    return { ok: true };
  }

  #abortNow(turn: Turn, entry: ProcEntry, graceMs: number): void {
    this.#interrupt(turn, entry, 'abort');
    this.#armAbortKill(turn, entry, graceMs);
  }

  /** SIGKILL for the group if the aborting turn has not ended after graceMs. */
  #armAbortKill(turn: Turn, entry: ProcEntry, graceMs: number): void {
    const turnId = turn.turnId;
    turn.abortTimer = setTimeout(() => {
      turn.abortTimer = null;
      if (this.#turn !== turn || entry.proc.exited) return;
      this.#emit({ kind: 'signal', turnId, data: { signal: 'SIGKILL', reason: 'abort-grace-expired' } });
      entry.proc.killGroup('SIGKILL');
      entry.proc.resume(); // a paused process could not deliver its exit
    }, graceMs);
  }

  /**
   * Takes over a surviving CLI (launch `survive`) that the previous bridge
   * process left running: its output is read from the capture offsets the
   * journal holds, and its unfinished turn (if any) continues as if this
   * supervisor had started it — input, signals, abort, stop, turnEnd matchers,
   * the inputAck gate. Call before any start().
   */
  async adopt(adoption: Adoption): Promise<void> {
    const { launch } = adoption;
    const shell = this.#newEntry(launch);
    const options = { maxLineBytes: this.#lineCap(launch), exitDrainMs: this.limits.exitDrainMs, paused: this.#paused, log: this.#log };
    const proc = await adoptKept(adoption.dir, adoption.pid, launch, adoption.from, options, shell.events);
    const entry = shell.attach(proc);
    entry.key = adoption.key;
    entry.cont = { ...adoption.cont };
    this.#current = entry;
    if (adoption.turnId !== null) {
      const { turn } = newTurn(adoption.turnId, launch, entry);
      for (const item of turn.ack ? adoption.history : []) {
        if ('stdin' in item) this.#awaitAcks(turn, item.stdin);
        else this.#takeAck(turn, item.stream, item.line);
      }
      turn.json.forget();
      this.#turn = turn;
      if (adoption.aborting) {
        // The previous bridge had interrupted it: the turn ends 'aborted', and the grace restarts here.
        turn.ending = 'aborted';
        this.#armAbortKill(turn, entry, this.limits.abortGraceMs);
      }
    }
    proc.begin();
  }

  /**
   * Stops every process: the interrupt input (if the launch has one) and EOF on
   * stdin, SIGTERM to the group, SIGKILL after graceMs. Resolves when all are
   * gone and their exit records are emitted; a running turn ends 'stopped'.
   * The supervisor then stays 'stopping' (a later start gets 'stopping').
   */
  stop(graceMs: number = this.limits.stopGraceMs): Promise<void> {
    checkGraceMs(graceMs);
    if (this.#stopping) return this.#stopping;
    this.#stopping = this.#stopAll(graceMs);
    return this.#stopping;
  }

  /** Stops reading the CLI's output (journal backpressure); the CLI blocks once its pipe fills. */
  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    for (const entry of this.#entries()) entry.proc.pause();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    for (const entry of this.#entries()) entry.proc.resume();
  }

  async #stopAll(graceMs: number): Promise<void> {
    const turn = this.#turn;
    if (turn) {
      turn.ending ??= 'stopped'; // an abort already under way keeps its reason
      if (!turn.entry) this.#endTurn(turn, 'stopped');
    }
    const entries = this.#entries().filter((e) => !e.proc.exited);
    for (const entry of entries) {
      const turnId = this.#turnIdOf(entry);
      if (turn && turn.entry === entry && 'input' in turn.launch.interrupt) this.#interrupt(turn, entry, 'stop');
      entry.proc.endStdin();
      this.#emit({ kind: 'signal', turnId, data: { signal: 'SIGTERM', reason: 'stop' } });
      entry.proc.killGroup('SIGTERM');
    }
    const all = Promise.all(entries.map((e) => e.proc.done));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => (timer = setTimeout(() => resolve('grace'), graceMs)));
    const first = await Promise.race([all.then(() => 'done' as const), graceOver]);
    clearTimeout(timer);
    if (first === 'grace') {
      for (const entry of entries) {
        if (entry.proc.exited) continue;
        this.#emit({ kind: 'signal', turnId: this.#turnIdOf(entry), data: { signal: 'SIGKILL', reason: 'stop-grace-expired' } });
        entry.proc.killGroup('SIGKILL');
        entry.proc.resume(); // a paused process could not deliver its exit
      }
      await all;
    }
  }

  #entries(): ProcEntry[] {
    const list = [...this.#retiring];
    if (this.#current) list.unshift(this.#current);
    return list;
  }

  #running(turnId: string): { ok: true; entry: ProcEntry } | { ok: false; code: 'unknown-turn' | 'no-process'; message: string } {
    const turn = this.#turn;
    if (!turn || turn.turnId !== turnId) return { ok: false, code: 'unknown-turn', message: `no running turn ${turnId}` };
    if (!turn.entry || turn.entry.proc.exited) return { ok: false, code: 'no-process', message: 'the turn has no live process' };
    return { ok: true, entry: turn.entry };
  }

  #turnIdOf(entry: ProcEntry): string | null {
    const turn = this.#turn;
    return turn !== null && turn.entry === entry ? turn.turnId : null;
  }

  #lineCap(launch: LaunchSpec): number {
    const wanted = launch.io.mode === 'pipes' ? launch.io.maxLineBytes : undefined;
    if (wanted === undefined) return this.limits.maxLineBytes;
    return Math.min(Math.max(wanted, this.limits.minLineBytes), this.limits.maxLineBytesCeiling);
  }

  #writeInput(turn: Turn, entry: ProcEntry, input: string | undefined): void {
    if (input === undefined || input === '' || !entry.proc.hasStdin) return;
    if (!entry.proc.write(input)) return;
    this.#emit({ kind: 'stdin', turnId: turn.turnId, data: { text: input } });
    this.#awaitAcks(turn, input);
  }

  /** inputAck: the ids this write names stay pending until the CLI acknowledges them. */
  #awaitAcks(turn: Turn, text: string): void {
    if (!turn.ack || turn.ending) return;
    for (const id of turn.ack.inputIds(text)) turn.pending.add(id);
  }

  /** A complete line: the ack it carries, if any, is taken before the turnEnd test sees the line. */
  #takeAck(turn: Turn, stream: OutputStream, line: string): void {
    if (!turn.ack || turn.pending.size === 0) return;
    const id = turn.ack.ackedId(stream, line);
    if (id === undefined || !turn.pending.delete(id)) return;
    // The CLI is taking inputs up: a held match no longer times out (the next held match waits afresh).
    if (turn.ackTimer) clearTimeout(turn.ackTimer);
    turn.ackTimer = null;
  }

  /** A turnEnd match ends the turn unless inputs are still unacknowledged (an aborting or stopping turn never waits). */
  #matched(turn: Turn): void {
    if (turn.pending.size > 0 && !turn.ending) {
      this.#log.debug({ turnId: turn.turnId, pending: turn.pending.size }, 'turn end held: inputs not yet acknowledged');
      turn.ackTimer ??= this.#ackWait(turn);
      return;
    }
    this.#endTurn(turn, turn.ending ?? 'matched');
  }

  /** The bound on a held match: no ack within maxWaitMs ends the turn there, naming the ids never acknowledged. */
  #ackWait(turn: Turn): NodeJS.Timeout {
    const waitMs = turn.launch.inputAck?.maxWaitMs ?? this.limits.inputAckMaxWaitMs;
    return setTimeout(() => {
      turn.ackTimer = null;
      if (this.#turn !== turn) return;
      const unacknowledged = [...turn.pending];
      this.#log.warn({ turnId: turn.turnId, unacknowledged, waitMs }, 'turn ended at a held match: inputs never acknowledged');
      this.#endTurn(turn, turn.ending ?? 'matched', undefined, undefined, unacknowledged);
    }, waitMs);
  }

  #interrupt(turn: Turn, entry: ProcEntry, reason: string): void {
    const how = turn.launch.interrupt;
    if ('input' in how) {
      if (entry.proc.write(how.input)) {
        this.#emit({ kind: 'stdin', turnId: turn.turnId, data: { text: how.input } });
        return;
      }
    }
    const signal: SignalName = 'signal' in how ? how.signal : 'SIGINT';
    this.#emit({ kind: 'signal', turnId: turn.turnId, data: { signal, reason } });
    entry.proc.killGroup(signal);
  }

  #spawnFailed(turn: Turn, message: string): StartResult {
    this.#log.warn({ turnId: turn.turnId, argv0: turn.launch.argv[0], message }, 'spawn failed');
    this.#endTurn(turn, 'spawn-failed', undefined, message);
    return { ok: false, code: 'spawn-failed', message };
  }

  #endTurn(turn: Turn, reason: TurnEndReason, code?: number | null, message?: string, unacknowledged?: string[]): void {
    if (this.#turn !== turn) return;
    if (turn.abortTimer) clearTimeout(turn.abortTimer);
    turn.abortTimer = null;
    if (turn.ackTimer) clearTimeout(turn.ackTimer);
    turn.ackTimer = null;
    this.#turn = null;
    const data: { reason: TurnEndReason; code?: number | null; message?: string; unacknowledged?: string[] } = { reason };
    if (code !== undefined) data.code = code;
    if (message !== undefined) data.message = message;
    if (unacknowledged !== undefined) data.unacknowledged = unacknowledged;
    this.#emit({ kind: 'turn-end', turnId: turn.turnId, data });
  }

  /** A session process that does not fit the next launch: EOF, SIGTERM, SIGKILL after stopGraceMs. */
  #retire(entry: ProcEntry): void {
    if (this.#current === entry) this.#current = null;
    this.#retiring.add(entry);
    entry.proc.endStdin();
    this.#emit({ kind: 'signal', turnId: null, data: { signal: 'SIGTERM', reason: 'replaced' } });
    entry.proc.killGroup('SIGTERM');
    const timer = setTimeout(() => {
      if (entry.proc.exited) return;
      this.#emit({ kind: 'signal', turnId: null, data: { signal: 'SIGKILL', reason: 'replaced-grace-expired' } });
      entry.proc.killGroup('SIGKILL');
    }, this.limits.stopGraceMs);
    timer.unref();
    void entry.proc.done.then(() => clearTimeout(timer));
  }

  /** Event handlers for a process about to be spawned; `attach` completes the entry once it exists. */
  #newEntry(launch: LaunchSpec): { events: ProcessEvents; attach(proc: SupervisedProcess): ProcEntry } {
    let entry: ProcEntry | null = null;
    const events: ProcessEvents = {
      line: (stream, text, cont, off) => entry && this.#onLine(entry, stream, text, cont, off),
      chunk: (text) => entry && this.#onChunk(entry, text),
      exit: (code, signal) => entry && this.#onExit(entry, code, signal),
    };
    return {
      events,
      attach: (proc) => {
        entry = {
          proc,
          lifetime: launch.lifetime,
          key: entryKey(launch),
          cont: { stdout: false, stderr: false },
          ptyLine: '',
          ptyLineOverlong: false,
        };
        return entry;
      },
    };
  }

  #onLine(entry: ProcEntry, stream: OutputStream, text: string, cont: boolean, off: number | undefined): void {
    const turnId = this.#turnIdOf(entry);
    const data: { text: string; cont?: boolean; off?: number } = cont ? { text, cont: true } : { text };
    if (off !== undefined) data.off = off;
    this.#emit(stream === 'stdout' ? { kind: 'stdout', turnId, data } : { kind: 'stderr', turnId, data });
    const first = !entry.cont[stream];
    entry.cont[stream] = cont;
    const turn = this.#turn;
    if (turn === null || turnId === null || turn.test === null || entry.lifetime !== 'session') return;
    if (first && !cont) {
      this.#takeAck(turn, stream, text);
      const ends = turn.test(stream, text);
      turn.json.forget();
      if (ends) this.#matched(turn);
    } else if (!first && !cont && turn.endWithLine === stream) {
      turn.endWithLine = null;
      this.#matched(turn);
    } else if (first && cont && turn.test(stream, text, false)) {
      turn.endWithLine = stream; // a prefix matcher saw the start of an over-long line
    }
  }

  #onChunk(entry: ProcEntry, text: string): void {
    this.#emit({ kind: 'pty', turnId: this.#turnIdOf(entry), data: { text } });
    if (entry.lifetime !== 'session') return;
    // Line-match a pty's text for turnEnd; the current line is capped like a pipe line.
    let buf = entry.ptyLine + text;
    let start = 0;
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n', start)) {
      const overlong = entry.ptyLineOverlong;
      entry.ptyLineOverlong = false;
      let line = buf.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      const turn = this.#turn;
      if (overlong || !turn?.test || turn.entry !== entry) continue;
      this.#takeAck(turn, 'stdout', line);
      const ends = turn.test('stdout', line);
      turn.json.forget();
      if (ends) this.#matched(turn);
    }
    buf = buf.slice(start);
    if (buf.length > this.limits.maxLineBytes) {
      entry.ptyLineOverlong = true;
      buf = '';
    }
    entry.ptyLine = buf;
  }

  #onExit(entry: ProcEntry, code: number | null, signal: string | null): void {
    const turnId = this.#turnIdOf(entry);
    this.#emit({ kind: 'exit', turnId, data: { pid: entry.proc.pid, code, signal } });
    const proc = entry.proc;
    if (proc instanceof KeptProcess) this.#afterDurable(() => proc.cleanUp());
    if (this.#current === entry) this.#current = null;
    this.#retiring.delete(entry);
    const turn = this.#turn;
    if (turn && turn.entry === entry) this.#endTurn(turn, turn.ending ?? 'exit', code);
  }
}
