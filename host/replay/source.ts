// Reads what replay tooling works from: a channel recording (docs/recording-format.md;
// one file, several files, or a directory of them) or a bridge journal
// (crc-framed lines, docs/bridge-internals.md#journal). Everything is validated with the
// protocol's zod schemas; a line that fails is reported with its file and line
// number. What the records mean (translation, invariants) is left to the
// sibling modules.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { decodeHeaderLine, hasValidCrc, linePrefixBytes, type JournalHeader } from '../../protocol/journal/line-format.ts';
import { bridgeFrameSchema, type BridgeFrame } from '../../protocol/v1/frames/bridge-frame.ts';
import { hostFrameSchema, type HostFrame } from '../../protocol/v1/frames/host-frame.ts';
import type { HelloFrame } from '../../protocol/v1/frames/bridge/hello.ts';
import { recordSchema, type JournalRecord } from '../../protocol/v1/journal-record.ts';
import { RECORDING_VERSION, recordingHeaderSchema, recordingLineSchema, type RecordingEventFields, type RecordingHeader } from '../../protocol/recording/recording-format.ts';

export type SourceErrorCode = 'unreadable' | 'empty' | 'corrupt' | 'unknown-format';

/** A source that cannot be read. `file`/`line` (1-based) name the first bad line when there is one. */
export class SourceError extends Error {
  readonly code: SourceErrorCode;
  readonly file: string | undefined;
  readonly line: number | undefined;
  constructor(code: SourceErrorCode, message: string, where: { file?: string; line?: number } = {}) {
    super(where.file === undefined ? message : `${where.file}${where.line === undefined ? '' : `:${where.line}`}: ${message}`);
    this.name = 'SourceError';
    this.code = code;
    this.file = where.file;
    this.line = where.line;
  }
}

export type SegmentEntry =
  | { readonly type: 'in'; readonly line: number; readonly at: number; readonly frame: BridgeFrame }
  | { readonly type: 'out'; readonly line: number; readonly at: number; readonly frame: HostFrame }
  | { readonly type: 'invalid'; readonly line: number; readonly at: number; readonly code: string; readonly message: string }
  | { readonly type: 'event'; readonly line: number; readonly at: number; readonly event: string; readonly attrs: Readonly<RecordingEventFields> };

/** One channel's share of a recording: its header and every line after it. */
export type Segment = {
  readonly file: string;
  /** Line of the header. */
  readonly line: number;
  readonly header: RecordingHeader;
  /** The first hello frame the channel received (bridge and journal identity). */
  readonly hello: HelloFrame | undefined;
  readonly entries: ReadonlyArray<SegmentEntry>;
};

export type JournalLine = { readonly line: number; readonly record: JournalRecord };

export type RecordingSource = { readonly kind: 'recording'; readonly path: string; readonly segments: ReadonlyArray<Segment> };
export type JournalSource = {
  readonly kind: 'journal';
  readonly path: string;
  readonly header: JournalHeader;
  readonly records: ReadonlyArray<JournalLine>;
};
export type ReplaySource = RecordingSource | JournalSource;

const journalLinePrefix = /^[0-9a-f]{8}\t/;

/**
 * Loads a recording file, a journal file, a directory of recordings (every
 * `*.ndjson`, segments ordered by start time) or a bridge state dir (its
 * `journal.ndjson`). Throws SourceError.
 */
