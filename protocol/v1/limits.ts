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
  /**
   * The range of a launch's io.maxLineBytes. A request outside it is refused at
   * the start (the host kit's `bad-launch`, the bridge's `bad-frame`), never
   * clamped: an adapter that needs its end line whole for a turnEnd matcher
   * would hang its turns on a silently smaller cap. The ceiling keeps one
   * piece, JSON-escaped at worst 6× (\u00XX), within one maxFrameBytes frame;
   * the floor lets a piece hold a whole 4-byte UTF-8 char with room to spare.
   */
  minLineBytes: 16,
  maxLineBytesCeiling: 1024 * 1024,
} as const;
