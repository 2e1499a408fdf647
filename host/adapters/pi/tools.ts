// pi's built-in tools as HarnessV1 builtins, keyed by the names its tool-call parts carry (pi's own
// names are already the common ones). Data only; grep/find/ls exist but pi leaves them off unless
// enabled. Input schemas are loose supersets of pi 0.73.1's: they validate calls the CLI already made.
import { tool, type Tool, type ToolSet } from '@ai-sdk/provider-utils';
import { z } from 'zod';

type ToolUseKind = 'readonly' | 'edit' | 'bash';
export type PiBuiltinTool = Tool & { readonly nativeName: string; readonly commonName: string; readonly toolUseKind: ToolUseKind };

function builtin(name: string, toolUseKind: ToolUseKind, description: string, shape: z.ZodRawShape): PiBuiltinTool {
  return { ...tool({ description, inputSchema: z.looseObject(shape), outputSchema: z.unknown() }), nativeName: name, commonName: name, toolUseKind };
}

const opt = <T extends z.ZodType>(schema: T) => schema.optional();

export const piBuiltinTools = {
  bash: builtin('bash', 'bash', 'Execute a shell command', { command: z.string(), timeout: opt(z.number()) }),
  read: builtin('read', 'readonly', 'Read file contents', { path: z.string(), offset: opt(z.number()), limit: opt(z.number()) }),
  write: builtin('write', 'edit', 'Write content to a file', { path: z.string(), content: z.string() }),
  edit: builtin('edit', 'edit', 'Edit a file by replacing exact text', { path: z.string(), edits: z.array(z.looseObject({ oldText: z.string(), newText: z.string() })) }),
  grep: builtin('grep', 'readonly', 'Search file contents', { pattern: z.string(), path: opt(z.string()) }),
  find: builtin('find', 'readonly', 'Find files by glob pattern', { pattern: z.string(), path: opt(z.string()) }),
  ls: builtin('ls', 'readonly', 'List a directory', { path: opt(z.string()) }),
} satisfies ToolSet;