export function loadSource(path: string): ReplaySource {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    throw new SourceError('unreadable', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (!isDirectory) {
    const bytes = readBytes(path);
    return isJournal(bytes) ? parseJournal(path, bytes) : parseRecordings(path, [[path, bytes]]);
  }
  const names = readdirSync(path).filter((name) => name.endsWith('.ndjson')).sort();
  if (names.includes('journal.ndjson')) return parseJournal(join(path, 'journal.ndjson'), readBytes(join(path, 'journal.ndjson')));
  if (names.length === 0) throw new SourceError('empty', `${path} holds no .ndjson recordings and no journal.ndjson`);
  return parseRecordings(path, names.map((name) => [join(path, name), readBytes(join(path, name))]));
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new SourceError('unreadable', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function isJournal(bytes: Buffer): boolean {
  return journalLinePrefix.test(bytes.subarray(0, linePrefixBytes).toString('latin1'));
}

export type JournalScan = {
  readonly header: JournalHeader | null;
  readonly records: JournalLine[];
  /** The first line that is not a valid journal line, if any; nothing after it is read. */
  readonly problem: { readonly line: number; readonly reason: string; readonly torn: boolean } | undefined;
  /** Lines in the file (a final line without newline counts). */
  readonly lines: number;
};

/**
 * Validates a journal's bytes line by line: the header, then per line the crc
 * over its JSON, the JSON and the record schema. Stops at the first bad line
 * (the bridge's recovery would truncate there). Seq order is not judged here
 * (that is `checkInvariants`), so a journal with a gap still loads.
 */
export function scanJournalBytes(bytes: Buffer): JournalScan {
  const records: JournalLine[] = [];
  let header: JournalHeader | null = null;
  let start = 0;
  let line = 0;
  while (start < bytes.length) {
    line++;
    const newline = bytes.indexOf(0x0a, start);
    if (newline < 0) {
      return { header, records, lines: line, problem: { line, reason: 'torn tail: the last line has no newline (a write was cut short)', torn: true } };
    }
    if (line === 1) {
      header = decodeHeaderLine(bytes, start, newline);
      if (header === null) return { header, records, lines: line, problem: { line, reason: 'not a journal header (bad crc or shape)', torn: false } };
    } else {
      if (!hasValidCrc(bytes, start, newline)) {
        return { header, records, lines: line, problem: { line, reason: 'crc mismatch: the line is corrupted', torn: false } };
      }
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8', start + linePrefixBytes, newline));
      } catch (error) {
        return { header, records, lines: line, problem: { line, reason: `crc matches but the JSON does not parse: ${(error as Error).message}`, torn: false } };
      }
      const parsed = recordSchema.safeParse(json);
      if (!parsed.success) {
        return { header, records, lines: line, problem: { line, reason: `not a journal record: ${firstIssue(parsed.error)}`, torn: false } };
      }
      records.push({ line, record: parsed.data });
    }
    start = newline + 1;
  }
  return { header, records, lines: line, problem: undefined };
}

function parseJournal(path: string, bytes: Buffer): JournalSource {
  if (bytes.length === 0) throw new SourceError('empty', 'empty file', { file: path });
  const scan = scanJournalBytes(bytes);
  if (scan.problem) throw new SourceError('corrupt', `journal ${scan.problem.reason}`, { file: path, line: scan.problem.line });
  if (!scan.header) throw new SourceError('corrupt', 'journal has no header', { file: path, line: 1 });
  return { kind: 'journal', path, header: scan.header, records: scan.records };
}

function parseRecordings(path: string, files: ReadonlyArray<readonly [string, Buffer]>): RecordingSource {
  const segments: Segment[] = [];
  for (const [file, bytes] of files) segments.push(...parseRecordingFile(file, bytes.toString('utf8')));
  if (segments.length === 0) throw new SourceError('empty', 'no recording segments', { file: path });
  // Segments from several files (or processes) interleave by start time; stable for equal times.
  const ordered = segments.map((segment, index) => ({ segment, index }));
  ordered.sort((a, b) => a.segment.header.startedAt - b.segment.header.startedAt || a.index - b.index);
  return { kind: 'recording', path, segments: ordered.map((entry) => entry.segment) };
}

type MutableSegment = { file: string; line: number; header: RecordingHeader; hello: HelloFrame | undefined; entries: SegmentEntry[] };

function parseRecordingFile(file: string, text: string): Segment[] {
  if (text.length === 0) throw new SourceError('empty', 'empty file', { file });
  const segments: MutableSegment[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index]!;
    const line = index + 1;
    if (raw.length === 0) {
      if (index === lines.length - 1) break; // the newline after the last line
      throw new SourceError('corrupt', 'empty line inside a recording', { file, line });
    }
    const fail = (reason: string): never => {
      throw new SourceError('corrupt', reason, { file, line });
    };
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      fail(`not JSON (${(error as Error).message})${index === lines.length - 1 ? '; the last line is cut short' : ''}`);
    }
    const header = recordingHeaderSchema.safeParse(json);
    if (header.success) {
      if (header.data.version > RECORDING_VERSION) fail(`recording format version ${header.data.version} is newer than ${RECORDING_VERSION}`);
      segments.push({ file, line, header: header.data, hello: undefined, entries: [] });
      continue;
    }
    const segment = segments.at(-1);
    if (!segment) fail('expected a recording header first (is this a recording?)');
    const parsed = recordingLineSchema.safeParse(json);
    if (!parsed.success) fail(`not a recording line: ${firstIssue(parsed.error)}`);
    const value = parsed.data!;
    const at = segment!.header.startedAt + value.t;
    if ('frame' in value) {
      if (value.dir === 'in') {
        const frame = bridgeFrameSchema.safeParse(value.frame);
        if (!frame.success) fail(`inbound frame fails the protocol schema: ${firstIssue(frame.error)}`);
        const data = frame.data!;
        if (data.type === 'hello' && segment!.hello === undefined) segment!.hello = data;
        segment!.entries.push({ type: 'in', line, at, frame: data });
      } else {
        const frame = hostFrameSchema.safeParse(value.frame);
        if (!frame.success) fail(`outbound frame fails the protocol schema: ${firstIssue(frame.error)}`);
        segment!.entries.push({ type: 'out', line, at, frame: frame.data! });
      }
    } else if ('invalid' in value) {
      segment!.entries.push({ type: 'invalid', line, at, code: value.code, message: value.message });
    } else {
      const { dir: _dir, t: _t, event, ...attrs } = value;
      segment!.entries.push({ type: 'event', line, at, event, attrs });
    }
  }
  return segments;
}

function firstIssue(error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return `${issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : ''}${issue.message}`;
}

/** A short name for messages: the file name of a journal or recording. */
export function sourceName(source: ReplaySource): string {
  return basename(source.path);
}
