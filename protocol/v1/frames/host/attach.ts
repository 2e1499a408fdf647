// host → bridge: claim the session's stream and receive every record with
// seq > cursor (inside replay-begin/replay-end), then live records.
// Exactly one owner: a newer attach displaces the older one. With `owner`
// (fencing, docs/design.md#d3) the bridge lets a host in only with a newer
// epoch, the same owner again, or when the current owner has no socket;
// anyone else is refused with `fenced`.
import * as z from 'zod';
import { requestIdSchema, seqSchema } from '../../common.ts';

export const attachFrameSchema = z.object({
  type: z.literal('attach'),
  id: requestIdSchema.optional(),
  protocolVersion: z.string(),
  cursor: seqSchema,
  /** When set, the bridge refuses with journal-mismatch if it holds another journal. */
  journalId: z.string().optional(),
  /** Who attaches: the epoch its resume took (the state's epoch + 1, 1 for a fresh session) and a random id of the host instance. */
  owner: z.object({ epoch: z.number().int().positive(), id: z.string().min(1).max(128) }).optional(),
});
export type AttachFrame = z.infer<typeof attachFrameSchema>;
