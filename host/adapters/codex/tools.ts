// Codex's built-in tools as HarnessV1 builtins, keyed by what its tool-call
// parts carry (`commonName ?? nativeName`): each a Tool plus the harness
// metadata. Data only; the translator (codex.ts) names calls by item type
// (codexToolName).
// Input schemas describe the app-server items the calls are read from.
import { tool, type Tool, type ToolSet } from '@ai-sdk/provider-utils';
import { z } from 'zod';

type ToolUseKind = 'readonly' | 'edit' | 'bash';
export type CodexBuiltinTool = Tool & { readonly nativeName: string; readonly commonName?: string; readonly toolUseKind?: ToolUseKind };

function builtin(nativeName: string, commonName: string, toolUseKind: ToolUseKind, description: string, shape: z.ZodRawShape): CodexBuiltinTool {
  return { ...tool({ description, inputSchema: z.looseObject(shape), outputSchema: z.unknown() }), nativeName, commonName, toolUseKind };
}

const change = z.looseObject({ path: z.string(), kind: z.string(), diff: z.string().optional() });

export const codexBuiltinTools = {
  bash: builtin('exec_command', 'bash', 'bash', 'Run a shell command', { command: z.string(), cwd: z.string().optional() }),
  edit: builtin('apply_patch', 'edit', 'edit', 'Add, update or delete files with a patch', { changes: z.array(change) }),
  write: builtin('apply_patch', 'write', 'edit', 'Create files with a patch that only adds them', { changes: z.array(change) }),
  webSearch: builtin('web_search', 'webSearch', 'readonly', 'Search the web', { query: z.string().optional() }),
} satisfies ToolSet;

/** app-server item type → the tool-call name and the model-side (native) name (codexToolName refines apply_patch). */
export const codexItemTools: Readonly<Record<string, { toolName: keyof typeof codexBuiltinTools; nativeName: string }>> = {
  commandExecution: { toolName: 'bash', nativeName: 'exec_command' },
  fileChange: { toolName: 'edit', nativeName: 'apply_patch' },
  webSearch: { toolName: 'webSearch', nativeName: 'web_search' },
};

/** The tool-call name of a builtin item: an apply_patch that only adds files is a `write`, any other an `edit`. */
export function codexToolName(item: { type: string; changes?: ReadonlyArray<{ kind: { type: string } }> | undefined }): string | undefined {
  const tool = codexItemTools[item.type];
  if (tool?.toolName === 'edit' && item.changes?.length && item.changes.every((c) => c.kind.type === 'add')) return 'write';
  return tool?.toolName;
}
