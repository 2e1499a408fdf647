// host → bridge: begin a turn. With a live long-lived process (lifetime
// 'session') the input is written to it; otherwise the launch spec is spawned.
import * as z from 'zod';
import { requestIdSchema, turnIdSchema } from '../../common.ts';
import { launchSpecSchema } from '../../launch-spec.ts';
import { hostToolSpecSchema } from '../../tool-spec.ts';

export const startFrameSchema = z.object({
  type: z.literal('start'),
  id: requestIdSchema.optional(),
  turnId: turnIdSchema,
  launch: launchSpecSchema,
  /** Written to the CLI's stdin once it is running (e.g. a stream-json user message line). */
  input: z.string().optional(),
  /** Host tools served on the MCP endpoint for this turn. */
  tools: z.array(hostToolSpecSchema).max(256).optional(),
});
export type StartFrame = z.infer<typeof startFrameSchema>;
