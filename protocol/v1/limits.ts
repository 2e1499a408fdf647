// Protocol-level limits both ends agree on. Each package may tighten these in
// its own limits.ts; constructors reject bad values with a RangeError.
export const PROTOCOL_LIMITS_V1 = {
  /** A frame larger than this is answered with `too-large` and dropped; the connection stays. */
  maxFrameBytes: 8 * 1024 * 1024,
  /**
   * ws's own maxPayload: beyond this the socket is closed with 1009 instead of
   * buffering the frame. Above maxFrameBytes so normal over-limit frames still
   * get a typed error on a live connection.
   */
  maxPayloadBytes: 64 * 1024 * 1024,
} as const;
