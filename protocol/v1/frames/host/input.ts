// host → bridge: bytes for the running CLI's stdin (a mid-turn user message,
// a tool result for a stdin-driven CLI, a control response). Journaled as `stdin`.
import * as z from 'zod';
import { callIdSchema, requestIdSchema, turnIdSchema } from '../../common.ts';

export const inputFrameSchema = z.object({
  type: z.literal('input'),
  id: requestIdSchema.optional(),
  turnId: turnIdSchema,
  text: z.string(),
  /** The call these bytes answer (protocol 1.1; a `host-wait` named it): the bridge stops waiting on it, or refuses with `unknown-call` once the owner-less timeout failed it. */
  callId: callIdSchema.optional(),
  /**
   * With `callId` of a host tool call (protocol 1.1): the host's result these bytes encode. The bridge journals it as
   * the call's `tool-result` record before the bytes, so every reader of the journal (a resuming host, `replay`)
   * sees the call answered with this result, as for a call over MCP.
   */
  answer: z.object({ output: z.unknown(), isError: z.boolean() }).optional(),
});
export type InputFrame = z.infer<typeof inputFrameSchema>;
