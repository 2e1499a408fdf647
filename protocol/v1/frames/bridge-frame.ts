// Every frame the bridge may send to a host, as one discriminated union.
import * as z from 'zod';
import { ackFrameSchema } from './bridge/ack.ts';
import { diagnosticFrameSchema } from './bridge/diagnostic.ts';
import { errorFrameSchema } from './bridge/error.ts';
import { helloFrameSchema } from './bridge/hello.ts';
import { pingFrameSchema } from './ping.ts';
import { pongFrameSchema } from './pong.ts';
import { recordsFrameSchema } from './bridge/records.ts';
import { replayBeginFrameSchema } from './bridge/replay-begin.ts';
import { replayEndFrameSchema } from './bridge/replay-end.ts';

export const bridgeFrameSchema = z.discriminatedUnion('type', [
  helloFrameSchema,
  recordsFrameSchema,
  replayBeginFrameSchema,
  replayEndFrameSchema,
  ackFrameSchema,
  errorFrameSchema,
  diagnosticFrameSchema,
  pingFrameSchema,
  pongFrameSchema,
]);
export type BridgeFrame = z.infer<typeof bridgeFrameSchema>;
export type BridgeFrameType = BridgeFrame['type'];
