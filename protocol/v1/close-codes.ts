// WebSocket close codes the bridge uses (4000-4999 is the application range).
export const CLOSE_CODES_V1 = {
  normal: 1000,
  goingAway: 1001,
  tooLarge: 1009, // ws closes with this when a frame exceeds its hard maxPayload
  displaced: 4000, // a newer attach took ownership of the stream
  versionMismatch: 4001,
  heartbeatTimeout: 4002,
  stopping: 4003, // the bridge is stopping or being destroyed
  slowConsumer: 4004, // the socket stayed behind past maxBufferedBytes for too long
  failed: 4005, // the bridge is exiting on a fatal error (the journal cannot be written: ENOSPC…); the reason names it
} as const;
export type CloseCode = (typeof CLOSE_CODES_V1)[keyof typeof CLOSE_CODES_V1];
