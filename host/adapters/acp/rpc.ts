// The Agent Client Protocol (ACP, protocol version 1) as the acp adapter speaks it: the
// requests it writes (fixed ids, so turn-end matchers, the start gate and the translator
// recognise the answers) and the zod shapes of the lines it reads. Data and encoders only;
// what a line means for the stream is acp.ts's. docs/acp.md describes the exchange.
import { z } from 'zod';
import type { McpEnvNames } from '../../../protocol/v1/mcp-env.ts';

/** Our request ids. */
export const acpIds = {
  initialize: 'hb-initialize',
  newSession: 'hb-session-new',
  loadSession: 'hb-session-load',
  prompt: 'hb-prompt',
} as const;

/** Where our prompt's `_meta` carries the session's permission mode (the translator reads it back from the journal). */
export const metaKey = 'harness-bridge';

const line = (value: unknown) => `${JSON.stringify({ jsonrpc: '2.0', ...(value as object) })}\n`;

/**
 * initialize: we advertise fs (answered by the kit's responder, confined to the project dir) and no
 * terminal, so the agent runs commands itself.
 */
export const initialize = (fs: boolean) =>
  line({
    id: acpIds.initialize,
    method: 'initialize',
    params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs }, terminal: false }, clientInfo: { name: 'harness-bridge', version: '1' } },
  });

/** The bridge's MCP endpoint as an ACP http server: placeholders the bridge substitutes as it writes (launch stdinSecrets). */
export const mcpServers = (mcp: McpEnvNames | undefined) =>
  mcp ? [{ type: 'http', name: 'host', url: `\${${mcp.urlEnvVar}}`, headers: [{ name: 'Authorization', value: `Bearer \${${mcp.tokenEnvVar}}` }] }] : [];

export const newSession = (cwd: string, mcp: McpEnvNames | undefined) => line({ id: acpIds.newSession, method: 'session/new', params: { cwd, mcpServers: mcpServers(mcp) } });

export const loadSession = (sessionId: string, cwd: string, mcp: McpEnvNames | undefined) =>
  line({ id: acpIds.loadSession, method: 'session/load', params: { sessionId, cwd, mcpServers: mcpServers(mcp) } });

export const prompt = (sessionId: string, text: string, permissionMode: string) =>
  line({ id: acpIds.prompt, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text }], _meta: { [metaKey]: { permissionMode } } } });

export const cancel = (sessionId: string) => line({ method: 'session/cancel', params: { sessionId } });

export const result = (id: string | number, value: unknown) => line({ id, result: value });

const rpcId = z.union([z.string(), z.number()]);
const content = z.object({ type: z.string(), text: z.string().optional() }).loose();
const toolContent = z.object({ type: z.string(), path: z.string().optional(), oldText: z.string().nullish(), newText: z.string().optional(), content: content.optional() }).loose();
const update = z
  .object({
    sessionUpdate: z.string(),
    content: z.union([content, z.array(toolContent)]).optional(),
    toolCallId: z.string().optional(),
    title: z.string().nullish(),
    kind: z.string().nullish(),
    status: z.string().nullish(),
    rawInput: z.json().optional(),
    rawOutput: z.json().optional(),
    _meta: z.record(z.string(), z.json()).nullish(),
  })
  .loose();
export type AcpUpdate = z.infer<typeof update>;
export const usageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number(), cachedReadTokens: z.number().nullish(), cachedWriteTokens: z.number().nullish(), thoughtTokens: z.number().nullish() }).loose();
export type AcpUsage = z.infer<typeof usageSchema>;

/** Gemini CLI's turn usage, which it reports in the prompt answer's `_meta` instead of `usage`. */
const metaQuotaSchema = z.object({ quota: z.object({ token_count: z.object({ input_tokens: z.number(), output_tokens: z.number() }) }) });

/** A prompt answer's usage: ACP's `usage`, else the counts an agent puts in `_meta` (Gemini CLI's `quota.token_count`). */
export function promptUsage(result: { usage?: AcpUsage | null; _meta?: unknown } | null | undefined): AcpUsage | undefined {
  if (result?.usage) return result.usage;
  const meta = metaQuotaSchema.safeParse(result?._meta);
  return meta.success ? { inputTokens: meta.data.quota.token_count.input_tokens, outputTokens: meta.data.quota.token_count.output_tokens } : undefined;
}

/** A stdout line: a notification or request of the agent (method), or an answer to one of ours (id). */
export const lineSchema = z.union([
  z.object({
    method: z.string(),
    id: rpcId.optional(),
    params: z.object({ sessionId: z.string().optional(), update: update.optional(), toolCall: z.object({ toolCallId: z.string() }).loose().optional(), options: z.array(z.object({ optionId: z.string(), kind: z.string() }).loose()).optional() }).loose().optional(),
  }),
  z.object({
    id: rpcId,
    result: z.object({ sessionId: z.string().optional(), stopReason: z.string().optional(), usage: usageSchema.nullish() }).loose().nullish(),
    error: z.object({ message: z.string(), code: z.number().optional() }).loose().optional(),
  }),
]);

const sessionAnswer = new RegExp(`"id":"${acpIds.newSession}"`);
/** The sessionId in our session/new answer. */
export function sessionIdOf(text: string): string | undefined {
  if (!sessionAnswer.test(text)) return undefined;
  try {
    const value = JSON.parse(text) as { id?: unknown; result?: { sessionId?: unknown } };
    return value.id === acpIds.newSession && typeof value.result?.sessionId === 'string' ? value.result.sessionId : undefined;
  } catch {
    return undefined;
  }
}
