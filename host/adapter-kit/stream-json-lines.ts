// The zod shapes of Claude-style stream-json lines: what Claude Code prints with
// `--output-format stream-json --verbose --include-partial-messages` (Anthropic
// Messages stream events in `stream_event` lines, whole messages in `assistant`
// and `user` lines, `control_request`s of its stdio permission prompt, a `result`
// per run), as the stream-json translator (stream-json.ts) reads them. Unknown
// keys are dropped. Claude Code's captures: test/fixtures/claude-code/README.md.
import { z } from 'zod';
import { anthropicUsageSchema } from './anthropic-usage.ts';

const usage = anthropicUsageSchema.optional();
/** Set on the lines of a subagent's (Task) own conversation. */
const nested = { parent_tool_use_id: z.string().nullish() };

/** A content block of an Anthropic message: text, thinking, tool_use, tool_result. */
export const streamJsonBlockSchema = z.object({
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
export type StreamJsonBlock = z.infer<typeof streamJsonBlockSchema>;

/** An Anthropic Messages stream event: message_start, content_block_start/_delta/_stop, message_delta, message_stop. */
const streamEvent = z.object({
  type: z.string(),
  message: z.object({ id: z.string(), usage }).optional(),
  content_block: streamJsonBlockSchema.optional(),
  delta: z
    .object({ type: z.string().optional(), text: z.string().optional(), thinking: z.string().optional(), partial_json: z.string().optional(), stop_reason: z.string().nullish() })
    .optional(),
  usage,
});

export const streamJsonLineSchema = z.discriminatedUnion('type', [
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
    message: z.object({ id: z.string(), model: z.string().optional(), content: z.array(streamJsonBlockSchema), usage }),
  }),
  z.object({ type: z.literal('user'), ...nested, message: z.object({ content: z.union([z.string(), z.array(streamJsonBlockSchema)]) }), tool_use_result: z.json().optional() }),
  z.object({
    type: z.literal('control_request'),
    request_id: z.string(),
    request: z.object({ subtype: z.string(), tool_use_id: z.string().optional(), input: z.json().optional() }),
  }),
  z.object({ type: z.literal('command_lifecycle') }), // the progress of our own user lines (a launch's inputAck reads it)
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
export type StreamJsonLine = z.infer<typeof streamJsonLineSchema>;

/** What the stream-json threadId reader parses: init and result lines name the CLI's session. */
export const streamJsonSessionSchema = z.object({ session_id: z.string().min(1) });
