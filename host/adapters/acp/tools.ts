// ACP agents' tools as HarnessV1 builtins. ACP names no tools, it classifies each call by `kind`
// (execute, edit, read, search, fetch, think, other) and a display `title`, so the acp adapter
// names calls by kind with the cross-harness common names, and other calls by their title (the
// tool's own name for an MCP tool: `mcp__host__echo_upper`). Data only.
import { tool, type Tool, type ToolSet } from '@ai-sdk/provider-utils';
import { z } from 'zod';
import type { AcpUpdate } from './rpc.ts';

export type AcpBuiltinTool = Tool & { readonly nativeName: string; readonly commonName?: string };

function builtin(kind: string, commonName: string, description: string): AcpBuiltinTool {
  return { ...tool({ description, inputSchema: z.looseObject({}), outputSchema: z.unknown() }), nativeName: kind, commonName };
}

export const acpBuiltinTools = {
  bash: builtin('execute', 'bash', 'Run a command (ACP kind execute)'),
  write: builtin('edit', 'write', 'Create a file (ACP kind edit, no previous text)'),
  edit: builtin('edit', 'edit', 'Change a file (ACP kind edit)'),
  read: builtin('read', 'read', 'Read a file (ACP kind read)'),
  grep: builtin('search', 'grep', 'Search files (ACP kind search)'),
  webFetch: builtin('fetch', 'webFetch', 'Fetch a URL (ACP kind fetch)'),
} satisfies ToolSet;

const byKind: Record<string, string> = { execute: 'bash', read: 'read', search: 'grep', fetch: 'webFetch' };

/** The tool-call name for an ACP tool call: the common name of its kind, else its title. */
export function acpToolName(u: Pick<AcpUpdate, 'kind' | 'title' | 'content'>): string {
  if (u.kind === 'edit') {
    const diff = Array.isArray(u.content) ? u.content.find((c) => c.type === 'diff') : undefined;
    return diff && !diff.oldText ? 'write' : 'edit';
  }
  if (u.kind && byKind[u.kind]) return byKind[u.kind]!;
  return u.title || u.kind || 'tool';
}
