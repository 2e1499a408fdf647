// The journal caps (docs/bridge-internals.md#journal-caps): how many journal bytes one turn, and
// the whole session, may write. This module only counts and says when a cap is passed; the record
// path acts on it (the turn's CLI is killed and the turn ends 'capped'; past the session cap,
// starts are refused with `journal-cap`).
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';
import { JOURNAL_LIMITS } from '../limits.ts';

/** Bytes; 0 means no cap. */
export type JournalCapLimits = { maxTurnBytes: number; maxSessionBytes: number };

export type CapHit = {
  /** The running turn to end 'capped', or null (the session cap with no turn running). */
  turnId: string | null;
  /** The session cap: later starts are refused too. */
  session: boolean;
  message: string;
};

const envNames = { maxTurnBytes: 'HARNESS_BRIDGE_MAX_TURN_JOURNAL_BYTES', maxSessionBytes: 'HARNESS_BRIDGE_MAX_SESSION_JOURNAL_BYTES' } as const;

/**
 * The caps from the environment the host kit sets at spawn (JOURNAL_LIMITS otherwise); each variable
 * is read once and removed, so no CLI inherits it. A bad value is a RangeError (the bridge refuses to start).
 */
export function capsFromEnv(env: NodeJS.ProcessEnv): JournalCapLimits {
  const caps: JournalCapLimits = { maxTurnBytes: JOURNAL_LIMITS.maxTurnJournalBytes, maxSessionBytes: JOURNAL_LIMITS.maxSessionJournalBytes };
  for (const key of ['maxTurnBytes', 'maxSessionBytes'] as const) {
    const name = envNames[key];
    const text = env[name];
    delete env[name];
    if (text === undefined || text === '') continue;
    const bytes = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(bytes)) throw new RangeError(`${name} must be a non-negative integer of bytes (0: no cap), got ${text}`);
    caps[key] = bytes;
  }
  return caps;
}

export class JournalCaps {
  readonly limits: JournalCapLimits;
  #turnId: string | null = null;
  /** Journal size before the running turn's turn-start. */
  #turnFrom = 0;
  #turnCapped = false;
  #sessionCapped = false;
  /** The journal was over the session cap when it was opened: why starts are refused from the start. */
  readonly refusedAtOpen: string | null;

  constructor(limits: JournalCapLimits, sizeAtOpen: number) {
    this.limits = limits;
    const over = limits.maxSessionBytes > 0 && sizeAtOpen > limits.maxSessionBytes;
    this.#sessionCapped = over;
    this.refusedAtOpen = over ? sessionMessage(sizeAtOpen, limits.maxSessionBytes) : null;
  }

  /** One appended record, with the journal's size before and after it; a cap this record passed, or null. */
  observe(draft: RecordDraft, sizeBefore: number, sizeAfter: number): CapHit | null {
    if (draft.kind === 'turn-start') {
      this.#turnId = draft.turnId;
      this.#turnFrom = sizeBefore;
      this.#turnCapped = false;
    } else if (draft.kind === 'turn-end' && draft.turnId === this.#turnId) {
      this.#turnId = null;
      return null;
    }
    const { maxTurnBytes, maxSessionBytes } = this.limits;
    if (maxSessionBytes > 0 && !this.#sessionCapped && sizeAfter > maxSessionBytes) {
      this.#sessionCapped = true;
      this.#turnCapped = true;
      return { turnId: this.#turnId, session: true, message: sessionMessage(sizeAfter, maxSessionBytes) };
    }
    const turnBytes = sizeAfter - this.#turnFrom;
    if (maxTurnBytes > 0 && this.#turnId !== null && !this.#turnCapped && turnBytes > maxTurnBytes) {
      this.#turnCapped = true;
      return {
        turnId: this.#turnId,
        session: false,
        message: `journal cap: this turn wrote ${turnBytes} bytes of journal, over its cap of ${maxTurnBytes} (maxTurnJournalBytes); the CLI was killed`,
      };
    }
    return null;
  }
}

function sessionMessage(size: number, cap: number): string {
  return `journal cap: the session's journal holds ${size} bytes, over its cap of ${cap} (maxSessionJournalBytes); the CLI was killed and new turns are refused`;
}
