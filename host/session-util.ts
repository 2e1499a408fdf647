// Small helpers of the session that touch no session state.
import type { SandboxSession } from '../protocol/harness-v1/sandbox.ts';
import type { HarnessV1Prompt, HarnessV1ToolSpec } from '../protocol/harness-v1/session.ts';
import type { HostToolSpec } from '../protocol/v1/index.ts';

/** Kills the bridge named in the state dir's bridge.json (and its process group) and removes the state dir. */
export async function forceDestroy(sandbox: SandboxSession, stateDir: string): Promise<void> {
  await sandbox.run({
    command:
      'pid=$(sed -n \'s/.*"pid":\\([0-9]*\\).*/\\1/p\' "$HB_STATE/bridge.json" 2>/dev/null); ' +
      '[ -n "$pid" ] && { kill -9 -"$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null; }; rm -rf "$HB_STATE"',
    env: { HB_STATE: stateDir },
  });
}

export function toHostTool(tool: HarnessV1ToolSpec): HostToolSpec {
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.inputSchema === undefined ? {} : { inputSchema: tool.inputSchema as Record<string, unknown> }),
  };
}

export function promptText(prompt: HarnessV1Prompt): string {
  if (typeof prompt === 'string') return prompt;
  const content = prompt.content;
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}
