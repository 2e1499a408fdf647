// Errors the session layer throws (channel errors live in host/channel/errors.ts).
// Each carries a stable `code` and a Symbol.for marker, so two bundled copies
// of the kit recognise each other's errors.
import { HarnessError } from '../../protocol/harness-v1/errors.ts';

export type SessionErrorCode =
  /** The bridge did not print its ready line in time, or exited first. */
  | 'bridge-start-failed'
  /** A resume payload is foreign or corrupt. */
  | 'bad-resume-state'
  /** A lifecycle method was called after doDetach/doStop/doDestroy, or a turn API out of order. */
  | 'session-closed'
  | 'turn-busy'
  | 'no-turn'
  /** The bridge refused a request (its error code is in `cause`). */
  | 'bridge-refused'
  /** The channel ended for good and no rung of the ladder could continue the turn. */
  | 'channel-lost'
  /** doCompact's internal turn ended with an error (the CLI refused or failed the compaction). */
  | 'compact-failed';

const marker = Symbol.for('harness-bridge.error.BridgeSessionError');

export class BridgeSessionError extends HarnessError {
  readonly code: SessionErrorCode;

  constructor(code: SessionErrorCode, message: string, cause?: unknown) {
    super({ message, cause, name: 'HarnessBridgeSessionError' });
    this.code = code;
    Object.defineProperty(this, marker, { value: true, enumerable: false });
  }

  static override isInstance(error: unknown): error is BridgeSessionError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

export class ResumeStateError extends BridgeSessionError {
  constructor(message: string) {
    super('bad-resume-state', message);
  }
}

/** The DOMException-named AbortError the contract's abortSignal settles with. */
export function abortError(reason?: unknown): Error {
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error(typeof reason === 'string' ? reason : 'The turn was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}
