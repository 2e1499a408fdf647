// The zod shapes of the pi --mode rpc lines the pi translator reads
// (test/fixtures/pi/README.md); what a line means is pi.ts's.
import { z } from 'zod';

const usage = z.object({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite: z.number() }).partial().catchall(z.json());
const message = z.object({ role: z.string(), stopReason: z.string().optional(), errorMessage: z.string().optional(), usage: usage.optional() });
export const lineSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('response'), id: z.string().optional(), command: z.string(), success: z.boolean(), error: z.string().optional(), data: z.object({ model: z.object({ id: z.string() }).nullish() }).nullish() }),
  z.object({
    type: z.literal('message_update'),
    // `partial` (the whole message so far) is read only at a toolcall_start, for the call's id and name.
    assistantMessageEvent: z.object({ type: z.string(), contentIndex: z.number().optional(), delta: z.string().optional(), partial: z.unknown().optional() }),
  }),
  z.object({ type: z.enum(['message_end', 'turn_end']), message }),
  z.object({ type: z.literal('tool_execution_start'), toolCallId: z.string(), toolName: z.string(), args: z.json().optional() }),
  z.object({ type: z.literal('tool_execution_end'), toolCallId: z.string(), toolName: z.string(), isError: z.boolean(), result: z.object({ content: z.array(z.json()).optional(), details: z.json().optional() }).partial().nullish() }),
  z.object({ type: z.literal('extension_ui_request'), id: z.string(), method: z.string(), title: z.string().optional(), message: z.string().optional() }),
  z.object({ type: z.literal('compaction_end'), reason: z.string().optional(), result: z.object({ summary: z.string(), tokensBefore: z.number().optional() }).nullish() }),
  z.object({ type: z.enum(['agent_start', 'agent_end', 'turn_start', 'message_start', 'tool_execution_update', 'queue_update', 'compaction_start']) }),
]);
export const approvalMessage = z.object({ toolCallId: z.string() });
export const partialToolCall = z.object({ content: z.array(z.unknown()) });
export const toolCallBlock = z.object({ type: z.literal('toolCall'), id: z.string().min(1), name: z.string().min(1) });
/** A tool result's content that is text blocks only, as one text. */
export const textContent = z.array(z.object({ type: z.literal('text'), text: z.string() })).transform((blocks) => blocks.map((b) => b.text).join('\n'));
export type PiUsage = z.infer<typeof usage>;
/** A tool call's arguments that name a file (write, edit: the file-change part's path). */
export const pathArgs = z.object({ path: z.string() });
/** The answer to our get_state command: the session file is the thread. */
export const stateAnswer = z.object({ data: z.object({ sessionFile: z.string().min(1) }) });
