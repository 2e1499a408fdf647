// The Docker sandbox provider's error class: a HarnessBridgeError whose `code`
// comes from the embedded sandbox providers' closed list
// (protocol/errors/error-codes.ts, localSandboxErrorCodes: docker-unavailable,
// docker-failed, session-exists, session-not-found, invalid-option …).
import type { LocalSandboxErrorCode } from '../../../protocol/errors/error-codes.ts';
import { HarnessBridgeError } from '../../../protocol/errors/harness-bridge-error.ts';

export class DockerSandboxError extends HarnessBridgeError<LocalSandboxErrorCode> {
  constructor(code: LocalSandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super({ name: 'DockerSandboxError', code, message, cause: options?.cause });
    this.markAs('DockerSandboxError');
  }

  static override isInstance(error: unknown): error is DockerSandboxError {
    return HarnessBridgeError.isMarked(error, 'DockerSandboxError');
  }
}
