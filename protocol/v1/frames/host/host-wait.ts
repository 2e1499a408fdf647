// host → bridge (protocol 1.1): the running CLI waits on the host for a call the bridge cannot see
// itself, because it came and goes over the CLI's own stdio (a stdin-driven host tool call, a CLI's
// approval request). The bridge keeps it with its MCP calls, so the owner-less timeout
// (docs/bridge-internals.md#no-owner) covers it too: with no host attached for that long, the bridge
// writes `onTimeout` to the CLI's stdin (the adapter's error answer or denial, encoded by the host
// now, since only the host knows the CLI's encoding) and journals a failed `tool-result` / `approval`.
// The host's own answer is an `input` frame naming the same `callId`. A call the bridge already holds
// (an MCP call) is acked and left as it is. Ends with its turn.
import * as z from 'zod';
import { callIdSchema, requestIdSchema, turnIdSchema } from '../../common.ts';

export const hostWaitFrameSchema = z.object({
  type: z.literal('host-wait'),
  id: requestIdSchema.optional(),
  turnId: turnIdSchema,
  callId: callIdSchema,
  kind: z.enum(['tool-call', 'approval-request']),
  /** Bytes for the CLI's stdin when the owner-less timeout fails the call (journaled as `stdin`). */
  onTimeout: z.string().max(64 * 1024),
});
export type HostWaitFrame = z.infer<typeof hostWaitFrameSchema>;
