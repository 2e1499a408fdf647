// Recovery scan for journal.ndjson: validates the header and every line in one
// streaming pass (bounded memory), finds where the valid prefix ends, counts
// what lies after it and rebuilds the sparse seq → offset index. Truncating is
// the journal's job; this only reads.
import { read } from 'node:fs';
import { promisify } from 'node:util';
import { decodeHeaderLine, hasValidCrc, readRecordSeq, type JournalHeader } from '../../protocol/journal/line-format.ts';

const readAsync = promisify(read);

export type ScanOptions = {
  /** Index every this many records (seq 1, 1+N, 1+2N, ...). */
  indexEveryRecords: number;
  /** Initial read size; grows for longer lines. */
  readChunkBytes: number;
  /** A line longer than this (bytes, framing included) is treated as corrupt. */
  maxLineBytes: number;
};

export type ScanResult = {
  /** null: the first line is missing or is not a valid header. */
  header: JournalHeader | null;
  /** Seq of the last valid record; 0 when none. */
  lastSeq: number;
  /** Offset just past the last valid line (the header's end when there are no records). */
  validBytes: number;
  /** Bytes after validBytes: the invalid line and everything after it. */
  droppedBytes: number;
  /** Record lines in the dropped bytes: newline-terminated lines plus a final unterminated fragment (a bad header is not counted). */
  droppedRecords: number;
  /** index[k] = file offset of the line of seq k*indexEveryRecords + 1. */
  index: number[];
};

/** Scans the open file `fd` of `size` bytes. */
export async function scanJournal(fd: number, size: number, options: ScanOptions): Promise<ScanResult> {
  const { maxLineBytes } = options;
  let buffer = Buffer.allocUnsafe(Math.min(options.readChunkBytes, Math.max(size, 1)));
  const index: number[] = [];
  let header: JournalHeader | null = null;
  let lastSeq = 0;
  let position = 0; // file offset of buffer[0]: always the start of an unchecked line
  let invalidAt = -1;

  scan: while (position < size) {
    const bytesRead = await readFully(fd, buffer, Math.min(buffer.length, size - position), position);
    let lineStart = 0;
    for (;;) {
      const newline = buffer.indexOf(0x0a, lineStart);
      if (newline === -1 || newline >= bytesRead) break;
      if (header === null) {
        header = decodeHeaderLine(buffer, lineStart, newline);
        if (header === null) {
          invalidAt = position + lineStart;
          break scan;
        }
      } else {
        const seq = hasValidCrc(buffer, lineStart, newline) ? readRecordSeq(buffer, lineStart, newline) : -1;
        if (seq !== lastSeq + 1) {
          invalidAt = position + lineStart;
          break scan;
        }
        if ((seq - 1) % options.indexEveryRecords === 0) index.push(position + lineStart);
        lastSeq = seq;
      }
      lineStart = newline + 1;
    }
    if (lineStart === 0) {
      // No complete line in the buffer: a torn tail at end of file, an
      // over-long (corrupt) line, or a long line that needs a bigger buffer.
      if (position + bytesRead >= size || buffer.length >= maxLineBytes) {
        invalidAt = position;
        break;
      }
      buffer = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxLineBytes));
    }
    position += lineStart;
  }

  if (invalidAt === -1) {
    return { header, lastSeq, validBytes: size, droppedBytes: 0, droppedRecords: 0, index };
  }
  let droppedRecords = await countLines(fd, buffer, invalidAt, size);
  if (header === null) droppedRecords = Math.max(0, droppedRecords - 1);
  return { header, lastSeq, validBytes: invalidAt, droppedBytes: size - invalidAt, droppedRecords, index };
}

/** Lines in [start, end): newline-terminated ones plus a final unterminated fragment. */
async function countLines(fd: number, buffer: Buffer, start: number, end: number): Promise<number> {
  let lines = 0;
  let position = start;
  let lastByte = 0x0a;
  while (position < end) {
    const bytesRead = await readFully(fd, buffer, Math.min(buffer.length, end - position), position);
    for (let i = buffer.indexOf(0x0a, 0); i !== -1 && i < bytesRead; i = buffer.indexOf(0x0a, i + 1)) lines++;
    lastByte = buffer[bytesRead - 1]!;
    position += bytesRead;
  }
  return lastByte === 0x0a ? lines : lines + 1;
}

/**
 * Reads exactly `length` bytes at file `position` into buffer[bufferOffset…]
 * (the file does not shrink under us: this process is its only writer).
 */
export async function readFully(fd: number, buffer: Buffer, length: number, position: number, bufferOffset = 0): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await readAsync(fd, buffer, bufferOffset + done, length - done, position + done);
    if (bytesRead === 0) throw new Error(`journal: unexpected end of file at offset ${position + done}`);
    done += bytesRead;
  }
  return done;
}
