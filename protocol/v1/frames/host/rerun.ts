// host → bridge: the lossy rung. Re-drive the CLI's own persisted thread
// (e.g. `--resume <thread>`) as a new turn whose records are marked recomputed.
import * as z from 'zod';
import { requestIdSchema, turnIdSchema } from '../../common.ts';
import { launchSpecSchema } from '../../launch-spec.ts';
import { hostToolSpecSchema } from '../../tool-spec.ts';

export const rerunFrameSchema = z.object({
  type: z.literal('rerun'),
  id: requestIdSchema.optional(),
  /** The new turn's id; `of` names the turn being recomputed. */
  turnId: turnIdSchema,
  of: turnIdSchema,
  launch: launchSpecSchema,
  input: z.string().optional(),
  tools: z.array(hostToolSpecSchema).max(256).optional(),
});
export type RerunFrame = z.infer<typeof rerunFrameSchema>;
