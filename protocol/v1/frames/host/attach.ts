// host → bridge: claim the session's stream and receive every record with
// seq > cursor (inside replay-begin/replay-end), then live records.
// Exactly one owner: a newer attach displaces the older one.
import { z } from 'zod';
import { requestIdSchema, seqSchema } from '../../common.ts';

export const attachFrameSchema = z.object({
  type: z.literal('attach'),
  id: requestIdSchema.optional(),
  protocolVersion: z.string(),
  cursor: seqSchema,
  /** When set, the bridge refuses with journal-mismatch if it holds another journal. */
  journalId: z.string().optional(),
});
export type AttachFrame = z.infer<typeof attachFrameSchema>;
