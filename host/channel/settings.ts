// The channel's tuning as it runs: each option of BridgeChannelOptions with
// its CHANNEL_LIMITS default filled in and its bounds checked, in one place
// (checkLimit throws a RangeError naming the option, at construction).
import { CHANNEL_LIMITS, checkLimit } from '../limits.ts';
import type { BridgeChannelOptions } from './types.ts';

export type ChannelSettings = {
  readonly reconnectDeadlineMs: number;
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  readonly heartbeatMs: number;
  readonly connectTimeoutMs: number;
  readonly maxQueuedFrames: number;
  readonly maxInboundQueuedFrames: number;
  readonly maxInboundQueuedBytes: number;
};

export function channelSettings(options: BridgeChannelOptions): ChannelSettings {
  checkLimit('cursor', options.cursor, 0);
  const reconnectDeadlineMs = checkLimit('reconnectDeadlineMs', options.reconnectDeadlineMs ?? CHANNEL_LIMITS.reconnectDeadlineMs, 0);
  const initialMs = checkLimit('backoff.initialMs', options.backoff?.initialMs ?? CHANNEL_LIMITS.initialBackoffMs, 1);
  const maxMs = checkLimit('backoff.maxMs', options.backoff?.maxMs ?? CHANNEL_LIMITS.maxBackoffMs, initialMs);
  return {
    reconnectDeadlineMs,
    backoff: { initialMs, maxMs },
    heartbeatMs: checkLimit('heartbeatMs', options.heartbeatMs ?? CHANNEL_LIMITS.heartbeatMs, 10),
    connectTimeoutMs: checkLimit('connectTimeoutMs', options.connectTimeoutMs ?? CHANNEL_LIMITS.connectTimeoutMs, 10),
    maxQueuedFrames: checkLimit('maxQueuedFrames', options.maxQueuedFrames ?? CHANNEL_LIMITS.maxQueuedFrames, 1),
    maxInboundQueuedFrames: checkLimit('maxInboundQueuedFrames', options.maxInboundQueuedFrames ?? CHANNEL_LIMITS.maxInboundQueuedFrames, 1),
    maxInboundQueuedBytes: checkLimit('maxInboundQueuedBytes', options.maxInboundQueuedBytes ?? CHANNEL_LIMITS.maxInboundQueuedBytes, 1),
  };
}
