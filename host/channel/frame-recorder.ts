// Writes the NDJSON recording of a channel's frames, both directions, plus
// connection events (the format, versioned, is
// protocol/recording/recording-format.ts and docs/recording-format.md). Owns
// the file, its bounded buffer and its flushing; the channel decides what to
// record. A failing disk never breaks the channel: recording stops with a
// diagnostic.
import { closeSync, openSync, write } from 'node:fs';
import {
  RECORDING_FORMAT,
  RECORDING_VERSION,
  redactUrl,
  type RecordingEventFields,
  type RecordingHeader,
} from '../../protocol/recording/recording-format.ts';
import { PROTOCOL_VERSION_V1 } from '../../protocol/v1/index.ts';
import { RECORDING_LIMITS, checkLimit } from '../limits.ts';
import type { BridgeChannelOptions } from './types.ts';

/** Longest invalid inbound frame text kept in a recording line. */
const maxInvalidExcerptChars = 4096;

export type RecorderOptions = {
  path: string;
  header: Omit<RecordingHeader, 'type' | 'format' | 'version' | 'startedAt'>;
  limits?: Partial<typeof RECORDING_LIMITS>;
  /** Called once if the file cannot be opened or written; recording stops. */
  onError?: (error: Error) => void;
};

/** The recorder of a channel with `recordTo` set (its header: the bridge, our protocol, the starting cursor), or null. */
export function channelRecorder(options: BridgeChannelOptions, onError: (error: Error) => void): FrameRecorder | null {
  if (!options.recordTo) return null;
  return new FrameRecorder({
    path: options.recordTo,
    header: {
      url: options.url,
      protocolVersion: PROTOCOL_VERSION_V1,
      cursor: options.cursor,
      ...(options.journalId ? { journalId: options.journalId } : {}),
    },
    onError,
  });
}

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
