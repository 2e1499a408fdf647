// The scripted model's data: a request normalised across wire APIs (Conversation) and the reply
// planned for it (Reply). script.ts plans; anthropic.ts, responses.ts and chat.ts translate.

export type Item =
  | { kind: 'text'; role: 'user' | 'assistant'; text: string; real: boolean }
  | { kind: 'tool_call'; name: string; id: string }
  | { kind: 'tool_result'; id: string; text: string; isError: boolean };

/** A tool offered by the client. `variant` decides how a call is rendered on the wire. */
export interface ToolDef {
  name: string;
  schema: Record<string, unknown>;
  variant: 'function' | 'custom' | 'tool_search';
  /** Responses API namespace (Codex MCP servers: `mcp__<server>`). */
  namespace?: string;
}

export interface Conversation {
  items: Item[];
  tools: ToolDef[];
  /** Working directory if the client told the model (Claude env block, Codex `<cwd>`). */
  cwd?: string;
  /** The raw request body as text, for finding deferred MCP tool names. */
  rawText: string;
}

export interface ToolCall {
  id: string;
  name: string;
  variant: ToolDef['variant'];
  namespace?: string;
  /** Object arguments for function tools; a string for custom (freeform) tools. */
  input: Record<string, unknown> | string;
}

export type Block =
  | { type: 'thinking'; text: string }
  | { type: 'text'; chunks: string[]; intervalMs: number }
  | { type: 'tool_call'; call: ToolCall };

export type Reply =
  | { kind: 'error'; status: number; message: string }
  | { kind: 'message'; blocks: Block[]; stop: 'end_turn' | 'tool_use' };

export interface Markers {
  scenario: string;
  path?: string;
  /** `CMD:<base64url>`: the command `shell` runs instead of its echo (decoded; a marker value has no whitespace). */
  command?: string;
  intervalMs: number;
  chunks?: number;
  lines: number;
  tool?: string;
}
