// Session-level defaults (channel limits are in host/limits.ts), each with its reason.
export const HOST_SESSION_LIMITS = {
  /** Bridge start to ready line. Node start is ~50–150 ms; a cold sandbox disk or bwrap can add seconds. */
  readyTimeoutMs: 20_000,
  /** One look at a possibly-live bridge before deciding it is gone. A live local bridge answers in milliseconds; a port proxy in a second or two. */
  probeTimeoutMs: 3_000,
  /** Largest translator snapshot kept in a resume payload (characters of JSON); bigger ones fall back to replaying the turn. */
  maxSnapshotChars: 256 * 1024,
} as const;
