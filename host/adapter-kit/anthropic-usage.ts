// Anthropic Messages API shapes that CLIs print verbatim (Claude Code's
// stream-json, pi in anthropic mode) → LanguageModelV4 usage and finish
// reasons. Owns the schema of a usage object and the stop-reason table;
// when a step or a turn ends is the adapter's call.
import type { LanguageModelV4FinishReason, LanguageModelV4Usage } from '@ai-sdk/provider';
import { z } from 'zod';

const count = z.number().nullish();

/** A `usage` object; unknown keys are kept (as JSON) for `usage.raw`. */
export const anthropicUsageSchema = z
  .object({
    input_tokens: count,
    output_tokens: count,
    cache_read_input_tokens: count,
    cache_creation_input_tokens: count,
  })
  .catchall(z.json());
export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

/** Anthropic's input_tokens exclude cache reads and writes; the V4 total includes them. */
export function anthropicUsage(usage: AnthropicUsage | undefined): LanguageModelV4Usage {
  if (!usage) {
    return {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    };
  }
  const noCache = usage.input_tokens ?? undefined;
  const cacheRead = usage.cache_read_input_tokens ?? undefined;
  const cacheWrite = usage.cache_creation_input_tokens ?? undefined;
  const known = [noCache, cacheRead, cacheWrite].filter((n) => n !== undefined);
  return {
    inputTokens: { total: known.length > 0 ? known.reduce((a, b) => a + b, 0) : undefined, noCache, cacheRead, cacheWrite },
    outputTokens: { total: usage.output_tokens ?? undefined, text: undefined, reasoning: undefined },
    raw: { ...usage },
  };
}

/** Merges a later usage report (e.g. message_delta's cumulative counts) over an earlier one. */
export function mergeAnthropicUsage(base: AnthropicUsage | undefined, update: AnthropicUsage | undefined): AnthropicUsage | undefined {
  if (!update) return base;
  if (!base) return update;
  const merged: AnthropicUsage = { ...base };
  for (const [key, value] of Object.entries(update)) if (value !== null && value !== undefined) merged[key] = value;
  return merged;
}

/**
 * Two reports of one message's counts so far (they only grow): each count the larger, other keys filled in. For the
 * `assistant` lines a CLI prints while a message streams, which must not undo a later message_delta's final counts.
 */
export function maxAnthropicUsage(base: AnthropicUsage | undefined, update: AnthropicUsage | undefined): AnthropicUsage | undefined {
  if (!update) return base;
  if (!base) return update;
  const merged: AnthropicUsage = { ...update, ...base };
  for (const [key, value] of Object.entries(update)) {
    const before = base[key];
    if (typeof value === 'number') merged[key] = typeof before === 'number' ? Math.max(before, value) : value;
    else if (before === null || before === undefined) merged[key] = value;
  }
  return merged;
}

/** Counts of two usage reports added up (a turn of several model runs); other keys are the later report's. */
export function addAnthropicUsage(a: AnthropicUsage | undefined, b: AnthropicUsage | undefined): AnthropicUsage | undefined {
  if (!a || !b) return b ?? a;
  const sum: AnthropicUsage = { ...b };
  for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
    const [x, y] = [a[key], b[key]];
    if (typeof x === 'number' || typeof y === 'number') sum[key] = (x ?? 0) + (y ?? 0);
  }
  return sum;
}

const stopReasons: Record<string, LanguageModelV4FinishReason['unified']> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool-calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content-filter',
  pause_turn: 'other',
};

/** `stop_reason` → finish reason; a missing one (a CLI's mid-stream snapshot) takes `fallback`. */
export function anthropicFinishReason(
  stopReason: string | null | undefined,
  fallback: LanguageModelV4FinishReason['unified'] = 'stop',
): LanguageModelV4FinishReason {
  if (stopReason === null || stopReason === undefined) return { unified: fallback, raw: undefined };
  return { unified: stopReasons[stopReason] ?? 'other', raw: stopReason };
}
