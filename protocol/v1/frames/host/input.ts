// host → bridge: bytes for the running CLI's stdin (a mid-turn user message,
// a tool result for a stdin-driven CLI, a control response). Journaled as `stdin`.
import * as z from 'zod';
import { requestIdSchema, turnIdSchema } from '../../common.ts';

export const inputFrameSchema = z.object({
  type: z.literal('input'),
  id: requestIdSchema.optional(),
  turnId: turnIdSchema,
  text: z.string(),
});
export type InputFrame = z.infer<typeof inputFrameSchema>;
