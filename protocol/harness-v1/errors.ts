// Harness error classes. They carry the same Symbol.for markers as the AI SDK's
// own classes (via AISDKError's marker scheme), so an error thrown by our copy
// is recognised by `HarnessCapabilityUnsupportedError.isInstance` in theirs.
import { AISDKError } from '@ai-sdk/provider';

const harnessErrorName = 'AI_HarnessError';
const harnessErrorMarker = `vercel.ai.error.${harnessErrorName}`;

export class HarnessError extends AISDKError {
  constructor({ message, cause, name = harnessErrorName }: { message: string; cause?: unknown; name?: string }) {
    super({ name, message, cause });
    markAs(this, harnessErrorMarker);
  }

  static override isInstance(error: unknown): error is HarnessError {
    return AISDKError.hasMarker(error, harnessErrorMarker);
  }
}

const unsupportedName = 'AI_HarnessCapabilityUnsupportedError';
const unsupportedMarker = `vercel.ai.error.${unsupportedName}`;

export class HarnessCapabilityUnsupportedError extends HarnessError {
  readonly harnessId?: string;

  constructor({ message, harnessId, cause }: { message: string; harnessId?: string; cause?: unknown }) {
    super({ message, cause, name: unsupportedName });
    markAs(this, unsupportedMarker);
    this.harnessId = harnessId;
  }

  static override isInstance(error: unknown): error is HarnessCapabilityUnsupportedError {
    return AISDKError.hasMarker(error, unsupportedMarker);
  }
}

/** AISDKError.hasMarker looks for an own property keyed by Symbol.for(marker). */
function markAs(error: Error, marker: string): void {
  Object.defineProperty(error, Symbol.for(marker), { value: true, enumerable: false });
}
