// host → bridge: ask for (or stop) the bridge's logs as `diagnostic` frames.
import * as z from 'zod';
import { requestIdSchema } from '../../common.ts';

export const logLevelSchema = z.enum(['error', 'warn', 'info', 'debug', 'trace']);
export type LogLevel = z.infer<typeof logLevelSchema>;

export const diagnosticsFrameSchema = z.object({
  type: z.literal('diagnostics'),
  id: requestIdSchema.optional(),
  enabled: z.boolean(),
  level: logLevelSchema.optional(),
});
export type DiagnosticsFrame = z.infer<typeof diagnosticsFrameSchema>;
