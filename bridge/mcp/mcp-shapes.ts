// What the MCP endpoint puts in its answers and reads from requests: the bearer token, a listed
// tool, a tool result and its text (endpoint.ts and relayed-calls.ts answer with these).
import type { IncomingMessage } from 'node:http';
import type { HostToolSpec } from '../../protocol/v1/index.ts';

/** `Authorization: Bearer <token>` only: a token in a URL ends up in too many places. */
export function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function listedTool(tool: HostToolSpec): { name: string; description?: string; inputSchema: Record<string, unknown> } {
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: { type: 'object', ...tool.inputSchema },
  };
}

export function toolResult(text: string, isError: boolean): { content: { type: 'text'; text: string }[]; isError: boolean } {
  return { content: [{ type: 'text', text }], isError };
}

/** A string output goes to the CLI as is; anything else as its JSON. */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  return JSON.stringify(output) ?? '';
}
