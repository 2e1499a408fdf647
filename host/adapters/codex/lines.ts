// The zod shapes of the Codex app-server stdout lines the codex translator reads
// (test/fixtures/codex/README.md); what a line means is codex.ts's.
import { z } from 'zod';

const rpcId = z.union([z.string(), z.number()]);
const count = z.number().nullish();
const counts = z.object({ inputTokens: count, cachedInputTokens: count, cacheWriteInputTokens: count, outputTokens: count, reasoningOutputTokens: count });
const change = z.object({ path: z.string(), kind: z.object({ type: z.string() }), diff: z.string().optional() });
const item = z.object({
  type: z.string(),
  id: z.string(),
  ...{ text: z.string().optional(), summary: z.array(z.string()).optional(), content: z.array(z.string()).optional() },
  ...{ command: z.string().optional(), cwd: z.string().optional(), status: z.string().optional(), aggregatedOutput: z.string().nullish(), exitCode: z.number().nullish() },
  ...{ changes: z.array(change).optional(), server: z.string().optional(), tool: z.string().optional(), arguments: z.json().optional(), result: z.json().optional(), error: z.json().optional(), query: z.string().optional() },
});
export type Item = z.infer<typeof item>;
/** A stdout line: a notification or a request from Codex (method), or an answer to one of ours (id). Unknown keys are dropped. */
export const lineSchema = z.union([
  z.object({
    method: z.string(),
    id: rpcId.optional(),
    params: z.object({
      ...{ item: item.optional(), itemId: z.string().optional(), delta: z.string().optional(), threadId: z.string().optional() },
      turn: z.object({ id: z.string(), status: z.string(), error: z.object({ message: z.string(), codexErrorInfo: z.json().optional() }).nullish() }).optional(),
      tokenUsage: z.object({ last: counts }).optional(),
    }).optional(),
  }),
  z.object({ id: rpcId, result: z.object({ turn: z.object({ id: z.string() }).optional() }).optional(), error: z.object({ message: z.string() }).optional() }),
]);
export type Counts = z.infer<typeof counts>;
