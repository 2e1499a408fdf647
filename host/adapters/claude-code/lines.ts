// The zod shapes of the Claude Code stream-json lines the claude-code translator reads
// (test/fixtures/claude-code/README.md); what a line means is claude-code.ts's.
import { z } from 'zod';
import { anthropicUsageSchema } from '../../adapter-kit/anthropic-usage.ts';

const usage = anthropicUsageSchema.optional();
const nested = { parent_tool_use_id: z.string().nullish() };
export const block = z.object({
  type: z.string(),
  text: z.string().optional(),
  thinking: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.json().optional(),
  tool_use_id: z.string().optional(),
  content: z.json().optional(),
  is_error: z.boolean().optional(),
});
export type Block = z.infer<typeof block>;
const streamEvent = z.object({
  type: z.string(),
  message: z.object({ id: z.string(), usage }).optional(),
  content_block: block.optional(),
  delta: z
    .object({ type: z.string().optional(), text: z.string().optional(), thinking: z.string().optional(), partial_json: z.string().optional(), stop_reason: z.string().nullish() })
    .optional(),
  usage,
});
export const lineSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('system'),
    subtype: z.string(),
    model: z.string().optional(),
    compact_metadata: z.object({ trigger: z.enum(['manual', 'auto']).catch('auto'), pre_tokens: z.number().optional(), post_tokens: z.number().optional() }).optional(),
  }),
  z.object({ type: z.literal('stream_event'), ...nested, event: streamEvent }),
  z.object({
    type: z.literal('assistant'),
    ...nested,
    aborted: z.boolean().optional(),
    is_api_error_message: z.boolean().optional(),
    message: z.object({ id: z.string(), model: z.string().optional(), content: z.array(block), usage }),
  }),
  z.object({ type: z.literal('user'), ...nested, message: z.object({ content: z.union([z.string(), z.array(block)]) }), tool_use_result: z.json().optional() }),
  z.object({
    type: z.literal('control_request'),
    request_id: z.string(),
    request: z.object({ subtype: z.string(), tool_use_id: z.string().optional(), input: z.json().optional() }),
  }),
  z.object({ type: z.literal('command_lifecycle') }), // our own inputs' bookkeeping (the bridge's inputAck reads it)
  z.object({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean(),
    result: z.string().optional(),
    errors: z.array(z.string()).optional(),
    stop_reason: z.string().nullish(),
    terminal_reason: z.string().nullish(),
    usage,
    total_cost_usd: z.number().optional(),
    num_turns: z.number().optional(),
  }),
]);
export const fileResult = z.object({ filePath: z.string(), type: z.string().optional() });
