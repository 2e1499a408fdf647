// The record path, CLI line → journal → socket: record() appends a draft to the journal and turn
// log, onDurable hands each written batch to the server, and output backpressure pauses the
// supervisor while unwritten bytes pile up or the disk is full (reported to the server, which tells
// the owner). Seq and disk stay the journal's, frames the server's (docs/bridge-internals.md#disk-full).
import type { RecordDraft } from '../protocol/v1/index.ts';
import { Journal, type AppendedBatch } from './journal/journal.ts';
import type { TurnLog } from './journal/turn-log.ts';
import { JournalCaps, capsFromEnv, type CapHit, type JournalCapLimits } from './journal/journal-caps.ts';
import type { EarlyLog } from './early-log.ts';
import { CLOSE_CODES_V1 } from '../protocol/v1/close-codes.ts';
import { SERVER_LIMITS } from './limits.ts';
import type { BridgeServer } from './server/server.ts';
import type { Supervisor } from './supervisor/supervisor.ts';

/** Where durable batches go: the server, which offers them to the owner's record stream and tells it about a full disk. */
export type DurableSink = Pick<BridgeServer, 'onDurable' | 'diskFull' | 'close'>;
/** Whose output the backpressure holds back (the supervisor, which then stops reading the CLI), and whom a journal cap stops. */
export type OutputValve = Pick<Supervisor, 'pause' | 'resume' | 'cap' | 'refuseStarts'>;

const maxPending = SERVER_LIMITS.maxJournalPendingBytes;
/** Until stage 2 connects the real ones: a batch reaches no socket (a host replays it on attach), and nothing is paused. */
const noServer: DurableSink = { onDurable() {}, diskFull() {}, close: () => Promise.resolve() };

/** How long a fatal exit waits for the hosts' sockets to take the close frame naming its cause. */
const lastWordsMs = 1_000;

/**
 * `HARNESS_BRIDGE_DISK_FULL_EXIT_MS` (the host kit's or an operator's): how long to wait for space
 * before exiting (JOURNAL_LIMITS.diskFullExitMs). Read once and removed, so no CLI inherits it.
 */
export function diskFullExitFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.HARNESS_BRIDGE_DISK_FULL_EXIT_MS;
  delete env.HARNESS_BRIDGE_DISK_FULL_EXIT_MS;
  if (text === undefined || text === '') return undefined;
  const ms = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(ms) || ms < 1) throw new RangeError(`HARNESS_BRIDGE_DISK_FULL_EXIT_MS must be a positive integer of ms, got ${text}`);
  return ms;
}

/** The close reason naming a fatal journal error (a WebSocket close reason holds at most 123 bytes). */
export function fatalCloseReason(error: Error): string {
  let text = `journal: ${error.message}`;
  while (Buffer.byteLength(text) > 123) text = text.slice(0, -1);
  return text;
}
const noSupervisor: OutputValve = { pause() {}, resume() {}, cap: () => ({ ok: true }), refuseStarts() {} };

export class RecordPath {
  readonly journal: Journal;
  readonly turns: TurnLog;
  readonly caps: JournalCaps;
  readonly #log: EarlyLog;
  #server: DurableSink = noServer;
  #supervisor: OutputValve = noSupervisor;
  #outputPaused = false;
  /** Unwritten bytes passed maxPending and have not yet halved. */
  #behind = false;
  #closed = false;
  /** The journal failed: the bridge is on its way out (onFatal), records are dropped. */
  #failed = false;

  /** Opens (or creates) the journal in `stateDir`, with this path as its onDurable. */
  static async open(options: {
    stateDir: string;
    turns: TurnLog;
    log: EarlyLog;
    /** Called once the owner's socket has the close frame naming the error (bounded wait); exits the process. */
    onFatal: (error: Error) => void;
    /** Default: HARNESS_BRIDGE_DISK_FULL_EXIT_MS, else JOURNAL_LIMITS.diskFullExitMs. */
    diskFullExitMs?: number;
    /** Default: HARNESS_BRIDGE_MAX_TURN_JOURNAL_BYTES / _SESSION_, else JOURNAL_LIMITS (journal-caps.ts). */
    caps?: JournalCapLimits;
  }): Promise<RecordPath> {
    // The journal calls onDurable and onStall from its first write on, which comes after open has returned.
    let path: RecordPath | undefined;
    const diskFullExitMs = options.diskFullExitMs ?? diskFullExitFromEnv(process.env);
    const caps = options.caps ?? capsFromEnv(process.env);
    const journal = await Journal.open({
      stateDir: options.stateDir,
      onDurable: (batch) => path!.onDurable(batch),
      onStall: (error) => path!.onStall(error),
      onFatal: (error) => {
        path!.#failed = true;
        void path!.#lastWords(error).finally(() => options.onFatal(error));
      },
      ...(diskFullExitMs === undefined ? {} : { diskFullExitMs }),
    });
    path = new RecordPath(journal, options.turns, options.log, new JournalCaps(caps, journal.sizeBytes));
    return path;
  }

