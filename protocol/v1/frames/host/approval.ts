// host → bridge: the answer to a journaled `approval-request`.
import * as z from 'zod';
import { callIdSchema, requestIdSchema } from '../../common.ts';

export const approvalFrameSchema = z.object({
  type: z.literal('approval'),
  id: requestIdSchema.optional(),
  callId: callIdSchema,
  approved: z.boolean(),
  reason: z.string().max(10_000).optional(),
});
export type ApprovalFrame = z.infer<typeof approvalFrameSchema>;
