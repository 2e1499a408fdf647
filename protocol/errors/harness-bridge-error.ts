// The one base of every error this package throws. It is an AI SDK
// HarnessError (recognised by the real SDK's HarnessError.isInstance through
// the `vercel.ai.error.*` markers), carries a `code` from the closed list in
// error-codes.ts, and is marked with Symbol.for('harness-bridge.error') plus
// its class's own Symbol.for('harness-bridge.error.<ClassName>'). The static
// isInstance checks read those registry symbols, never the prototype chain,
// so two bundled copies of the package recognise each other's errors.
//
// A family's class (one file next to its owner):
//
//   export class FooError extends HarnessBridgeError<FooErrorCode> {
//     constructor(code: FooErrorCode, message: string, cause?: unknown) {
//       super({ name: 'FooError', code, message, cause });
//       this.markAs('FooError');
//     }
//     static override isInstance(error: unknown): error is FooError {
//       return HarnessBridgeError.isMarked(error, 'FooError');
//     }
//   }
import { HarnessError } from '../harness-v1/errors.ts';
import type { HarnessBridgeErrorCode } from './error-codes.ts';

const baseMarker = Symbol.for('harness-bridge.error');

/** The registry symbol that marks instances of the class called `className`. */
function classMarker(className: string): symbol {
  return Symbol.for(`harness-bridge.error.${className}`);
}

function hasMarker(error: unknown, marker: symbol): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

function setMarker(error: object, marker: symbol): void {
  Object.defineProperty(error, marker, { value: true, enumerable: false });
}

export abstract class HarnessBridgeError<Code extends HarnessBridgeErrorCode = HarnessBridgeErrorCode> extends HarnessError {
  /** Stable and closed (error-codes.ts): branch on it, never on the message. */
  readonly code: Code;

  protected constructor({ name, code, message, cause }: { name: string; code: Code; message: string; cause?: unknown }) {
    super({ name, message, cause });
    this.code = code;
    setMarker(this, baseMarker);
  }

  /** True for an error of any HarnessBridgeError class, from this copy of the package or another. */
  static override isInstance(error: unknown): error is HarnessBridgeError {
    return hasMarker(error, baseMarker);
  }

  /** Marks this error as an instance of `className`; each subclass's constructor calls it once with its own name. */
  protected markAs(className: string): void {
    setMarker(this, classMarker(className));
  }

  /**
   * True when `error` was marked as an instance of `className` by any copy of
   * the package (older copies set only this class marker): subclasses' isInstance.
   */
  protected static isMarked(error: unknown, className: string): boolean {
    return hasMarker(error, classMarker(className));
  }
}
