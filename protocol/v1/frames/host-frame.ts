// Every frame a host may send to the bridge, as one discriminated union.
import * as z from 'zod';
import { abortFrameSchema } from './host/abort.ts';
import { approvalFrameSchema } from './host/approval.ts';
import { attachFrameSchema } from './host/attach.ts';
import { destroyFrameSchema } from './host/destroy.ts';
import { diagnosticsFrameSchema } from './host/diagnostics.ts';
import { expectFrameSchema } from './host/expect.ts';
import { hostWaitFrameSchema } from './host/host-wait.ts';
import { inputFrameSchema } from './host/input.ts';
import { journalEpochFrameSchema } from './host/journal-epoch.ts';
import { pingFrameSchema } from './ping.ts';
import { pongFrameSchema } from './pong.ts';
import { rerunFrameSchema } from './host/rerun.ts';
import { signalFrameSchema } from './host/signal.ts';
import { startFrameSchema } from './host/start.ts';
import { stopFrameSchema } from './host/stop.ts';
import { toolResultFrameSchema } from './host/tool-result.ts';

export const hostFrameSchema = z.discriminatedUnion('type', [
  attachFrameSchema,
  startFrameSchema,
  inputFrameSchema,
  signalFrameSchema,
  abortFrameSchema,
  rerunFrameSchema,
  toolResultFrameSchema,
  approvalFrameSchema,
  hostWaitFrameSchema,
  journalEpochFrameSchema,
  stopFrameSchema,
  destroyFrameSchema,
  diagnosticsFrameSchema,
  expectFrameSchema,
  pingFrameSchema,
  pongFrameSchema,
]);
export type HostFrame = z.infer<typeof hostFrameSchema>;
export type HostFrameType = HostFrame['type'];
