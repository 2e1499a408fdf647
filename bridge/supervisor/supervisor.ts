// The supervisor runs the CLI for each turn and turns everything it does into
// record drafts (docs/design.md#d1: it knows nothing about any particular CLI). Owns the
// turn state machine: starting turns (both CLI shapes), input, signals, abort, stop,
// adoption, and records from process events. One turn's end conditions and interrupt
// are turn.ts's; the processes (current, retiring, pause) process-set.ts's and
// proc-entry.ts's; spawning one spawn-process.ts's, stopping them stop-processes.ts's;
// one process supervised-process.ts's; seq/disk the journal's.
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
import { resolveSupervisorLimits, type SupervisorLimits } from '../limits.ts';
import { loadPty, type PtyImporter } from './pty.ts';
import type { SupervisorLogger } from './supervised-process.ts';
import { spawnProcess } from './spawn-process.ts';
import { stopProcesses } from './stop-processes.ts';
import type { Adoption } from '../survive/adoption.ts';
import { adoptKept, KeptProcess } from '../survive/kept-process.ts';
import { SpareKeepers } from '../survive/spare-keeper.ts';
import { JailsAhead } from './jails-ahead.ts';
import { keptLaunch } from '../survive/relay-launch.ts';
import { randomBytes } from 'node:crypto';
import type { OutputStream } from './output-line.ts';
import { entryKey, newEntry, ptyLines, type EntryHandlers, type ProcEntry } from './proc-entry.ts';
import { ProcessSet } from './process-set.ts';
import { Turn, type TurnContext, type TurnEndReason } from './turn.ts';
import { NO_JAIL, type CliJail, type Jailed } from '../jail/cli-jail.ts';
import { withStdinSecrets, type GateWrite } from './process-start.ts';

export type { SupervisorLogger } from './supervised-process.ts';

export type StartResult = { ok: true } | { ok: false; code: 'turn-busy' | 'spawn-failed' | 'stopping' | 'journal-cap'; message: string };
export type TurnCommandResult = { ok: true } | { ok: false; code: 'unknown-turn' | 'no-process'; message: string };
export type SupervisorState = 'idle' | 'running' | 'stopping';

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
  /** How a CLI is separated from the bridge (docs/security.md); default none (the launch as sent). */
  jail?: CliJail;
};

const NOOP_LOG: SupervisorLogger = { debug() {}, warn() {} };

function checkGraceMs(graceMs: number): void {
  if (!Number.isFinite(graceMs) || graceMs < 0) throw new RangeError(`graceMs must be a finite number >= 0, got ${graceMs}`);
}

