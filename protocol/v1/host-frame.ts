// Every frame a host may send to the bridge, as one discriminated union.
import { z } from 'zod';
import { abortFrameSchema } from './abort.ts';
import { approvalFrameSchema } from './approval.ts';
import { attachFrameSchema } from './attach.ts';
import { destroyFrameSchema } from './destroy.ts';
import { diagnosticsFrameSchema } from './diagnostics.ts';
import { inputFrameSchema } from './input.ts';
import { pingFrameSchema } from './ping.ts';
import { pongFrameSchema } from './pong.ts';
import { rerunFrameSchema } from './rerun.ts';
import { signalFrameSchema } from './signal.ts';
import { startFrameSchema } from './start.ts';
import { stopFrameSchema } from './stop.ts';
import { toolResultFrameSchema } from './tool-result.ts';

export const hostFrameSchema = z.discriminatedUnion('type', [
  attachFrameSchema,
  startFrameSchema,
  inputFrameSchema,
  signalFrameSchema,
  abortFrameSchema,
  rerunFrameSchema,
  toolResultFrameSchema,
  approvalFrameSchema,
  stopFrameSchema,
  destroyFrameSchema,
  diagnosticsFrameSchema,
  pingFrameSchema,
  pongFrameSchema,
]);
export type HostFrame = z.infer<typeof hostFrameSchema>;
export type HostFrameType = HostFrame['type'];
