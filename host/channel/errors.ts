// The channel's error family: BridgeChannelError (the channel ended for good)
// and ChannelRequestError (one request failed). Both are HarnessBridgeErrors:
// a `code` from the closed list in protocol/errors/error-codes.ts (the codes
// are documented there) and Symbol.for markers, so two bundled copies of the
// kit still recognise each other's errors.
import type { BridgeChannelErrorCode, ChannelRequestErrorCode } from '../../protocol/errors/error-codes.ts';
import { HarnessBridgeError } from '../../protocol/errors/harness-bridge-error.ts';

export type { BridgeChannelErrorCode, ChannelRequestErrorCode };

/** A terminal channel error: the channel is closed and will not reconnect. */
export class BridgeChannelError extends HarnessBridgeError<BridgeChannelErrorCode> {
  /** The channel's cursor when it ended (highest seq delivered to onRecords). */
  readonly lastCursor: number;
  /** For cursor errors: what the journal holds, when the bridge said so. */
  readonly firstSeq?: number;
  readonly lastSeq?: number;

  constructor(
    code: BridgeChannelErrorCode,
    message: string,
    details: { lastCursor: number; firstSeq?: number; lastSeq?: number; cause?: unknown },
  ) {
    super({ name: 'BridgeChannelError', code, message, cause: details.cause });
    this.markAs('BridgeChannelError');
    this.lastCursor = details.lastCursor;
    if (details.firstSeq !== undefined) this.firstSeq = details.firstSeq;
    if (details.lastSeq !== undefined) this.lastSeq = details.lastSeq;
  }

  static override isInstance(error: unknown): error is BridgeChannelError {
    return HarnessBridgeError.isMarked(error, 'BridgeChannelError');
  }
}

/** One `request()` failed; the channel itself may carry on. */
export class ChannelRequestError extends HarnessBridgeError<ChannelRequestErrorCode> {
  /** The request's frame type. */
  readonly frameType: string;
  /** True when the frame was sent more than once (at-least-once after a reconnect). */
  readonly resent: boolean;

  constructor(
    code: ChannelRequestErrorCode,
    message: string,
    details: { frameType: string; resent?: boolean; cause?: unknown },
  ) {
    super({ name: 'ChannelRequestError', code, message, cause: details.cause });
    this.markAs('ChannelRequestError');
    this.frameType = details.frameType;
    this.resent = details.resent ?? false;
  }

  static override isInstance(error: unknown): error is ChannelRequestError {
    return HarnessBridgeError.isMarked(error, 'ChannelRequestError');
  }
}
