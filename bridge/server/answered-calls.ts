// Host answers to MCP tool calls, kept so a re-sent answer is recognised. The host re-sends a
// `tool-result` whose ack it lost (at-least-once, host/channel/requests.ts); when the first copy was
// journaled (by this bridge, or by the one before it whose calls this bridge adopted) the call is no
// longer pending, and refusing the copy would fail an answer that was in fact delivered.
import type { ToolResultFrame } from '../../protocol/v1/index.ts';

/** Answers kept at most this many (oldest go first): a re-send follows its first copy within one reconnect. */
const maxKept = 256;

export class AnsweredCalls {
  readonly #answers = new Map<string, string>();

  /** The journaled answer to `callId`. */
  add(callId: string, answer: { output: unknown; isError?: boolean }): void {
    this.#answers.delete(callId);
    const answerKey = key(answer);
    if (answerKey === null) return;
    this.#answers.set(callId, answerKey);
    if (this.#answers.size > maxKept) this.#answers.delete(this.#answers.keys().next().value!);
  }

  /** True when `frame` is the answer already journaled for its call (same output, same isError). */
  repeats(frame: ToolResultFrame): boolean {
    const known = this.#answers.get(frame.callId);
    return known !== undefined && known === key(frame);
  }
}

/**
 * The journaled output went through JSON, keys in the frame's order: the same answer serializes the same.
 * null for an output JSON cannot serialize here (nested past the stack): such an answer is not kept.
 */
function key(answer: { output: unknown; isError?: boolean }): string | null {
  try {
    return JSON.stringify([answer.isError ?? false, answer.output ?? null]);
  } catch {
    return null;
  }
}
