// Host-side defaults, one place, each with its reason. Constructors take
// overrides and reject bad values with a RangeError at startup (checkLimit).
// Protocol-wide limits live in protocol/v1/limits.ts; these only tighten them.
import { PROTOCOL_LIMITS_V1 } from '../protocol/v1/index.ts';

export const CHANNEL_LIMITS = {
  /**
   * How long the channel keeps trying to (re)attach, counted from the first
   * failure of a spell. Several minutes, not 30 s: hosted sandboxes put a port
   * proxy in front of the bridge that can answer 502 for a minute or more while
   * it reshuffles, and giving up early forces the lossy rungs of the ladder.
   */
  reconnectDeadlineMs: 5 * 60_000,
  /** First retry delay: a dropped socket to a live bridge usually comes back at once. */
  initialBackoffMs: 100,
  /** Retry delay cap: keeps a long 502 spell from hammering the proxy, yet notices recovery within seconds. */
  maxBackoffMs: 5_000,
  /** Heartbeat interval; two silent intervals (no pong, no traffic) mean the peer is dead. */
  heartbeatMs: 10_000,
  /** TCP connect + upgrade + hello must finish within this, or the attempt counts as failed (a SIGSTOPped peer accepts TCP but never answers). */
  connectTimeoutMs: 15_000,
  /** Requests awaiting their ack (queued while disconnected plus in flight). Real sessions have a handful; 1024 bounds a runaway caller. */
  maxQueuedFrames: 1024,
  /**
   * Largest bridge frame the host accepts. The bridge caps records frames at
   * the protocol's maxFrameBytes; the host accepts up to the hard ws payload
   * cap so a slightly over-size batch still arrives instead of being dropped
   * (dropping a records frame only forces a re-attach that would resend it).
   */
  maxInboundFrameBytes: PROTOCOL_LIMITS_V1.maxPayloadBytes,
  /** Largest host frame we send: the bridge answers anything larger with too-large. */
  maxOutboundFrameBytes: PROTOCOL_LIMITS_V1.maxFrameBytes,
  /** Inbound frames parsed but not yet handed to a slow (async) onRecords before the socket is paused. */
  maxInboundQueuedFrames: 64,
  /**
   * The same queue bounded in wire bytes. Whatever waits here is live at every scavenge and gets
   * promoted, and so do the socket chunks a paused socket holds, so this queue sets how fast a slow
   * host's old space and external memory fill with garbage. 64 KiB is below one full bridge frame
   * (≤ 120 KiB): the socket pauses as soon as a frame waits behind the one being consumed and
   * resumes when the queue is down to half, so it refills while the consumer works (a fast consumer
   * never queues). Measured by test/chaos/memory.test.ts (bundled host, opt-in
   * limitYoungGeneration, peak RSS at 1M records over the peak at 10k): 1 MiB 1.4-1.5x,
   * 128 KiB 1.17-1.21x, 64 KiB 1.12-1.14x, with the same records/s; 3M records peaked where 1M did.
   */
  maxInboundQueuedBytes: 64 * 1024,
  /** Consecutive gap re-attaches with no progress before the channel calls it a protocol violation. */
  maxGapReattaches: 5,
  /**
   * Bridge revivals (BridgeChannelOptions.revive) within reviveWindowMs: a bridge that dies again is revived
   * again, up to this many times; one that keeps dying (a crash loop) is then left to the backoff, which ends
   * in reconnect-deadline.
   */
  maxRevives: 3,
  /** The window maxRevives counts in. */
  reviveWindowMs: 60_000,
  /**
   * The bound on one revival (host/reach/revive.ts: start a bridge on the state dir to its ready line, probe
   * it, look again longer if the probe timed out): past it the channel ends with `bridge-gone`. Covers
   * readyTimeoutMs (20 s) of HOST_SESSION_LIMITS and a slow hello after it; a local revival takes a few hundred ms.
   */
  reviveTimeoutMs: 30_000,
} as const;

export type ChannelLimits = { -readonly [K in keyof typeof CHANNEL_LIMITS]: number };

export const RECORDING_LIMITS = {
  /** Bytes buffered for the recording file before lines are dropped (and counted in a `dropped` marker): a stalled disk must not grow host memory. */
  maxRecordingPendingBytes: 64 * 1024 * 1024,
  /** Buffered bytes that trigger an immediate write instead of waiting for the flush timer. */
  maxRecordingBatchBytes: 256 * 1024,
  /** Longest time a line waits in memory: bounds what a host crash loses from the recording. */
  recordingFlushMs: 200,
} as const;

/** Integer in [min, max] or a RangeError naming the option. */
export function checkLimit(name: string, value: number, min: number, max: number = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

// Session-level defaults (host/session/session.ts, host/harness.ts).
export const HOST_SESSION_LIMITS = {
  /** Bridge start to ready line. Node start is ~50–150 ms; a cold sandbox disk or bwrap can add seconds. */
  readyTimeoutMs: 20_000,
  /** One look at a possibly-live bridge before deciding it is gone. A live local bridge answers in milliseconds; a port proxy in a second or two. A bridge this host just started gets readyTimeoutMs for its hello. */
  probeTimeoutMs: 3_000,
  /** stop/destroy acks: a live bridge answers in milliseconds; past this the bridge is presumed gone (destroy then cleans up itself). */
  lifecycleTimeoutMs: 10_000,
  /** How long a resume keeps probing a bridge that holds the state dir (a new bridge was refused) before giving up; as long as a port proxy's bad spell can last. */
  lockedBridgeWaitMs: 5 * 60_000,
  /** How long a resume waits for a bridge that answers hello with state 'stopping' to exit before replacing it (its graceful stop has a grace of a few seconds). */
  stoppingBridgeWaitMs: 15_000,
  /** Turn starts and stdin writes remembered to settle requests whose ack a dropped connection swallowed; a handful are ever in doubt. */
  maxRememberedWrites: 64,
  /** Times an at-most-once request is re-sent after the journal showed it did not land, before the slice fails. */
  maxSettleAttempts: 5,
  /** Largest translator snapshot kept in a resume payload (characters of JSON); bigger ones fall back to replaying the turn. */
  maxSnapshotChars: 256 * 1024,
} as const;
