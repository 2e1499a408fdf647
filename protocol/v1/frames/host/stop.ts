// host → bridge: stop the CLI gracefully (signal, grace, kill), flush and
// fsync the journal, ack, exit. The state dir stays for a later resume.
import * as z from 'zod';
import { requestIdSchema } from '../../common.ts';

export const stopFrameSchema = z.object({
  type: z.literal('stop'),
  id: requestIdSchema.optional(),
  graceMs: z.number().int().min(0).max(60_000).optional(),
});
export type StopFrame = z.infer<typeof stopFrameSchema>;
