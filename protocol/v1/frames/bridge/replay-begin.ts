// bridge → host: catch-up records follow, seq from..to inclusive (from > to: nothing to replay).
import * as z from 'zod';
import { seqSchema } from '../../common.ts';

export const replayBeginFrameSchema = z.object({ type: z.literal('replay-begin'), from: seqSchema, to: seqSchema });
export type ReplayBeginFrame = z.infer<typeof replayBeginFrameSchema>;
