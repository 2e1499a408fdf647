// Either direction: the answer to `ping`.
import * as z from 'zod';

export const pongFrameSchema = z.object({ type: z.literal('pong'), t: z.number().optional() });
export type PongFrame = z.infer<typeof pongFrameSchema>;
