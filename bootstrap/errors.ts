// The bootstrap error family: one class, BootstrapError, a HarnessBridgeError
// with a `code` from the closed list in protocol/errors/error-codes.ts and
// Symbol.for markers so two bundled copies recognise each other's errors.
// Callers branch on `code`.
import type { BootstrapErrorCode } from '../protocol/errors/error-codes.ts';
import { HarnessBridgeError } from '../protocol/errors/harness-bridge-error.ts';

export type { BootstrapErrorCode };

export class BootstrapError extends HarnessBridgeError<BootstrapErrorCode> {
  /** For 'command-failed': which command, how it exited, the end of its stderr; for 'command-timeout': which command and the end of its output. */
  readonly command?: string;
  readonly commandIndex?: number;
  readonly exitCode?: number;
  readonly stderrTail?: string;

  constructor(
    code: BootstrapErrorCode,
    message: string,
    details: { command?: string; commandIndex?: number; exitCode?: number; stderrTail?: string; cause?: unknown } = {},
  ) {
    super({ name: 'BootstrapError', code, message, cause: details.cause });
    this.markAs('BootstrapError');
    if (details.command !== undefined) this.command = details.command;
    if (details.commandIndex !== undefined) this.commandIndex = details.commandIndex;
    if (details.exitCode !== undefined) this.exitCode = details.exitCode;
    if (details.stderrTail !== undefined) this.stderrTail = details.stderrTail;
  }

  static override isInstance(error: unknown): error is BootstrapError {
    return HarnessBridgeError.isMarked(error, 'BootstrapError');
  }
}
