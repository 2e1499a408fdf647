// Opens what replay tooling works from: a channel recording (docs/recording-format.md;
// one file, several files, or a directory of them) or a bridge journal
// (crc-framed lines, docs/bridge-internals.md#journal; the line format is
// protocol/journal/line-format.ts). Everything is validated with the
// protocol's zod schemas; a line that fails is reported as a SourceError
// naming its file, line and byte offset and what was expected there.
//
// `openSource` streams: nothing is held but what a first pass must learn, so a
// file of any size is read in bounded memory (journal-file.ts,
// recording-file.ts). `loadSource` materializes the same into arrays, for
// small inputs and tests. What the records mean (translation, invariants) is
// left to the sibling modules.
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expectedHeaderLine, hasJournalPrefix, JournalFile, scanJournalBytes, type JournalScan } from './journal-file.ts';
import { expectedRecordingHeader, openRecordings } from './recording-file.ts';
import { SourceError } from './source-error.ts';
import type { JournalInput, JournalLine, RecordingSource, ReplayInput, ReplaySource, Segment } from './source-types.ts';

export { SourceError, type SourceErrorCode, type SourceErrorWhere } from './source-error.ts';
export { scanJournalBytes, type JournalScan };
export type * from './source-types.ts';

/**
 * Opens a recording file, a journal file, a directory of recordings (every
 * `*.ndjson`, segments ordered by start time) or a bridge state dir (its
 * `journal.ndjson`), for streaming. A recording is validated now (one pass);
 * a journal's header now and its lines as they are read (iterating its
 * records throws SourceError at the first bad line; `validateSource` reads
 * them all first). Throws SourceError.
 */
export function openSource(path: string): ReplayInput {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    throw unreadable(path, error);
  }
  if (!isDirectory) {
    const kind = sniff(path);
    if (kind === 'journal') return openJournal(path);
    return openRecordings(path, [{ file: path, size: fileSize(path) }]);
  }
  let names: string[];
  try {
    names = readdirSync(path).filter((name) => name.endsWith('.ndjson')).sort();
  } catch (error) {
    throw unreadable(path, error);
  }
  if (names.includes('journal.ndjson')) return openJournal(join(path, 'journal.ndjson'));
  if (names.length === 0) throw new SourceError('empty', `${path} holds no .ndjson recordings and no journal.ndjson`);
  return openRecordings(
    path,
    names.map((name) => join(path, name)).map((file) => ({ file, size: fileSize(file) })),
  );
}

/** `openSource`, with every record and entry read into memory (small inputs, tests). Throws SourceError. */
export function loadSource(path: string): ReplaySource {
  const source = openSource(path);
  if (source.kind === 'journal') return { ...source, records: [...source.records] };
  const segments: Segment[] = source.segments.map((segment) => ({ ...segment, entries: [...segment.entries] }));
  const loaded: RecordingSource = { kind: 'recording', path: source.path, segments };
  return source.index ? { ...loaded, index: source.index } : loaded;
}

/** Reads all of a source once, so a bad line fails before any output (a recording was validated when opened). */
export function validateSource(source: ReplayInput): void {
  if (source.kind === 'journal') for (const _ of source.records);
}

function unreadable(path: string, error: unknown): SourceError {
  return new SourceError('unreadable', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch (error) {
    throw unreadable(path, error);
  }
}

/** What a single file is, from its first bytes: a journal line's crc prefix, or JSON (a recording), or neither. */
function sniff(path: string): 'journal' | 'recording' {
  const head = Buffer.alloc(64);
  let length: number;
  try {
    const fd = openSync(path, 'r');
    try {
      length = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw unreadable(path, error);
  }
  if (length === 0) throw new SourceError('empty', 'empty file', { file: path });
  if (hasJournalPrefix(head, 0, length)) return 'journal';
  const text = head.toString('latin1', 0, length);
  const first = text.search(/\S/);
  if (first < 0 || text[first] === '{') return 'recording'; // JSON: a recording, or a line its reader names as wrong
  // Fail at once: reading on to the first newline could mean reading a large binary file whole.
  const shown = JSON.stringify(text.slice(0, 16)).replace(/[\u0080-\uffff]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  throw new SourceError('unknown-format', `not JSON and not a journal line: neither a journal nor a recording (it starts ${shown}${length > 16 ? '…' : ''})`, {
    file: path,
    line: 1,
    offset: 0,
    expected: `a journal (${expectedHeaderLine}) or ${expectedRecordingHeader}`,
  });
}

/** A journal whose header is read now and whose records are read, and validated, on each iteration. */
function openJournal(path: string): JournalInput {
  const file = new JournalFile(path);
  const fail = (): never => {
    const problem = file.state.problem;
    if (!problem) throw new SourceError('empty', 'empty file', { file: path, line: 1, offset: 0, expected: expectedHeaderLine });
    throw new SourceError(problem.notJournal ? 'unknown-format' : 'corrupt', `journal ${problem.reason}`, { file: path, line: problem.line, offset: problem.offset, expected: problem.expected });
  };
  const iterator = file.records();
  const first = iterator.next(); // reads the header (and the first record, if any)
  iterator.return();
  const header = file.state.header;
  if (!header) return fail();
  if (first.done && file.state.problem) fail();
  const records: Iterable<JournalLine> = {
    *[Symbol.iterator]() {
      yield* file.records();
      if (file.state.problem) fail();
    },
  };
  return { kind: 'journal', path, header, records };
}

/** A short name for messages: the file name of a journal or recording. */
export function sourceName(source: ReplayInput): string {
  return basename(source.path);
}

