// host → bridge: the answer to a journaled `tool-call` (returned to the CLI over MCP).
import * as z from 'zod';
import { callIdSchema, requestIdSchema } from '../../common.ts';

export const toolResultFrameSchema = z.object({
  type: z.literal('tool-result'),
  id: requestIdSchema.optional(),
  callId: callIdSchema,
  output: z.unknown(),
  isError: z.boolean().optional(),
});
export type ToolResultFrame = z.infer<typeof toolResultFrameSchema>;
