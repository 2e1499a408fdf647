// Bootstrap errors: one class, a closed union of codes, a Symbol.for marker so
// two bundled copies recognise each other's errors. Callers branch on `code`.

export type BootstrapErrorCode = 'invalid-recipe' | 'command-failed' | 'lock-timeout' | 'sandbox-failed' | 'bridge-file-missing';

const marker = Symbol.for('harness-bridge.error.BootstrapError');

export class BootstrapError extends Error {
  readonly code: BootstrapErrorCode;
  /** For 'command-failed': which command, how it exited, the end of its stderr. */
  readonly command?: string;
  readonly commandIndex?: number;
  readonly exitCode?: number;
  readonly stderrTail?: string;

  constructor(
    code: BootstrapErrorCode,
    message: string,
    details: { command?: string; commandIndex?: number; exitCode?: number; stderrTail?: string; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'BootstrapError';
    this.code = code;
    if (details.command !== undefined) this.command = details.command;
    if (details.commandIndex !== undefined) this.commandIndex = details.commandIndex;
    if (details.exitCode !== undefined) this.exitCode = details.exitCode;
    if (details.stderrTail !== undefined) this.stderrTail = details.stderrTail;
    Object.defineProperty(this, marker, { value: true, enumerable: false });
  }

  static isInstance(error: unknown): error is BootstrapError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}
