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
  /** The journal's id after the request took effect (protocol 1.1: `journal-epoch`'s new id). */
  journalId: z.string().min(1).max(200).optional(),
});
export type AckFrame = z.infer<typeof ackFrameSchema>;
