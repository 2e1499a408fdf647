// Pieces of the stdin encoders CLIs with JSON-lines input share: the line
// itself, a prompt with the caller's instructions before it, and the refusals of
// a compaction that can only run between turns on an existing thread.
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import type { CompactContext, PromptContext } from './adapter.ts';

/** One JSON line for a CLI's stdin. */
export const jsonLine = (value: unknown): string => `${JSON.stringify(value)}\n`;

/** The prompt's text, the caller's instructions (when the context carries them) before it. */
export const promptText = ({ text, instructions }: Pick<PromptContext, 'text' | 'instructions'>): string => (instructions ? `${instructions}\n\n${text}` : text);

/**
 * For the encodeCompact of a CLI that compacts its thread only between turns: the thread to name. During a turn
 * it throws HarnessCapabilityUnsupportedError (`<harnessId> compacts between turns only (<why>)`); with no thread
 * yet, an Error (`<harnessId>: no <thread> to compact yet`).
 */
export function compactBetweenTurns(harnessId: string, context: CompactContext | undefined, why: string, thread = 'thread'): string {
  if (context?.duringTurn) throw new HarnessCapabilityUnsupportedError({ message: `${harnessId} compacts between turns only (${why})`, harnessId });
  if (!context?.threadId) throw new Error(`${harnessId}: no ${thread} to compact yet (prompt a turn first)`);
  return context.threadId;
}
