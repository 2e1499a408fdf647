// bridge → host: one bridge log event, sent only to an owner that asked.
import * as z from 'zod';
import { logLevelSchema } from '../host/diagnostics.ts';

export const diagnosticFrameSchema = z.object({
  type: z.literal('diagnostic'),
  level: logLevelSchema,
  subsystem: z.string(),
  message: z.string(),
  attrs: z.record(z.string(), z.unknown()).optional(),
  ts: z.number(),
});
export type DiagnosticFrame = z.infer<typeof diagnosticFrameSchema>;
