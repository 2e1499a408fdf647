// Whether doCompact's internal turn failed, read from the parts it collected:
// an error part, or a finish whose reason is `error`.
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';

/** Why doCompact's internal turn failed (its error parts, or an error finish), or null when it did not. */
export function compactFailure(parts: HarnessV1StreamPart[]): string | null {
  const errors = parts.flatMap((part) => (part.type === 'error' ? [errorText(part.error)] : []));
  const finish = parts.find((part) => part.type === 'finish');
  if (errors.length === 0 && !(finish?.type === 'finish' && finish.finishReason.unified === 'error')) return null;
  const reason = finish?.type === 'finish' ? `turn finished ${finish.finishReason.unified} (${finish.finishReason.raw ?? 'no raw reason'})` : 'no finish';
  return errors.length > 0 ? `${errors.join('; ')}; ${reason}` : reason;
}

/** An error part's error as text: adapters emit Errors, `{ message }` objects or strings. */
function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
