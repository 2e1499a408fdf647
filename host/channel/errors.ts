// Error classes exported from host/: each carries a stable `code` from a closed
// union (tests assert the code, not the wording) and a Symbol.for marker, so two
// bundled copies of the kit still recognise each other's errors. Add new
// classes here with `defineMarker` + an `isInstance` that checks it.
import type { ErrorCode } from '../../protocol/v1/index.ts';

/** Marks an error object with a registry symbol (survives duplicated bundles). */
function mark(error: Error, marker: symbol): void {
  Object.defineProperty(error, marker, { value: true, enumerable: false });
}

function hasMarker(error: unknown, marker: symbol): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

/**
 * Why a channel ended for good. Each one means the same socket/cursor cannot
 * continue; the session layer decides which rung of the ladder runs next.
 * - version-mismatch: the bridge speaks another protocol major (hello or close 4001).
 * - unauthorized: HTTP 401/403 on the upgrade (wrong token).
 * - cursor-expired / cursor-ahead / journal-mismatch: the bridge refused attach.
 * - displaced: another host attached (close 4000 / error not-owner).
 * - reconnect-deadline: no attach succeeded within reconnectDeadlineMs of the first failure.
 * - bridge-stopped: the bridge closed with 4003 (stop/destroy in progress).
 * - protocol-violation: the bridge kept sending gaps / broke the protocol past our retries.
 * - consumer-failed: onRecords threw or rejected; the channel stops rather than skip records.
 * - closed: close() was called (only seen by whenLive() waiters; `closed` resolves null).
 */
export type BridgeChannelErrorCode =
  | 'version-mismatch'
  | 'unauthorized'
  | 'cursor-expired'
  | 'cursor-ahead'
  | 'journal-mismatch'
  | 'displaced'
  | 'reconnect-deadline'
  | 'bridge-stopped'
  | 'protocol-violation'
  | 'consumer-failed'
  | 'closed';

const channelErrorMarker = Symbol.for('harness-bridge.error.BridgeChannelError');

/** A terminal channel error: the channel is closed and will not reconnect. */
export class BridgeChannelError extends Error {
  readonly code: BridgeChannelErrorCode;
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
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'BridgeChannelError';
    this.code = code;
    this.lastCursor = details.lastCursor;
    if (details.firstSeq !== undefined) this.firstSeq = details.firstSeq;
    if (details.lastSeq !== undefined) this.lastSeq = details.lastSeq;
    mark(this, channelErrorMarker);
  }

  static isInstance(error: unknown): error is BridgeChannelError {
    return hasMarker(error, channelErrorMarker);
  }
}

/**
 * Why one `request()` failed. Bridge codes come from its `error {id}` frame;
 * the host-side ones:
 * - queue-full: more than maxQueuedFrames requests awaiting their ack.
 * - outcome-unknown: an at-most-once frame (start, rerun, input) was sent, the
 *   connection dropped before its ack, and it is NOT re-sent; check the journal
 *   (hello's turns / replayed records) to learn whether it took effect.
 * - closed: the channel closed (close() or a terminal error) before the ack.
 * - bad-frame / too-large: refused locally before sending.
 */
export type ChannelRequestErrorCode = ErrorCode | 'outcome-unknown' | 'closed';

const requestErrorMarker = Symbol.for('harness-bridge.error.ChannelRequestError');

export class ChannelRequestError extends Error {
  readonly code: ChannelRequestErrorCode;
  /** The request's frame type. */
  readonly frameType: string;
  /** True when the frame was sent more than once (at-least-once after a reconnect). */
  readonly resent: boolean;

  constructor(
    code: ChannelRequestErrorCode,
    message: string,
    details: { frameType: string; resent?: boolean; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ChannelRequestError';
    this.code = code;
    this.frameType = details.frameType;
    this.resent = details.resent ?? false;
    mark(this, requestErrorMarker);
  }

  static isInstance(error: unknown): error is ChannelRequestError {
    return hasMarker(error, requestErrorMarker);
  }
}