export class Supervisor {
  readonly limits: SupervisorLimits;
  readonly #emit: (draft: RecordDraft) => void;
  readonly #log: SupervisorLogger;
  readonly #ptyImporter: PtyImporter | undefined;
  #turn: Turn | null = null;
  readonly #processes: ProcessSet;
  #stopping: Promise<void> | null = null;
  /** Set once the session's journal cap is hit: why starts are refused. */
  #refusal: string | null = null;
  /** Keeper processes for kept CLIs, one started ahead (survive/spare-keeper.ts). */
  readonly #keepers: SpareKeepers | undefined;
  /** What a kept CLI's jail is made ahead for (jails-ahead.ts). */
  readonly #ahead: JailsAhead;
  readonly #afterDurable: (fn: () => void) => void;
  readonly #jail: CliJail;
  /** What each process's events do (proc-entry.ts's newEntry). */
  readonly #handlers: EntryHandlers = {
    line: (entry, stream, text, cont, off) => this.#onLine(entry, stream, text, cont, off),
    chunk: (entry, text, off) => this.#onChunk(entry, text, off),
    exit: (entry, code, signal) => this.#onExit(entry, code, signal),
  };
  /** What each turn reaches the supervisor through (turn.ts's Turn). */
  readonly #turnContext: TurnContext;

  constructor(options: SupervisorOptions) {
    this.limits = resolveSupervisorLimits(options.limits);
    this.#keepers = options.stateDir === undefined ? undefined : new SpareKeepers(options.stateDir);
    this.#afterDurable = options.afterDurable ?? (() => undefined);
    this.#jail = options.jail ?? NO_JAIL;
    this.#ahead = new JailsAhead(this.#keepers, this.#jail, () => this.#stopping !== null);
    this.#emit = options.emit;
    this.#log = options.log ?? NOOP_LOG;
    this.#ptyImporter = options.ptyImporter;
    this.#processes = new ProcessSet(this.#emit, this.limits, this.#log);
    this.#turnContext = {
      emit: this.#emit,
      log: this.#log,
      inputAckMaxWaitMs: this.limits.inputAckMaxWaitMs,
      isRunning: (turn) => this.#turn === turn,
      end: (turn, reason, code, message, unacknowledged) => this.#endTurn(turn, reason, code, message, unacknowledged),
    };
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
    const cur = this.#processes.current;
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
    if (this.#refusal !== null) return { ok: false, code: 'journal-cap', message: this.#refusal };

    const { turn, compiled } = Turn.create(this.#turnContext, turnId, launch, null);
    const live = this.#processes.current;
    const reuse =
      live !== null && !live.proc.exited && live.lifetime === 'session' && launch.lifetime === 'session' && live.key === entryKey(launch);
    if (live && !reuse && compiled.ok) this.#processes.retire(live);

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

    // What is spawned is the jail's launch (docs/security.md): the CLI's dirs, its uid, its namespace.
    // The host's launch stays what is journaled and what reuse compares; a kept CLI's MCP URL may name its keeper's relay.
    // A kept CLI's keeper process starts now, while the jail prepares (spare-keeper.ts), unless one waits.
    if (launch.survive === true) this.#keepers?.refill(this.#jail.egress !== undefined);
    const keeperId = randomBytes(6).toString('hex');
    // A kept launch may take the jail the spare keeper started ahead (docs/bridge-internals.md#jail-ahead): its MCP
    // relay takes that jail's port, and the jail fits when the launch's key is that jail's. One that is gone by the
    // time the keeper looks (killed, or its relay's port taken) is made again, the usual way; so is a spawn whose
    // keeper found a port taken before its CLI ran (another session's keeper picked the same one), with new ports.
    const ahead = await this.#ahead.forSpawn(launch);
    let jailed: Jailed;
    let load: Awaited<ReturnType<typeof loadPty>> | null;
    let spawned: Awaited<ReturnType<typeof spawnProcess>>;
    for (let attempt = 1; ; attempt++) {
      const first = attempt === 1;
      const { launch: toJail, relay } = await keptLaunch(launch, keeperId, first ? ahead.relayPort : undefined);
      const preparing = this.#jail.prepare(toJail, first ? ahead.claim : undefined);
      jailed = preparing instanceof Promise ? await preparing : preparing;
      // node-pty loads on the first pty launch that is not kept (a keeper loads its own).
      load = jailed.ok && launch.io.mode === 'pty' && launch.survive !== true ? await loadPty(this.#ptyImporter) : null;
      if (this.#turn !== turn || turn.ending) {
        // Aborted or stopped while the jail was prepared or node-pty loaded: nothing was spawned.
        if (jailed.ok) jailed.release?.();
        this.#endTurn(turn, turn.ending ?? 'aborted');
        return this.#stopping ? { ok: false, code: 'stopping', message: 'the supervisor is stopping' } : { ok: true };
      }
      if (!jailed.ok) return this.#spawnFailed(turn, jailed.message);
      if (load && !load.ok) return this.#spawnFailed(turn, load.message, jailed.release);
      if (launch.survive === true && this.#keepers === undefined) return this.#spawnFailed(turn, 'survive: this supervisor has no state dir for keeper files', jailed.release);
      spawned = await spawnProcess({
        launch,
        spawnAs: jailed.launch,
        options: {
          ...this.#processes.options(launch),
          ...(jailed.credentials ? { credentials: jailed.credentials } : {}),
          ...(jailed.signal ? { signal: jailed.signal } : {}),
        },
        handlers: this.#handlers,
        ...(launch.survive === true
          ? { kept: { keepers: this.#keepers!, keeperId, ...(relay ? { relay } : {}), ...(jailed.keptEgress ? { egress: jailed.keptEgress } : {}), ...(jailed.ahead ? { ahead: jailed.ahead } : {}) } }
          : {}),
        ...(load?.ok ? { pty: load.pty } : {}),
      });
      if (spawned.ok || !spawned.again || attempt >= this.limits.keptSpawnAttempts) break;
      jailed.release?.();
      this.#log.warn({ reason: spawned.message, attempt }, 'spawn: nothing ran (a jail started ahead gone, or a port taken); spawning again');
    }
    if (!spawned.ok) return this.#spawnFailed(turn, spawned.message, jailed.release);
    this.#ahead.spawned(launch);
    const { entry } = spawned;
    if (entry.proc instanceof KeptProcess && this.#stopping) {
      // Stopped while the keeper started: stop() did not see this process.
      entry.proc.killGroup('SIGKILL');
      entry.proc.begin();
      return { ok: false, code: 'stopping', message: 'the supervisor is stopping' };
    }
    this.#processes.current = entry;
    turn.entry = entry;
    if (jailed.release) void entry.proc.done.then(jailed.release);
    const kept = entry.proc instanceof KeptProcess ? entry.proc : null;
    this.#emit({
      kind: 'spawn',
      turnId,
      data: { pid: entry.proc.pid, argv: launch.argv, pty: entry.proc.pty, ...(kept ? { keeper: kept.keeper } : {}) },
    });
    kept?.begin();
    if (kept && turn.ending === 'aborted' && this.#turn === turn) turn.abortNow(entry, this.limits.abortGraceMs);
    entry.gate?.advance(turnId, (w) => this.#gateWrite(entry, w)); // launch `start`: the handshake goes first
    if (entry.gate && !entry.gate.closed) entry.gate = null;
    this.#writeInput(turn, entry, input);
    return { ok: true };
  }

  /** Writes text to the running turn's process stdin (or pty); while its handshake holds writes, settles once it is written. */
  write(turnId: string, text: string): TurnCommandResult | Promise<TurnCommandResult> {
    const found = this.#running(turnId);
    if (!found.ok) return found;
    const gate = found.entry.gate;
    if (found.entry.proc.hasStdin && gate?.closed) return new Promise((done) => gate.hold({ turnId, text, ack: true, done }));
    if (!this.#gateWrite(found.entry, { turnId, text, ack: true })) return { ok: false, code: 'no-process', message: 'the process has no open stdin' };
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
    turn.abortNow(entry, graceMs);
    return { ok: true };
  }

  /**
   * A keeper for the first kept spawn, started as the bridge starts serving (launch `survive` is every
   * reference adapter's): its Node start and its move into the session's pids cap then run beside the
   * host's attach, not on the first turn's path. Not behind an adopted CLI, which takes its next turns itself.
   */
  startKeeperAhead(): void {
    if (this.#processes.current === null && !this.#stopping) this.#keepers?.refill(this.#jail.egress !== undefined);
  }

  /**
   * The launch the next turn will likely start with (the host's `expect` frame, between turns): unless the live CLI
   * would take that turn itself, the spare keeper starts a kept launch's jail ahead, as it does after a kept CLI
   * (docs/bridge-internals.md#jail-ahead), here for the session's first CLI or a long-lived one's respawn. A hint:
   * always acked, whatever it made.
   */
  expect(launch: LaunchSpec): TurnCommandResult {
    if (this.#turn === null) this.#ahead.expect(launch, this.#processes.current);
    return { ok: true };
  }

  /** An adopted CLI's keeper relays its MCP requests to `port` (this bridge's endpoint) from now on. */
  relayMcpTo(port: number): void {
    const proc = this.#processes.current?.proc;
    if (proc instanceof KeptProcess) proc.relayTo(port);
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
    const shell = newEntry(launch, this.#handlers);
    const options = this.#processes.options(launch);
    const proc = await adoptKept(adoption.dir, adoption.pid, launch, adoption.from, options, shell.events);
    const entry = shell.attach(proc);
    entry.gate = adoption.start; // the handshake the previous bridge began: done steps are not held behind again
    entry.key = adoption.key;
    entry.cont = { ...adoption.cont };
    entry.ptyLine = adoption.ptyLine.ptyLine;
    entry.ptyLineOverlong = adoption.ptyLine.ptyLineOverlong;
    entry.secretsEnv = adoption.secretsEnv;
    this.#processes.current = entry;
    if (adoption.turnId !== null) {
      const { turn } = Turn.create(this.#turnContext, adoption.turnId, launch, entry);
      for (const item of turn.ack ? adoption.history : []) {
        if ('stdin' in item) turn.awaitAcks(item.stdin);
        else turn.takeAck(item.stream, item.line);
      }
      turn.json.forget();
      this.#turn = turn;
      if (adoption.aborting) {
        // The previous bridge had interrupted it: the turn ends 'aborted', and the grace restarts here.
        turn.ending = 'aborted';
        turn.armAbortKill(entry, this.limits.abortGraceMs);
      }
    }
    proc.begin();
    for (const text of adoption.redeliver) proc.write(withStdinSecrets(text, launch, entry.secretsEnv), text); // journaled, never received
    entry.gate?.advance(adoption.turnId, (w) => this.#gateWrite(entry, w)); // a step the previous bridge had not written yet
    if (entry.gate && !entry.gate.closed) entry.gate = null;
  }

  /**
   * Stops every process: the interrupt input (if the launch has one) and EOF on
   * stdin, SIGTERM to the group of each one not ended after stopEofWaitMs, SIGKILL
   * at the end of graceMs. Resolves when all are
   * gone and their exit records are emitted; a running turn ends 'stopped'.
   * The supervisor then stays 'stopping' (a later start gets 'stopping').
   */
  stop(graceMs: number = this.limits.stopGraceMs): Promise<void> {
    checkGraceMs(graceMs);
    if (this.#stopping) return this.#stopping;
    this.#keepers?.close();
    this.#stopping = this.#stopAll(graceMs);
    return this.#stopping;
  }

  /**
   * A journal cap was hit (record-path.ts, docs/bridge-internals.md#journal-caps): the turn's
   * process group is SIGKILLed at once (a CLI past its cap is a runaway; an interrupt would let it
   * write on through the grace) and the turn ends with reason 'capped' and `message`. Idempotent.
   */
  cap(turnId: string, message: string): TurnCommandResult {
    const turn = this.#turn;
    if (!turn || turn.turnId !== turnId) return { ok: false, code: 'unknown-turn', message: `no running turn ${turnId}` };
    if (turn.ending === 'capped') return { ok: true };
    turn.ending = 'capped';
    turn.endingMessage = message;
    const entry = turn.entry;
    if (!entry) return { ok: true }; // still spawning: start() ends the turn without spawning
    this.#emit({ kind: 'signal', turnId, data: { signal: 'SIGKILL', reason: 'journal-cap' } });
    entry.proc.killGroup('SIGKILL');
    entry.proc.resume(); // a paused process could not deliver its exit
    return { ok: true };
  }

  /** The session's journal cap was hit: every later start is refused with `journal-cap` and `message`. */
  refuseStarts(message: string): void {
    this.#refusal = message;
  }

  /** Stops reading the CLI's output (journal backpressure); the CLI blocks once its pipe fills. */
  pause(): void {
    this.#processes.pause();
  }

  resume(): void {
    this.#processes.resume();
  }

  async #stopAll(graceMs: number): Promise<void> {
    const turn = this.#turn;
    if (turn) {
      turn.ending ??= 'stopped'; // an abort already under way keeps its reason
      if (!turn.entry) this.#endTurn(turn, 'stopped');
    }
    const entries = this.#processes.all().filter((e) => !e.proc.exited);
    for (const entry of entries) {
      entry.gate?.drop('the bridge stopped the process');
      if (turn && turn.entry === entry && 'input' in turn.launch.interrupt) turn.interrupt(entry, 'stop');
    }
    await stopProcesses(entries, { graceMs, eofWaitMs: this.limits.stopEofWaitMs, emit: this.#emit, turnIdOf: (entry) => this.#turnIdOf(entry) });
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

  #writeInput(turn: Turn, entry: ProcEntry, input: string | undefined): void {
    if (input === undefined || input === '' || !entry.proc.hasStdin) return;
    if (entry.gate?.hold({ turnId: turn.turnId, text: input, ack: true })) return; // written once the handshake is done
    this.#gateWrite(entry, { turnId: turn.turnId, text: input, ack: true });
  }

  /** One stdin write (placeholders substituted, the text as given journaled); `ack` registers inputAck ids; false: not written. */
  #gateWrite(entry: ProcEntry, w: GateWrite): boolean {
    const turn = this.#turn;
    const launch = turn?.entry === entry ? turn.launch : null;
    if (!entry.proc.hasStdin || !entry.proc.write(launch ? withStdinSecrets(w.text, launch, entry.secretsEnv) : w.text, w.text)) {
      w.done?.({ ok: false, code: 'no-process', message: "the process's stdin closed before its launch handshake completed; the input was not written" });
      return false;
    }
    const turnId = turn?.entry === entry ? turn.turnId : null;
    this.#emit({ kind: 'stdin', turnId, data: { text: w.text } });
    if (w.ack && turn && turnId === w.turnId) turn.awaitAcks(w.text);
    w.done?.({ ok: true });
    return true;
  }

  #spawnFailed(turn: Turn, message: string, release?: () => void): StartResult {
    release?.();
    this.#log.warn({ turnId: turn.turnId, argv0: turn.launch.argv[0], message }, 'spawn failed');
    this.#endTurn(turn, 'spawn-failed', undefined, message);
    return { ok: false, code: 'spawn-failed', message };
  }

  #endTurn(turn: Turn, reason: TurnEndReason, code?: number | null, message?: string, unacknowledged?: string[]): void {
    if (this.#turn !== turn) return;
    turn.clearTimers();
    this.#turn = null;
    const data: { reason: TurnEndReason; code?: number | null; message?: string; unacknowledged?: string[] } = { reason };
    if (code !== undefined) data.code = code;
    if (message !== undefined) data.message = message;
    else if (reason === 'capped' && turn.endingMessage !== undefined) data.message = turn.endingMessage;
    if (unacknowledged !== undefined) data.unacknowledged = unacknowledged;
    this.#emit({ kind: 'turn-end', turnId: turn.turnId, data });
  }

  #onLine(entry: ProcEntry, stream: OutputStream, text: string, cont: boolean, off: number | undefined): void {
    const turnId = this.#turnIdOf(entry);
    const data: { text: string; cont?: boolean; off?: number } = cont ? { text, cont: true } : { text };
    if (off !== undefined) data.off = off;
    this.#emit(stream === 'stdout' ? { kind: 'stdout', turnId, data } : { kind: 'stderr', turnId, data });
    const first = !entry.cont[stream];
    entry.cont[stream] = cont;
    // launch `start`: a whole stdout line may be the one a handshake step waits for.
    if (entry.gate && stream === 'stdout' && first && !cont && entry.gate.line(text)) {
      entry.gate.advance(turnId, (w) => this.#gateWrite(entry, w));
      if (!entry.gate.closed) entry.gate = null;
    }
    const turn = this.#turn;
    if (turn === null || turnId === null || turn.test === null || entry.lifetime !== 'session') return;
    turn.piece(stream, text, first, cont);
  }

  #onChunk(entry: ProcEntry, text: string, off: number | undefined): void {
    this.#emit({ kind: 'pty', turnId: this.#turnIdOf(entry), data: off === undefined ? { text } : { text, off } });
    if (entry.lifetime !== 'session') return;
    // Line-match a pty's text for turnEnd; the current line is capped like a pipe line.
    ptyLines(entry, text, this.limits.maxLineBytes, (line) => {
      const turn = this.#turn;
      if (!turn?.test || turn.entry !== entry) return;
      turn.completeLine('stdout', line);
    });
  }

  #onExit(entry: ProcEntry, code: number | null, signal: string | null): void {
    const turnId = this.#turnIdOf(entry);
    this.#emit({ kind: 'exit', turnId, data: { pid: entry.proc.pid, code, signal } });
    entry.gate?.drop('the process exited');
    const proc = entry.proc;
    if (proc instanceof KeptProcess) this.#afterDurable(() => proc.cleanUp());
    this.#processes.exited(entry);
    const turn = this.#turn;
    if (turn && turn.entry === entry) this.#endTurn(turn, turn.ending ?? 'exit', code);
  }
}
