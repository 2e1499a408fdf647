// Reads a file line by line in bounded memory: one fixed read buffer, plus a
// line buffer only for a line that spans reads (grown to that line's size,
// given back after a big one). This is how the offline tools (replay, inspect)
// get through a journal or recording of any size: nothing holds the file, and
// no string is ever made of more than one line.
import { closeSync, openSync, readSync } from 'node:fs';

/** Bytes per read. */
export const readChunkBytes = 1024 * 1024;

/**
 * Longest line read: a journal record is at most ~48 MiB of UTF-8
 * (bridge/limits.ts, maxRecordChars) and a recording line one frame. A longer
 * "line" is not one of ours (random bytes, a binary file): LineTooLongError.
 */
export const maxReadLineBytes = 64 * 1024 * 1024;

/** A line buffer above this size is dropped after its line, not kept for the next. */
const keepLineBufferBytes = 4 * 1024 * 1024;

export type FileLine = {
  /** 1-based line number in the file. */
  readonly line: number;
  /** Byte offset of the line's first byte in the file. */
  readonly offset: number;
  /** `bytes[start, end)` is the line without its newline. Valid only until the next line is read. */
  readonly bytes: Buffer;
  readonly start: number;
  readonly end: number;
  /** False for a last line the file ends without a newline after. */
  readonly terminated: boolean;
};

/** A line longer than the reader takes: the file is not line-oriented text of ours. */
export class LineTooLongError extends Error {
  readonly line: number;
  readonly offset: number;
  readonly limit: number;
  constructor(line: number, offset: number, limit: number) {
    super(`line ${line} (from byte ${offset}) is longer than ${limit} bytes with no newline`);
    this.name = 'LineTooLongError';
    this.line = line;
    this.offset = offset;
    this.limit = limit;
  }
}

export type ReadLinesOptions = {
  /** First byte to read (a line start). */
  readonly from?: number;
  /** Stop before this byte (a line start, or the file size). */
  readonly to?: number;
  /** Line number of the line at `from`. */
  readonly firstLine?: number;
  readonly maxLineBytes?: number;
};

/** The lines of `path` (or of the byte range `[from, to)`); the file is opened per iteration and closed when it ends or is abandoned. */
export function* readFileLines(path: string, options: ReadLinesOptions = {}): Generator<FileLine, void, undefined> {
  const to = options.to ?? Number.POSITIVE_INFINITY;
  const maxLineBytes = options.maxLineBytes ?? maxReadLineBytes;
  let position = options.from ?? 0;
  let lineStart = position;
  let line = options.firstLine ?? 1;
  const chunk = Buffer.allocUnsafe(readChunkBytes);
  let carry = Buffer.alloc(0);
  let carryLength = 0;
  const keep = (data: Buffer, from: number, until: number): void => {
    const length = carryLength + (until - from);
    if (length > maxLineBytes) throw new LineTooLongError(line, lineStart, maxLineBytes);
    if (carry.length < length) {
      const grown = Buffer.allocUnsafe(Math.min(maxLineBytes, Math.max(length, carry.length * 2, 64 * 1024)));
      carry.copy(grown, 0, 0, carryLength);
      carry = grown;
    }
    data.copy(carry, carryLength, from, until);
    carryLength = length;
  };
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      const want = Math.min(chunk.length, to - position);
      if (want <= 0) break;
      const n = readSync(fd, chunk, 0, want, position);
      if (n === 0) break;
      position += n;
      const data = n === chunk.length ? chunk : chunk.subarray(0, n);
      let pos = 0;
      while (pos < n) {
        const newline = data.indexOf(0x0a, pos);
        if (newline < 0) {
          keep(data, pos, n); // the line goes on in the next read
          break;
        }
        const next = lineStart + carryLength + (newline - pos) + 1;
        if (carryLength === 0) {
          if (newline - pos > maxLineBytes) throw new LineTooLongError(line, lineStart, maxLineBytes);
          yield { line, offset: lineStart, bytes: data, start: pos, end: newline, terminated: true };
        } else {
          keep(data, pos, newline);
          yield { line, offset: lineStart, bytes: carry, start: 0, end: carryLength, terminated: true };
          carryLength = 0;
          if (carry.length > keepLineBufferBytes) carry = Buffer.alloc(0);
        }
        line++;
        lineStart = next;
        pos = newline + 1;
      }
    }
    if (carryLength > 0) yield { line, offset: lineStart, bytes: carry, start: 0, end: carryLength, terminated: false };
  } finally {
    closeSync(fd);
  }
}

/** The same over bytes already in memory (scanJournalBytes, tests). */
export function* bufferLines(bytes: Buffer): Generator<FileLine, void, undefined> {
  let start = 0;
  let line = 1;
  while (start < bytes.length) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline < 0) {
      yield { line, offset: start, bytes, start, end: bytes.length, terminated: false };
      return;
    }
    yield { line, offset: start, bytes, start, end: newline, terminated: true };
    line++;
    start = newline + 1;
  }
}
