// What the bridge knows about turns, for hello and for `rerun {of}`: fed every
// record draft as the journal assigns its seq (observe), and every turn record
// recovered from disk at open (observeRecord). Bounded: the last maxHelloTurns
// turns in detail, and up to maxKnownTurns turn ids.
import type { JournalRecord, RecordDraft, TurnInfo } from '../../protocol/v1/index.ts';

type TurnStatus = TurnInfo['status'];
/** `fromSeq`: where the journal starts to matter for it (the spawning turn's turn-start, else the spawn). */
export type KeptInfo = { pid: number; keeper: string; spawnSeq: number; fromSeq: number };
type TurnEndReason = Extract<JournalRecord, { kind: 'turn-end' }>['data']['reason'];

const statusByReason: Record<TurnEndReason, TurnStatus> = {
  matched: 'ended',
  exit: 'ended',
  aborted: 'aborted',
  interrupted: 'interrupted',
  stopped: 'stopped',
  'spawn-failed': 'spawn-failed',
  capped: 'ended', // ended by the bridge at a journal cap: over, like any other end
};

/** Signal reasons (supervisor, turn.ts) that decide how the turn's exit ends it. */
const endingBySignal: Record<string, 'aborted' | 'stopped' | 'capped' | undefined> = {
  abort: 'aborted',
  'abort-grace-expired': 'aborted',
  stop: 'stopped',
  'stop-grace-expired': 'stopped',
  'journal-cap': 'capped',
};

export class TurnLog {
  readonly #maxRecent: number;
  readonly #maxKnown: number;
  /** The most recent turns, oldest first; the last one may be running. */
  readonly #recent: TurnInfo[] = [];
  /** Every turn id seen (insertion order, oldest forgotten first). */
  readonly #known = new Set<string>();
  /** The newest spawn's seq (any spawn). */
  #lastSpawnSeq = 0;
  /** The newest kept CLI (launch `survive`) without an exit record, if any. */
  #kept: KeptInfo | undefined;
  /** The running turn's process exit and the reason its turn-end takes (from the turn's signal records). */
  #exit: { turnId: string; code: number | null; reason: 'exit' | 'aborted' | 'stopped' | 'capped' } | undefined;
  #ending: { turnId: string; reason: 'aborted' | 'stopped' | 'capped' } | undefined;

  constructor(options: { maxHelloTurns: number; maxKnownTurns: number }) {
    this.#maxRecent = options.maxHelloTurns;
    this.#maxKnown = options.maxKnownTurns;
  }

