// The hand-over between the demo's two processes: the resume state and where
// things are (written by demo.ts, read by demo-continue.ts), and the second
// process's result (read back by demo.ts). Both validated with zod on read.
import { z } from 'zod';
import { streamPartSchema } from '../../protocol/harness-v1/stream-part-schema.ts';

export const demoStateSchema = z.object({
  v: z.literal(1),
  adapter: z.string().min(1),
  /** The local sandbox provider's roots and the session in it. */
  root: z.string().min(1),
  templatesRoot: z.string().min(1),
  sessionId: z.string().min(1),
  workDir: z.string().min(1),
  recordDir: z.string().min(1),
  /** The scripted model the first process serves (absent: no model, or the real API). */
  modelUrl: z.string().optional(),
  /** The HarnessV1 resume state from doSuspendTurn (the harness validates it). */
  resumeState: z.unknown(),
  resultFile: z.string().min(1),
});
export type DemoState = z.infer<typeof demoStateSchema>;

export const demoResultSchema = z.object({
  pid: z.number().int(),
  parts: z.array(streamPartSchema),
  cursor: z.number().int().nonnegative(),
  rungs: z.array(z.string()),
  finish: z.string(),
});
export type DemoResult = z.infer<typeof demoResultSchema>;
