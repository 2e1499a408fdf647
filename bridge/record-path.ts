// The record path, CLI line → journal → socket: record() appends a draft to the journal and turn
// log, onDurable hands each written batch to the server, and output backpressure pauses the
// supervisor while unwritten bytes pile up. Seq and disk stay the journal's, frames the server's.
import type { RecordDraft } from '../protocol/v1/index.ts';
import { Journal, type AppendedBatch } from './journal/journal.ts';
import type { TurnLog } from './journal/turn-log.ts';
import type { EarlyLog } from './early-log.ts';
import { SERVER_LIMITS } from './limits.ts';
import type { BridgeServer } from './server/server.ts';
import type { Supervisor } from './supervisor/supervisor.ts';

/** Where durable batches go: the server, which offers them to the owner's record stream. */
export type DurableSink = Pick<BridgeServer, 'onDurable'>;
/** Whose output the backpressure holds back: the supervisor, which then stops reading the CLI. */
export type OutputValve = Pick<Supervisor, 'pause' | 'resume'>;

const maxPending = SERVER_LIMITS.maxJournalPendingBytes;
/** Until stage 2 connects the real ones: a batch reaches no socket (a host replays it on attach), and nothing is paused. */
const noServer: DurableSink = { onDurable() {} };
const noSupervisor: OutputValve = { pause() {}, resume() {} };

export class RecordPath {
  readonly journal: Journal;
  readonly turns: TurnLog;
  readonly #log: EarlyLog;
  #server: DurableSink = noServer;
  #supervisor: OutputValve = noSupervisor;
  #outputPaused = false;
  #closed = false;

  /** Opens (or creates) the journal in `stateDir`, with this path as its onDurable. */
  static async open(options: { stateDir: string; turns: TurnLog; log: EarlyLog; onFatal: (error: Error) => void }): Promise<RecordPath> {
    // The journal calls onDurable from its first write on, which comes after open has returned.
    let path: RecordPath | undefined;
    const journal = await Journal.open({ stateDir: options.stateDir, onDurable: (batch) => path!.onDurable(batch), onFatal: options.onFatal });
    path = new RecordPath(journal, options.turns, options.log);
    return path;
  }

  private constructor(journal: Journal, turns: TurnLog, log: EarlyLog) {
    this.journal = journal;
    this.turns = turns;
    this.#log = log;
  }

  /** Stage 2, as soon as the supervisor exists (an adopted CLI's output is read before the server is): backpressure pauses and resumes it. */
  connectSupervisor(supervisor: OutputValve): void {
    if (this.#supervisor !== noSupervisor) throw new Error('the record path already has a supervisor');
    this.#supervisor = supervisor;
  }

  /** Stage 2, once the server is attached: every durable batch from now on goes to it. */
  connectServer(server: DurableSink): void {
    if (this.#server !== noServer) throw new Error('the record path already has a server');
    this.#server = server;
  }

  /** journal.append + turn log + output backpressure. The record's seq; null once the journal is closed (the draft is dropped). */
  readonly record = (draft: RecordDraft): number | null => {
    if (this.#closed) {
      this.#log.write('warn', { kind: draft.kind, turnId: draft.turnId }, 'record after the journal closed; dropped');
      return null;
    }
    const seq = this.journal.append(draft);
    this.turns.observe(draft, seq);
    if (!this.#outputPaused && this.journal.pendingBytes > maxPending) {
      this.#outputPaused = true; // the disk is behind the CLI: stop reading its output until the queue halves
      this.#supervisor.pause();
    }
    return seq;
  };

  /** The journal's onDurable: the batch is written, so it goes to the server; the CLI's output resumes once the queue has halved. */
  onDurable(batch: AppendedBatch): void {
    this.#server.onDurable(batch);
    if (this.#outputPaused && this.journal.pendingBytes <= maxPending / 2) {
      this.#outputPaused = false;
      this.#supervisor.resume();
    }
  }

  /** Closes the journal (flush, fsync); records after that are dropped with a warning. */
  async close(): Promise<void> {
    await this.journal.close();
    this.#closed = true;
  }
}
