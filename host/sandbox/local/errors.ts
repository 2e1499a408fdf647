// The local sandbox provider's error family: one class, LocalSandboxError, a
// HarnessBridgeError with a `code` from the closed list in
// protocol/errors/error-codes.ts. Tests branch on `code`, never on wording;
// the Symbol.for markers let two bundled copies recognise each other's errors.
import type { LocalSandboxErrorCode } from '../../../protocol/errors/error-codes.ts';
import { HarnessBridgeError } from '../../../protocol/errors/harness-bridge-error.ts';

export type { LocalSandboxErrorCode };

export class LocalSandboxError extends HarnessBridgeError<LocalSandboxErrorCode> {
  constructor(code: LocalSandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super({ name: 'LocalSandboxError', code, message, cause: options?.cause });
    this.markAs('LocalSandboxError');
  }

  static override isInstance(error: unknown): error is LocalSandboxError {
    return HarnessBridgeError.isMarked(error, 'LocalSandboxError');
  }
}
