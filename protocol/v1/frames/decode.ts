// Receiver-side validation shared by both ends: size check before parsing,
// JSON.parse, then safeParse against the direction's union. A failure comes
// back as a value carrying the error code to answer with; nothing throws.
import type { z } from 'zod';
import type { ErrorCode } from '../error-codes.ts';

export type Decoded<T> =
  | { ok: true; frame: T }
  | { ok: false; code: Extract<ErrorCode, 'bad-frame' | 'too-large'>; message: string; id?: string };

export function decodeFrame<T>(
  raw: string | Buffer,
  schema: z.ZodType<T>,
  maxFrameBytes: number,
  /** The frame's size in bytes when the caller already knows it (saves a scan of a string). */
  knownBytes?: number,
  /** A hand check for common frames: the frame exactly as `schema` would return it, or null to let `schema` decide. */
  fastPath?: (json: unknown) => T | null,
): Decoded<T> {
  const bytes = knownBytes ?? (typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength);
  if (bytes > maxFrameBytes) {
    return { ok: false, code: 'too-large', message: `frame of ${bytes} bytes exceeds maxFrameBytes ${maxFrameBytes}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch (error) {
    return { ok: false, code: 'bad-frame', message: `frame is not JSON: ${(error as Error).message}` };
  }
  const fast = fastPath?.(json);
  if (fast) return { ok: true, frame: fast };
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, frame: result.data };
  const id = requestIdOf(json);
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  const type = typeof json === 'object' && json !== null && 'type' in json ? String((json as { type: unknown }).type) : '?';
  return {
    ok: false,
    code: 'bad-frame',
    message: `invalid ${type.slice(0, 40)} frame${where}: ${issue?.message ?? 'schema mismatch'}`,
    ...(id === undefined ? {} : { id }),
  };
}

/** The request id of an invalid frame, so its error can still be correlated. */
function requestIdOf(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const id = (json as { id?: unknown }).id;
  return typeof id === 'string' && id.length > 0 && id.length <= 128 ? id : undefined;
}