  private constructor(journal: Journal, turns: TurnLog, log: EarlyLog, caps: JournalCaps) {
    this.journal = journal;
    this.turns = turns;
    this.#log = log;
    this.caps = caps;
  }

  /** Stage 2, as soon as the supervisor exists (an adopted CLI's output is read before the server is): backpressure pauses and resumes it. */
  connectSupervisor(supervisor: OutputValve): void {
    if (this.#supervisor !== noSupervisor) throw new Error('the record path already has a supervisor');
    this.#supervisor = supervisor;
    if (this.caps.refusedAtOpen !== null) supervisor.refuseStarts(this.caps.refusedAtOpen);
  }

  /** Stage 2, once the server is attached: every durable batch from now on goes to it. */
  connectServer(server: DurableSink): void {
    if (this.#server !== noServer) throw new Error('the record path already has a server');
    this.#server = server;
    if (this.journal.diskFull !== null) server.diskFull(this.journal.diskFull);
  }

  /** The server stage 2 connected, for a fatal exit's last words (null before). */
  get server(): DurableSink | null {
    return this.#server === noServer ? null : this.#server;
  }

  /** journal.append + turn log + output backpressure. The record's seq; null once the journal is closed (the draft is dropped). */
  readonly record = (draft: RecordDraft): number | null => {
    if (this.#closed || this.#failed) {
      this.#log.write('warn', { kind: draft.kind, turnId: draft.turnId }, this.#failed ? 'record after the journal failed; dropped' : 'record after the journal closed; dropped');
      return null;
    }
    const before = this.journal.sizeBytes;
    const seq = this.journal.append(draft);
    this.turns.observe(draft, seq);
    const hit = this.caps.observe(draft, before, this.journal.sizeBytes);
    if (hit !== null) queueMicrotask(() => this.#capHit(hit)); // not from inside the supervisor's own emit
    if (!this.#behind && this.journal.pendingBytes > maxPending) {
      this.#behind = true; // the disk is behind the CLI: stop reading its output until the queue halves
      this.#valve();
    }
    return seq;
  };

  /** The journal's onDurable: the batch is written, so it goes to the server; the CLI's output resumes once the queue has halved. */
  onDurable(batch: AppendedBatch): void {
    this.#server.onDurable(batch);
    if (this.#behind && this.journal.pendingBytes <= maxPending / 2) {
      this.#behind = false;
      this.#valve();
    }
  }

  /**
   * The journal's onStall: a full disk (the error) pauses the CLI's output whatever the queue
   * holds, and the owner hears `disk-full`; space back (null) lets it go once the queue allows.
   */
  onStall(error: Error | null): void {
    if (error !== null) this.#log.write('warn', { err: error, pendingBytes: this.journal.pendingBytes }, "journal write failed: the disk is full; the CLI's output is paused, retrying");
    else this.#log.write('info', { pendingBytes: this.journal.pendingBytes }, "journal writes resumed: space is back; the CLI's output continues");
    this.#valve();
    this.#server.diskFull(error);
  }

  /** A journal cap was passed: the running turn's CLI is killed (turn-end 'capped'); past the session cap, starts are refused. */
  #capHit(hit: CapHit): void {
    this.#log.write('warn', { turnId: hit.turnId, session: hit.session, caps: this.caps.limits }, hit.message);
    if (hit.session) this.#supervisor.refuseStarts(hit.message);
    if (hit.turnId !== null) this.#supervisor.cap(hit.turnId, hit.message);
  }

  /**
   * Before a fatal exit: every host socket is closed with 4005 and the cause (ENOSPC…), so an owner
   * fails at once naming it instead of retrying a dead port (docs/bridge-internals.md#disk-full).
   */
  async #lastWords(error: Error): Promise<void> {
    this.#supervisor.pause();
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, lastWordsMs);
    });
    await Promise.race([this.#server.close(CLOSE_CODES_V1.failed, fatalCloseReason(error)).catch(() => undefined), bounded]);
    clearTimeout(timer);
  }

  /** Pauses the CLI's output while the journal is behind or the disk is full, resumes it when neither holds. */
  #valve(): void {
    const pause = this.#behind || this.journal.diskFull !== null;
    if (pause === this.#outputPaused) return;
    this.#outputPaused = pause;
    if (pause) this.#supervisor.pause();
    else this.#supervisor.resume();
  }

  /** Closes the journal (flush, fsync); records after that are dropped with a warning. `discardUnwritten`: see Journal.close. */
  async close(options: { discardUnwritten?: boolean } = {}): Promise<void> {
    this.#closed = true;
    await this.journal.close(options);
  }
}
