// bridge → host (and host-side channel errors): a typed refusal. The session
// carries on; only `unauthorized` and `version-mismatch` end a connection.
import * as z from 'zod';
import { requestIdSchema } from '../../common.ts';
import { errorCodeSchema } from '../../error-codes.ts';

export const errorFrameSchema = z.object({
  type: z.literal('error'),
  /** Echoes the request's id when the refused frame had one. */
  id: requestIdSchema.optional(),
  code: errorCodeSchema,
  message: z.string(),
  /** For cursor errors: the journal's first and last seq. */
  firstSeq: z.number().int().optional(),
  lastSeq: z.number().int().optional(),
});
export type ErrorFrame = z.infer<typeof errorFrameSchema>;
