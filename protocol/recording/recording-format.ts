// The recording format, an on-disk format (docs/recording-format.md,
// versioned): NDJSON, one segment per channel opened by a header line, then
// frames in both directions and connection events. Owns the schemas, the
// version, the credential rule for the header's url, and the parser.
// host/channel/frame-recorder.ts writes it; host/replay reads it.
import * as z from 'zod';

export const RECORDING_FORMAT = 'harness-bridge-recording';
export const RECORDING_VERSION = 1;

export const recordingHeaderSchema = z.object({
  type: z.literal('recording-header'),
  format: z.literal(RECORDING_FORMAT),
  version: z.number().int(),
  /** Epoch ms of `t = 0`. */
  startedAt: z.number(),
  /** The bridge URL with credentials (query token, userinfo) removed (redactUrl). */
  url: z.string(),
  protocolVersion: z.string(),
  /** The channel's cursor when recording began. */
  cursor: z.number().int(),
  journalId: z.string().optional(),
});
export type RecordingHeader = z.infer<typeof recordingHeaderSchema>;

/**
 * A connection event's fields (the table in docs/recording-format.md). Which
 * ones an event carries depends on the event; a reader keeps the listed ones
 * and drops unknown fields. Listed in the order the channel writes them, so
 * a parsed event keeps the file's field order.
 */
const recordingEventFields = {
  attempt: z.number().int().optional(),
  reason: z.string().optional(),
  code: z.string().optional(),
  message: z.string().optional(),
  cursor: z.number().int().optional(),
  closeCode: z.number().int().optional(),
  httpStatus: z.number().int().optional(),
  expected: z.number().int().optional(),
  got: z.number().int().optional(),
  lines: z.number().int().optional(),
};
export type RecordingEventFields = z.infer<z.ZodObject<typeof recordingEventFields>>;

export const recordingLineSchema = z.union([
  z.object({ dir: z.enum(['in', 'out']), t: z.number(), frame: z.unknown() }),
  /** A bridge frame that failed validation: kept (truncated) for debugging, never delivered. */
  z.object({ dir: z.literal('in'), t: z.number(), invalid: z.string(), code: z.string(), message: z.string() }),
  /** Unknown event names parse too (minor additions do not bump the version). */
  z.object({ dir: z.literal('event'), t: z.number(), event: z.string(), ...recordingEventFields }),
]);
export type RecordingLine = z.infer<typeof recordingLineSchema>;

/** Strip anything that could be a credential from a URL before it is written down. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    for (const key of [...parsed.searchParams.keys()]) {
      if (/token|auth|key|secret|sig/i.test(key)) parsed.searchParams.set(key, 'REDACTED');
    }
    return parsed.toString();
  } catch {
    // not a URL we can parse: write nothing of it rather than risk a credential
    return '(unparsable url)';
  }
}

/** Parse a recording's text into validated lines (the header is lines[0] of each segment). */
export function parseRecording(text: string): Array<RecordingHeader | RecordingLine> {
  const out: Array<RecordingHeader | RecordingLine> = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.length === 0) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new Error(`recording line ${index + 1} is not JSON: ${(error as Error).message}`);
    }
    const header = recordingHeaderSchema.safeParse(json);
    if (header.success) {
      if (header.data.version > RECORDING_VERSION) {
        throw new Error(`recording line ${index + 1}: format version ${header.data.version} is newer than ${RECORDING_VERSION}`);
      }
      out.push(header.data);
      continue;
    }
    const parsed = recordingLineSchema.safeParse(json);
    if (!parsed.success) throw new Error(`recording line ${index + 1} is not a recording line: ${parsed.error.message}`);
    out.push(parsed.data);
  }
  return out;
}
