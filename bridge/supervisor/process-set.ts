// The supervisor's processes: the current one (the running turn's, or the live lifetime:'session'
// process between turns) and the retiring ones (replaced, on their way out), with what applies to
// all of them: spawn options, journal backpressure (pause/resume) and retirement. Turns are supervisor.ts's.
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';
import type { SupervisorLimits } from '../limits.ts';
import type { ProcEntry } from './proc-entry.ts';
import type { ProcessOptions, SupervisorLogger } from './supervised-process.ts';

export class ProcessSet {
  /** The running turn's process, or the live lifetime:'session' process between turns. */
  current: ProcEntry | null = null;
  /** Processes on their way out (a replaced session process); stop() waits for them too. */
  readonly #retiring = new Set<ProcEntry>();
  #paused = false;
  readonly #emit: (draft: RecordDraft) => void;
  readonly #limits: SupervisorLimits;
  readonly #log: SupervisorLogger;

  constructor(emit: (draft: RecordDraft) => void, limits: SupervisorLimits, log: SupervisorLogger) {
    this.#emit = emit;
    this.#limits = limits;
    this.#log = log;
  }

  /** The current process first, then the retiring ones. */
  all(): ProcEntry[] {
    const list = [...this.#retiring];
    if (this.current) list.unshift(this.current);
    return list;
  }

  /** Options to spawn (or adopt) `launch`'s process with: its line cap, and paused while the set is. */
  options(launch: LaunchSpec): ProcessOptions {
    return { maxLineBytes: this.#lineCap(launch), exitDrainMs: this.#limits.exitDrainMs, paused: this.#paused, log: this.#log };
  }

  /** Stops reading the CLI's output (journal backpressure); the CLI blocks once its pipe fills. */
  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    for (const entry of this.all()) entry.proc.pause();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    for (const entry of this.all()) entry.proc.resume();
  }

  /** A session process that does not fit the next launch: EOF, SIGTERM if it has not ended after stopEofWaitMs, SIGKILL after stopGraceMs. */
  retire(entry: ProcEntry): void {
    if (this.current === entry) this.current = null;
    this.#retiring.add(entry);
    entry.proc.endStdin();
    const term = setTimeout(() => {
      if (entry.proc.exited) return;
      this.#emit({ kind: 'signal', turnId: null, data: { signal: 'SIGTERM', reason: 'replaced' } });
      entry.proc.killGroup('SIGTERM');
    }, entry.proc.hasStdin ? Math.min(this.#limits.stopEofWaitMs, Math.floor(this.#limits.stopGraceMs / 3)) : 0);
    term.unref();
    void entry.proc.done.then(() => clearTimeout(term));
    const timer = setTimeout(() => {
      if (entry.proc.exited) return;
      this.#emit({ kind: 'signal', turnId: null, data: { signal: 'SIGKILL', reason: 'replaced-grace-expired' } });
      entry.proc.killGroup('SIGKILL');
    }, this.#limits.stopGraceMs);
    timer.unref();
    void entry.proc.done.then(() => clearTimeout(timer));
  }

  /** The entry's process exited: it is neither current nor retiring any more. */
  exited(entry: ProcEntry): void {
    if (this.current === entry) this.current = null;
    this.#retiring.delete(entry);
  }

  /** The launch schema keeps io.maxLineBytes within [minLineBytes, maxLineBytesCeiling] (out of range is refused, never clamped); the bounds here only guard direct callers. */
  #lineCap(launch: LaunchSpec): number {
    const wanted = launch.io.mode === 'pipes' ? launch.io.maxLineBytes : undefined;
    if (wanted === undefined) return this.#limits.maxLineBytes;
    return Math.min(Math.max(wanted, this.#limits.minLineBytes), this.#limits.maxLineBytesCeiling);
  }
}
