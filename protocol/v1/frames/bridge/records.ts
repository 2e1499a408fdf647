// bridge → host: a batch of records, in seq order, contiguous. The bridge
// builds this frame by concatenating already-serialized records (one
// serialization per record, reused for disk, live send and replay).
import * as z from 'zod';
import { recordSchema } from '../../journal-record.ts';

export const recordsFrameSchema = z.object({
  type: z.literal('records'),
  records: z.array(recordSchema).min(1),
});
export type RecordsFrame = z.infer<typeof recordsFrameSchema>;
