// bridge → host: a request with an `id` succeeded.
import * as z from 'zod';
import { requestIdSchema, seqSchema } from '../../common.ts';

export const ackFrameSchema = z.object({
  type: z.literal('ack'),
  id: requestIdSchema,
  /** The frame type acknowledged. */
  of: z.string(),
  /** The journal's last seq after the request took effect. */
  lastSeq: seqSchema.optional(),
});
export type AckFrame = z.infer<typeof ackFrameSchema>;