  /** Called for every record the bridge journals, with the seq the journal assigned. Cheap for non-turn records. */
  observe(draft: RecordDraft, seq: number): void {
    if (draft.kind === 'spawn') {
      this.#lastSpawnSeq = seq;
      if (draft.data.keeper !== undefined) {
        const spawning = this.#recent[this.#recent.length - 1];
        const fromSeq = spawning !== undefined && spawning.turnId === draft.turnId ? spawning.firstSeq : seq;
        this.#kept = { pid: draft.data.pid, keeper: draft.data.keeper, spawnSeq: seq, fromSeq };
      }
    } else if (draft.kind === 'exit' && this.#kept?.pid === draft.data.pid) this.#kept = undefined;
    const current = this.#recent[this.#recent.length - 1];
    if (draft.kind === 'turn-start') {
      if (draft.turnId !== null) this.#begin(draft.turnId, seq, draft.data.rerun === true);
      this.#exit = undefined;
      this.#ending = undefined;
      return;
    }
    if (current === undefined || current.turnId !== draft.turnId || current.status !== 'running') return;
    current.lastSeq = seq;
    if (draft.kind === 'signal') {
      const reason = draft.data.reason === undefined ? undefined : endingBySignal[draft.data.reason];
      if (reason !== undefined) this.#ending ??= { turnId: current.turnId, reason };
    }
    // The supervisor journals the turn's process exit, then its turn-end (supervisor.ts #onExit): the reason it gives.
    if (draft.kind === 'exit') this.#exit = { turnId: current.turnId, code: draft.data.code, reason: this.#ending?.reason ?? 'exit' };
    if (draft.kind === 'turn-end') current.status = statusByReason[draft.data.reason];
  }

  /** A record read back from the journal at open (only turn-start/turn-end, spawn and exit matter). */
  observeRecord(record: JournalRecord): void {
    this.observe(record, record.seq);
  }

  /** The running turn (turn-start journaled, no turn-end yet), if any. */
  get unfinished(): TurnInfo | undefined {
    const current = this.#recent[this.#recent.length - 1];
    return current?.status === 'running' ? current : undefined;
  }

  /**
   * The turn-end the running turn's journaled process exit meant, when a bridge died between the two records
   * (a restart journals it so: the CLI had finished, nothing is lost and nothing needs a rerun).
   */
  get unfinishedExit(): { reason: 'exit' | 'aborted' | 'stopped' | 'capped'; code: number | null } | undefined {
    const running = this.unfinished;
    const exit = this.#exit;
    return running !== undefined && exit !== undefined && exit.turnId === running.turnId ? { reason: exit.reason, code: exit.code } : undefined;
  }

  /**
   * The kept CLI (launch `survive`) a restarted bridge may adopt: no exit record yet, and no later
   * spawn (a later one replaced it, so no turn can be running on it).
   */
  get kept(): KeptInfo | undefined {
    return this.#kept !== undefined && this.#kept.spawnSeq === this.#lastSpawnSeq ? this.#kept : undefined;
  }

  has(turnId: string): boolean {
    return this.#known.has(turnId);
  }

  /** The recent turns as hello reports them: nothing past `durableSeq` (what a host could have received). */
  snapshot(durableSeq: number): TurnInfo[] {
    const turns: TurnInfo[] = [];
    for (const turn of this.#recent) {
      if (turn.firstSeq > durableSeq) break;
      const info: TurnInfo = { turnId: turn.turnId, firstSeq: turn.firstSeq, lastSeq: turn.lastSeq, status: turn.status };
      if (turn.lastSeq > durableSeq) {
        // The turn-end (or later output) is not on disk yet: report what is.
        info.lastSeq = durableSeq;
        info.status = 'running';
      }
      if (turn.rerun === true) info.rerun = true;
      turns.push(info);
    }
    return turns;
  }

  #begin(turnId: string, seq: number, rerun: boolean): void {
    const turn: TurnInfo = { turnId, firstSeq: seq, lastSeq: seq, status: 'running' };
    if (rerun) turn.rerun = true;
    this.#recent.push(turn);
    if (this.#recent.length > this.#maxRecent) this.#recent.shift();
    this.#known.delete(turnId);
    this.#known.add(turnId);
    if (this.#known.size > this.#maxKnown) {
      const oldest = this.#known.values().next();
      if (oldest.done !== true) this.#known.delete(oldest.value);
    }
  }
}

/**
 * Feeds the turn records of a journal read (recovered from disk at open) into
 * `turns`. Only lines that can be turn records are parsed: the journal writes
 * `kind` before `data`, so `"kind":"turn-` cannot come from inside a record's data.
 * Returns how many lines were unreadable (a journal bug; they are skipped).
 */
export async function recoverTurns(turns: TurnLog, lines: AsyncIterable<string[]>): Promise<number> {
  let unreadable = 0;
  for await (const batch of lines) {
    for (const line of batch) {
      // The first `"kind":"` is the record's own (written before data): one short search per line.
      const k = line.indexOf('"kind":"') + 8;
      if (k === 7 || !(line.startsWith('turn-', k) || line.startsWith('spawn"', k) || line.startsWith('exit"', k))) continue;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        unreadable++; // the journal checked this line's crc; count it rather than stop the bridge
        continue;
      }
      const record = asTurnRecord(json);
      if (record !== null) turns.observeRecord(record);
      else unreadable++;
    }
  }
  return unreadable;
}

/**
 * The turn-start/turn-end record in `json`, checked field by field for what
 * TurnLog reads (recordSchema's rules for these two kinds), or null. Not the
 * zod schema: recovery runs before the ready line, and loading the protocol
 * schemas there would cost every bridge start ~10 ms (they load right after it).
 */
function asTurnRecord(json: unknown): JournalRecord | null {
  if (typeof json !== 'object' || json === null) return null;
  const r = json as Record<string, unknown>;
  const data = r.data as Record<string, unknown> | null | undefined;
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 1 || typeof r.ts !== 'number') return null;
  if (!(r.turnId === null || (typeof r.turnId === 'string' && r.turnId.length > 0 && r.turnId.length <= 200))) return null;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  if (r.kind === 'turn-start') {
    if (data.rerun !== undefined && typeof data.rerun !== 'boolean') return null;
    if (data.input !== undefined && typeof data.input !== 'string') return null;
    return json as JournalRecord;
  }
  if (r.kind === 'spawn') {
    if (!Number.isSafeInteger(data.pid) || (data.keeper !== undefined && typeof data.keeper !== 'string')) return null;
    return json as JournalRecord;
  }
  if (r.kind === 'exit') return Number.isSafeInteger(data.pid) ? (json as JournalRecord) : null;
  if (r.kind === 'turn-end') return typeof data.reason === 'string' && Object.hasOwn(statusByReason, data.reason) ? (json as JournalRecord) : null;
  return null;
}
