// A caller's tool (HarnessV1ToolSpec) as the wire's host tool (HostToolSpec):
// what the bridge's MCP endpoint lists to the CLI for a turn.
import type { HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import type { HostToolSpec } from '../../protocol/v1/index.ts';

export function toHostTool(tool: HarnessV1ToolSpec): HostToolSpec {
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.inputSchema === undefined ? {} : { inputSchema: tool.inputSchema as Record<string, unknown> }),
  };
}
