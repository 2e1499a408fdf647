// Reads a bridge journal (docs/bridge-internals.md#journal; the line format is
// protocol/journal/line-format.ts) line by line and validates each line: the
// header, then per line the crc over its JSON, the JSON and the record schema.
// Streams: a journal of any size is read in bounded memory (lines.ts), and
// reading stops at the first bad line (the bridge's recovery would truncate
// there). Seq order is not judged here (that is check.ts).
import { decodeHeaderLine, hasValidCrc, linePrefixBytes, type JournalHeader } from '../../protocol/journal/line-format.ts';
import { recordSchema, type JournalRecord } from '../../protocol/v1/journal-record.ts';
import { bufferLines, LineTooLongError, readFileLines, type FileLine } from './lines.ts';

export type JournalLine = { readonly line: number; readonly record: JournalRecord };

/** The first line that is not a valid journal line: where it is, why, and what a journal line looks like. */
export type JournalProblem = {
  readonly line: number;
  /** Byte offset of the line in the file. */
  readonly offset: number;
  readonly reason: string;
  /** A last line cut short (no newline): the bridge truncates it when it next opens the journal. */
  readonly torn: boolean;
  /** Line 1 is not even framed like a journal line: the file is something else. */
  readonly notJournal: boolean;
  /** What was expected there. */
  readonly expected: string;
};

export const expectedHeaderLine = '<crc32 of the JSON, 8 lowercase hex digits><tab>{"type":"journal-header","format":1,"journalId":…,"createdAt":…}<newline>';
export const expectedRecordLine = '<crc32 of the JSON, 8 lowercase hex digits><tab>{"seq":…,"turnId":…,"ts":…,"kind":…,"data":…}<newline>';

const hex = /^[0-9a-f]{8}\t/;

/** Whether the line at bytes[start, end) is framed like a journal line (crc prefix and tab), whatever its crc. */
export function hasJournalPrefix(bytes: Buffer, start: number, end: number): boolean {
  return end - start >= linePrefixBytes && hex.test(bytes.toString('latin1', start, start + linePrefixBytes));
}

/** A scan's findings so far; filled in while `scanJournalLines` runs. */
export type JournalScanState = {
  header: JournalHeader | null;
  problem: JournalProblem | undefined;
  /** Lines read (a final line without newline counts). */
  lines: number;
  /** Bytes read. */
  bytes: number;
};

export function newScanState(): JournalScanState {
  return { header: null, problem: undefined, lines: 0, bytes: 0 };
}

/**
 * Yields the valid records of a journal's lines, in file order, filling in
 * `state`; stops at the first bad line, which `state.problem` then names.
 */
export function* scanJournalLines(lines: Iterable<FileLine>, state: JournalScanState): Generator<JournalLine, void, undefined> {
  try {
    for (const { line, offset, bytes, start, end, terminated } of lines) {
      state.lines = line;
      state.bytes = offset + (end - start) + (terminated ? 1 : 0);
      const problem = (reason: string, extra: { torn?: boolean; notJournal?: boolean } = {}): void => {
        state.problem = {
          line,
          offset,
          reason,
          torn: extra.torn ?? false,
          notJournal: extra.notJournal ?? false,
          expected: line === 1 ? expectedHeaderLine : expectedRecordLine,
        };
      };
      if (line === 1 && !hasJournalPrefix(bytes, start, end)) {
        problem(`not a journal: line 1 is not framed as a journal line${describeOther(bytes, start, end)}`, { notJournal: true, torn: false });
        return;
      }
      if (!terminated) {
        problem('torn tail: the last line has no newline (a write was cut short)', { torn: true });
        return;
      }
      if (line === 1) {
        state.header = decodeHeaderLine(bytes, start, end);
        if (state.header === null) {
          problem('not a journal header (bad crc or shape)');
          return;
        }
        continue;
      }
      if (!hasValidCrc(bytes, start, end)) {
        problem('crc mismatch: the line is corrupted');
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8', start + linePrefixBytes, end));
      } catch (error) {
        problem(`crc matches but the JSON does not parse: ${(error as Error).message}`);
        return;
      }
      const parsed = recordSchema.safeParse(json);
      if (!parsed.success) {
        problem(`not a journal record: ${firstIssue(parsed.error)}`);
        return;
      }
      yield { line, record: parsed.data };
    }
  } catch (error) {
    if (!(error instanceof LineTooLongError)) throw error;
    state.lines = error.line;
    state.problem = {
      line: error.line,
      offset: error.offset,
      reason: `line too long: no newline within ${error.limit} bytes (no journal line is that long)`,
      torn: false,
      notJournal: error.line === 1,
      expected: error.line === 1 ? expectedHeaderLine : expectedRecordLine,
    };
  }
}

/** " (it looks like …)": what a first line that is not a journal line seems to be. */
function describeOther(bytes: Buffer, start: number, end: number): string {
  const head = bytes.toString('utf8', start, Math.min(end, start + 200));
  if (head.includes('"type":"recording-header"')) return ': it is a recording header (a channel recording, docs/recording-format.md; harness-bridge replay reads it)';
  if (head.trimStart().startsWith('{')) return ': it starts with JSON, not with a crc32 prefix';
  const binary = [...head.slice(0, 64)].some((c) => c === '\uFFFD' || (c < ' ' && c !== '\t' && c !== '\r'));
  return binary ? ': it holds binary data' : '';
}

/** A journal file, scanned line by line: each `records()` call reads the file again from the start. */
export class JournalFile {
  readonly path: string;
  /** What the latest `records()` iteration found (header, first problem, lines and bytes read). */
  state: JournalScanState = newScanState();
  constructor(path: string) {
    this.path = path;
  }

  *records(): Generator<JournalLine, void, undefined> {
    this.state = newScanState();
    yield* scanJournalLines(readFileLines(this.path), this.state);
  }
}

export type JournalScan = {
  readonly header: JournalHeader | null;
  readonly records: JournalLine[];
  /** The first line that is not a valid journal line, if any; nothing after it is read. */
  readonly problem: { readonly line: number; readonly reason: string; readonly torn: boolean } | undefined;
  /** Lines in the file (a final line without newline counts). */
  readonly lines: number;
};

/** The whole scan of a journal already in memory (small journals, tests): every record kept. */
export function scanJournalBytes(bytes: Buffer): JournalScan {
  const state = newScanState();
  const records = [...scanJournalLines(bufferLines(bytes), state)];
  return { header: state.header, records, lines: state.lines, problem: state.problem };
}

export function firstIssue(error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return `${issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : ''}${issue.message}`;
}
