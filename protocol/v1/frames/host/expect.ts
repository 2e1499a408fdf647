// host → bridge (protocol 1.2): the launch the next turn will likely start with (the adapter's launch for a
// first turn, sent once attached). A hint, never a turn: the bridge may make ahead what that launch's spawn
// needs (a kept CLI's jail, docs/bridge-internals.md#jail-ahead) and acks it whether it did or not; a
// `start` whose launch differs is served as usual. Needs ownership (attach first).
import * as z from 'zod';
import { requestIdSchema } from '../../common.ts';
import { launchSpecSchema } from '../../launch-spec.ts';

export const expectFrameSchema = z.object({
  type: z.literal('expect'),
  id: requestIdSchema.optional(),
  launch: launchSpecSchema,
});
export type ExpectFrame = z.infer<typeof expectFrameSchema>;
