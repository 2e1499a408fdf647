// Either direction: heartbeat. The receiver answers with `pong` echoing `t`.
import * as z from 'zod';

export const pingFrameSchema = z.object({ type: z.literal('ping'), t: z.number().optional() });
export type PingFrame = z.infer<typeof pingFrameSchema>;
