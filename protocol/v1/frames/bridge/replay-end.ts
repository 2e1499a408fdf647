// bridge → host: catch-up done; what follows is live.
import * as z from 'zod';
import { seqSchema } from '../../common.ts';

export const replayEndFrameSchema = z.object({ type: z.literal('replay-end'), to: seqSchema });
export type ReplayEndFrame = z.infer<typeof replayEndFrameSchema>;
