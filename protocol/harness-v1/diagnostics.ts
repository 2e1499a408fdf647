// Diagnostics: the debug config a session is given and the shape it reports.
import * as z from 'zod';

export const harnessV1DebugLevelSchema = z.enum(['error', 'warn', 'info', 'debug', 'trace']);
export type HarnessV1DebugLevel = z.infer<typeof harnessV1DebugLevelSchema>;

export const harnessV1DebugConfigSchema = z.object({
  enabled: z.boolean().optional(),
  level: harnessV1DebugLevelSchema.optional(),
  subsystems: z.array(z.string()).optional(),
});
export type HarnessV1DebugConfig = z.infer<typeof harnessV1DebugConfigSchema>;

export type HarnessV1Diagnostic = {
  readonly level: HarnessV1DebugLevel;
  readonly message: string;
  /** Dotted subsystem, e.g. `bridge.journal` or `sandbox.log.<source>`. */
  readonly subsystem: string;
  readonly kind: 'log' | 'event';
  readonly source?: string;
  readonly stream?: 'stdout' | 'stderr';
  readonly attrs?: Record<string, unknown>;
  readonly error?: { name?: string; message: string; stack?: string };
  readonly sessionId?: string;
  /** Epoch ms. */
  readonly timestamp: number;
};

export type HarnessV1Observability = {
  readonly debug?: HarnessV1DebugConfig;
  readonly report?: (diagnostic: HarnessV1Diagnostic) => void;
};
