// The parts the kit itself makes or reads around a turn's translation (turn-translation.ts): the
// echo of a host tool's answer, the recomputed marker of a rerun turn, and which block or request
// a part belongs to.
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';

/**
 * The tool-result part that settles a host tool call in the AI SDK's view: @ai-sdk/harness runs the host's
 * tool, submits its output, and expects the harness to echo it back as this part (its UI tool part and
 * generate()'s toolResults come from the echo). JSON null or undefined has no place in a part's result: ''.
 */
export function hostToolResult(toolCallId: string, toolName: string, output: unknown, isError: boolean): Extract<HarnessV1StreamPart, { type: 'tool-result' }> {
  const json: unknown = output === undefined ? null : JSON.parse(JSON.stringify(output) ?? 'null');
  const result = (json === null ? '' : json) as Extract<HarnessV1StreamPart, { type: 'tool-result' }>['result'];
  return { type: 'tool-result', toolCallId, toolName, result, ...(isError ? { isError: true } : {}) };
}

/** The block `part` opens, continues or closes (text, reasoning or tool input), keyed by kind and id. */
export function blockKey(part: HarnessV1StreamPart): { key: string; role: 'start' | 'delta' | 'end' } | undefined {
  switch (part.type) {
    case 'text-start':
    case 'text-delta':
    case 'text-end':
    case 'reasoning-start':
    case 'reasoning-delta':
    case 'reasoning-end':
    case 'tool-input-start':
    case 'tool-input-delta':
    case 'tool-input-end': {
      const dash = part.type.lastIndexOf('-');
      const role = part.type.slice(dash + 1) as 'start' | 'delta' | 'end';
      return { key: `${part.type.slice(0, dash)}:${part.id}`, role };
    }
    default:
      return undefined;
  }
}

export function requestId(part: HarnessV1StreamPart): string | undefined {
  if (part.type === 'tool-call' && part.providerExecuted !== true) return part.toolCallId;
  if (part.type === 'tool-approval-request') return part.approvalId;
  return undefined;
}

/** Warns on the rerun turn's stream-start (adding one if the adapter emitted none): the recomputed marker. */
export function markRecomputed(parts: ReadonlyArray<HarnessV1StreamPart>, turnId: string): HarnessV1StreamPart[] {
  const warning = {
    type: 'other' as const,
    message: `harness-bridge: recomputed — the turn's producer was lost and rerun ${turnId} re-drives the CLI thread; output from here on is recomputed, not replayed`,
  };
  const index = parts.findIndex((part) => part.type === 'stream-start');
  if (index < 0) return [{ type: 'stream-start', warnings: [warning] }, ...parts];
  return parts.map((part, i) =>
    i === index && part.type === 'stream-start' ? { ...part, warnings: [...(part.warnings ?? []), warning] } : part,
  );
}
