// A host tool the bridge serves to the CLI over its MCP endpoint (docs/design.md#d6).
import * as z from 'zod';

export const hostToolSpecSchema = z.object({
  name: z.string().min(1).max(128),
  description: z.string().max(10_000).optional(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
});
export type HostToolSpec = z.infer<typeof hostToolSpecSchema>;
