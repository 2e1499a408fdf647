// Errors of the local sandbox provider: one class, a closed union of codes.
// Tests branch on `code`, never on wording; the Symbol.for marker lets two
// bundled copies recognise each other's errors.

export type LocalSandboxErrorCode =
  | 'bwrap-missing'
  | 'session-exists'
  | 'session-not-found'
  | 'outside-sandbox'
  | 'invalid-option'
  | 'template-busy';

const marker = Symbol.for('harness-bridge.error.LocalSandboxError');

export class LocalSandboxError extends Error {
  readonly code: LocalSandboxErrorCode;

  constructor(code: LocalSandboxErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LocalSandboxError';
    this.code = code;
    Object.defineProperty(this, marker, { value: true, enumerable: false });
  }

  static isInstance(error: unknown): error is LocalSandboxError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

/** Node's fs error code, or undefined for anything else. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
