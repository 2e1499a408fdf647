// host → bridge (protocol 1.1): the host read this journal up to `cursor`, beyond its last seq (the
// state dir was restored from an earlier snapshot: the journal is behind). The bridge gives the
// journal a new id before the host causes any new record, so (journal id, seq) names one record
// forever (docs/design.md#d5). Acked with the new `journalId`; refused with `journal-mismatch` when
// the journal is another one or is not behind `cursor`. Needs ownership (attach first).
import * as z from 'zod';
import { requestIdSchema, seqSchema } from '../../common.ts';

export const journalEpochFrameSchema = z.object({
  type: z.literal('journal-epoch'),
  id: requestIdSchema.optional(),
  /** The journal the host read (the one the bridge holds now, behind). */
  journalId: z.string().min(1).max(200),
  /** How far the host read it. */
  cursor: seqSchema,
});
export type JournalEpochFrame = z.infer<typeof journalEpochFrameSchema>;
