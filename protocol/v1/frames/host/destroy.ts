// host → bridge: kill the CLI, remove the state dir, ack, exit.
import * as z from 'zod';
import { requestIdSchema } from '../../common.ts';

export const destroyFrameSchema = z.object({ type: z.literal('destroy'), id: requestIdSchema.optional() });
export type DestroyFrame = z.infer<typeof destroyFrameSchema>;
