// The session layer's error family (channel errors live in host/channel/errors.ts):
// BridgeSessionError and its ResumeStateError. Both are HarnessBridgeErrors: a
// `code` from the closed list in protocol/errors/error-codes.ts (the codes are
// documented there) and Symbol.for markers, so two bundled copies of the kit
// recognise each other's errors.
import type { SessionErrorCode } from '../../protocol/errors/error-codes.ts';
import { HarnessBridgeError } from '../../protocol/errors/harness-bridge-error.ts';

export type { SessionErrorCode };

export class BridgeSessionError extends HarnessBridgeError<SessionErrorCode> {
  constructor(code: SessionErrorCode, message: string, cause?: unknown) {
    super({ name: 'HarnessBridgeSessionError', code, message, cause });
    this.markAs('BridgeSessionError');
  }

  static override isInstance(error: unknown): error is BridgeSessionError {
    return HarnessBridgeError.isMarked(error, 'BridgeSessionError');
  }
}

/** A resume payload is foreign or corrupt: a BridgeSessionError with code 'bad-resume-state'. */
export class ResumeStateError extends BridgeSessionError {
  constructor(message: string) {
    super('bad-resume-state', message);
    this.markAs('ResumeStateError');
  }

  static override isInstance(error: unknown): error is ResumeStateError {
    return HarnessBridgeError.isMarked(error, 'ResumeStateError');
  }
}
