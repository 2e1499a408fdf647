// host → bridge: interrupt the running turn (the launch spec's interrupt:
// stdin input or a signal); after graceMs the process group is killed.
import * as z from 'zod';
import { requestIdSchema, turnIdSchema } from '../../common.ts';

export const abortFrameSchema = z.object({
  type: z.literal('abort'),
  id: requestIdSchema.optional(),
  turnId: turnIdSchema,
  graceMs: z.number().int().min(0).max(60_000).optional(),
});
export type AbortFrame = z.infer<typeof abortFrameSchema>;
