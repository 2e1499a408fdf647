// Claude Code's built-in tools as HarnessV1 builtins: keyed by what its
// tool-call parts carry (`commonName ?? nativeName`), each a Tool plus the
// harness metadata. Data only; the translator (claude-code.ts) uses
// `claudeToolName` to name calls. Input schemas are loose supersets of the
// cross-harness baselines: they validate calls the CLI already made.
import { tool, type Tool, type ToolSet } from '@ai-sdk/provider-utils';
import { z } from 'zod';

type ToolUseKind = 'readonly' | 'edit' | 'bash';
export type ClaudeCodeBuiltinTool = Tool & { readonly nativeName: string; readonly commonName?: string; readonly toolUseKind?: ToolUseKind };

function builtin(nativeName: string, commonName: string | undefined, toolUseKind: ToolUseKind | undefined, description: string, shape: z.ZodRawShape): ClaudeCodeBuiltinTool {
  return {
    ...tool({ description, inputSchema: z.looseObject(shape), outputSchema: z.unknown() }),
    nativeName,
    ...(commonName === undefined ? {} : { commonName }),
    ...(toolUseKind === undefined ? {} : { toolUseKind }),
  };
}

const path = z.string();
const opt = <T extends z.ZodType>(schema: T) => schema.optional();

export const claudeCodeBuiltinTools = {
  bash: builtin('Bash', 'bash', 'bash', 'Execute a shell command', { command: z.string(), description: opt(z.string()), timeout: opt(z.number()) }),
  read: builtin('Read', 'read', 'readonly', 'Read file contents', { file_path: path, offset: opt(z.number()), limit: opt(z.number()) }),
  write: builtin('Write', 'write', 'edit', 'Write content to a file', { file_path: path, content: z.string() }),
  edit: builtin('Edit', 'edit', 'edit', 'Edit a file by replacing text', {
    file_path: path,
    old_string: z.string(),
    new_string: z.string(),
    replace_all: opt(z.boolean()),
  }),
  glob: builtin('Glob', 'glob', 'readonly', 'Find files matching a glob pattern', { pattern: z.string(), path: opt(path) }),
  grep: builtin('Grep', 'grep', 'readonly', 'Search file contents with regex', { pattern: z.string(), path: opt(path) }),
  webSearch: builtin('WebSearch', 'webSearch', 'readonly', 'Search the web', { query: z.string() }),
  WebFetch: builtin('WebFetch', undefined, 'readonly', 'Fetch a URL and process its content', { url: z.string(), prompt: opt(z.string()) }),
  NotebookEdit: builtin('NotebookEdit', undefined, 'edit', 'Edit a Jupyter notebook cell', { notebook_path: path }),
  Task: builtin('Task', undefined, undefined, 'Run a subagent on a task', { prompt: z.string(), description: opt(z.string()) }),
  TodoWrite: builtin('TodoWrite', undefined, undefined, 'Update the task list', {}),
  Skill: builtin('Skill', undefined, undefined, 'Invoke a skill', {}),
  ToolSearch: builtin('ToolSearch', undefined, 'readonly', 'Load deferred tool schemas', { query: z.string() }),
} satisfies ToolSet;

const byNativeName = new Map<string, string>(
  Object.entries(claudeCodeBuiltinTools).map(([key, entry]: [string, ClaudeCodeBuiltinTool]) => [entry.nativeName, key]),
);

/** The name a tool-call part carries for a native tool name (the native name when no common one applies). */
export function claudeToolName(nativeName: string): string {
  return byNativeName.get(nativeName) ?? nativeName;
}
