// host → bridge: send a signal to the CLI's process group.
import * as z from 'zod';
import { requestIdSchema, signalNameSchema, turnIdSchema } from '../../common.ts';

export const signalFrameSchema = z.object({
  type: z.literal('signal'),
  id: requestIdSchema.optional(),
  turnId: turnIdSchema,
  signal: signalNameSchema,
});
export type SignalFrame = z.infer<typeof signalFrameSchema>;
