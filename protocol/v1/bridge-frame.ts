// Every frame the bridge may send to a host, as one discriminated union.
import { z } from 'zod';
import { ackFrameSchema } from './ack.ts';
import { diagnosticFrameSchema } from './diagnostic.ts';
import { errorFrameSchema } from './error.ts';
import { helloFrameSchema } from './hello.ts';
import { pingFrameSchema } from './ping.ts';
import { pongFrameSchema } from './pong.ts';
import { recordsFrameSchema } from './records.ts';
import { replayBeginFrameSchema } from './replay-begin.ts';
import { replayEndFrameSchema } from './replay-end.ts';

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
