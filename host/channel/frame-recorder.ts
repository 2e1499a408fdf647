// NDJSON recording of a channel's frames, both directions, plus connection
// events (format: docs/recording-format.md, versioned). Owns the file, its
// bounded buffer and its flushing; the channel decides what to record. A
// failing disk never breaks the channel: recording stops with a diagnostic.
import { closeSync, openSync, write } from 'node:fs';
import { z } from 'zod';
import { RECORDING_LIMITS, checkLimit } from '../limits.ts';

export const RECORDING_FORMAT = 'harness-bridge-recording';
export const RECORDING_VERSION = 1;

export const recordingHeaderSchema = z.object({
  type: z.literal('recording-header'),
  format: z.literal(RECORDING_FORMAT),
  version: z.number().int(),
  /** Epoch ms of `t = 0`. */
  startedAt: z.number(),
  /** The bridge URL with credentials (query token, userinfo) removed. */
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

/** Longest invalid inbound frame text kept in a recording line. */
const maxInvalidExcerptChars = 4096;

export type RecorderOptions = {
  path: string;
  header: Omit<RecordingHeader, 'type' | 'format' | 'version' | 'startedAt'>;
  limits?: Partial<typeof RECORDING_LIMITS>;
  /** Called once if the file cannot be opened or written; recording stops. */
  onError?: (error: Error) => void;
};

/**
 * Appends to `path` (mode 0600: frames carry the session's content). A file
 * may hold several segments, one per channel, each opened by its own header.
 * Lines wait in memory at most recordingFlushMs; beyond
 * maxRecordingPendingBytes they are dropped and counted in a `dropped` marker.
 */
export class FrameRecorder {
  private readonly startedAt = performance.now();
  private readonly maxPendingBytes: number;
  private readonly maxBatchBytes: number;
  private readonly flushMs: number;
  private readonly onError: (error: Error) => void;
  private fd: number | null;
  private buffer: string[] = [];
  private bufferedBytes = 0;
  private writing = false;
  private timer: NodeJS.Timeout | null = null;
  private droppedLines = 0;
  private closing: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  constructor(options: RecorderOptions) {
    const limits = { ...RECORDING_LIMITS, ...options.limits };
    this.maxPendingBytes = checkLimit('maxRecordingPendingBytes', limits.maxRecordingPendingBytes, 1);
    this.maxBatchBytes = checkLimit('maxRecordingBatchBytes', limits.maxRecordingBatchBytes, 1);
    this.flushMs = checkLimit('recordingFlushMs', limits.recordingFlushMs, 0, 60_000);
    this.onError = options.onError ?? (() => undefined);
    try {
      this.fd = openSync(options.path, 'a', 0o600);
    } catch (error) {
      this.fd = null;
      this.onError(error as Error);
      return;
    }
    const header: RecordingHeader = {
      type: 'recording-header',
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      startedAt: Date.now(),
      ...options.header,
      url: redactUrl(options.header.url),
    };
    this.push(JSON.stringify(header));
  }

  /** Milliseconds since the recording started, 0.1 ms resolution. */
  private t(): number {
    return Math.round((performance.now() - this.startedAt) * 10) / 10;
  }

  /** A frame as sent or received. `text` is its JSON, reused as-is when it is one line. */
  frame(dir: 'in' | 'out', text: string, parsed?: unknown): void {
    if (this.fd === null) return;
    const body = text.includes('\n') || text.includes('\r') ? JSON.stringify(parsed ?? text) : text;
    this.push(`{"dir":"${dir}","t":${this.t()},"frame":${body}}`);
  }

  /** An inbound frame that failed validation. */
  invalid(text: string, code: string, message: string): void {
    if (this.fd === null) return;
    this.push(JSON.stringify({ dir: 'in', t: this.t(), invalid: text.slice(0, maxInvalidExcerptChars), code, message }));
  }

  event(event: string, attrs?: RecordingEventFields): void {
    if (this.fd === null) return;
    this.push(JSON.stringify({ dir: 'event', t: this.t(), event, ...attrs }));
  }

  private push(line: string): void {
    const bytes = line.length + 1; // UTF-16 length: a cheap upper-ish estimate, good enough for a bound
    if (this.bufferedBytes + bytes > this.maxPendingBytes) {
      this.droppedLines++;
      return;
    }
    if (this.droppedLines > 0) {
      const marker = JSON.stringify({ dir: 'event', t: this.t(), event: 'dropped', lines: this.droppedLines });
      this.droppedLines = 0;
      this.buffer.push(marker + '\n');
      this.bufferedBytes += marker.length + 1;
    }
    this.buffer.push(line + '\n');
    this.bufferedBytes += bytes;
    if (this.bufferedBytes >= this.maxBatchBytes) this.flushSoon(0);
    else this.flushSoon(this.flushMs);
  }

  private flushSoon(delayMs: number): void {
    if (this.writing) return; // the running write picks the buffer up when it finishes
    if (this.timer !== null) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.writeBuffer();
    }, delayMs);
    this.timer.unref();
  }

  private writeBuffer(): void {
    if (this.fd === null || this.writing) return;
    if (this.buffer.length === 0) {
      this.drained?.();
      return;
    }
    const chunk = Buffer.from(this.buffer.join(''), 'utf8');
    this.buffer = [];
    this.bufferedBytes = 0;
    this.writing = true;
    this.writeChunk(chunk, 0);
  }

  private writeChunk(chunk: Buffer, offset: number): void {
    const fd = this.fd;
    if (fd === null) return;
    write(fd, chunk, offset, chunk.length - offset, null, (error, written) => {
      if (error) {
        this.fail(error);
        return;
      }
      if (offset + written < chunk.length) {
        this.writeChunk(chunk, offset + written);
        return;
      }
      this.writing = false;
      if (this.buffer.length > 0 && (this.bufferedBytes >= this.maxBatchBytes || this.closing)) this.writeBuffer();
      else if (this.buffer.length > 0) this.flushSoon(this.flushMs);
      else this.drained?.();
    });
  }

  private fail(error: Error): void {
    const fd = this.fd;
    this.fd = null;
    this.writing = false;
    this.buffer = [];
    this.bufferedBytes = 0;
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        // already failing; the original write error is the one worth reporting
      }
    }
    this.onError(error);
    this.drained?.();
  }

  /** Write everything buffered, then close the file. Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = new Promise<void>((resolve) => {
      if (this.fd === null) {
        resolve();
        return;
      }
      if (this.droppedLines > 0) {
        this.buffer.push(JSON.stringify({ dir: 'event', t: this.t(), event: 'dropped', lines: this.droppedLines }) + '\n');
        this.droppedLines = 0;
      }
      if (this.timer !== null) {
        clearTimeout(this.timer);
        this.timer = null;
      }
      this.drained = () => {
        this.drained = null;
        const fd = this.fd;
        this.fd = null;
        if (fd !== null) {
          try {
            closeSync(fd);
          } catch (error) {
            this.onError(error as Error);
          }
        }
        resolve();
      };
      if (!this.writing) this.writeBuffer();
    });
    return this.closing;
  }
}

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
