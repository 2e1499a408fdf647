// Reads channel recordings (docs/recording-format.md) in bounded memory. One
// validating pass per file keeps only what must be known before anything is
// streamed: each segment's header, first hello and byte range, the replay-begins
// (ownership epochs) and, per journal, which seqs are delivered and which more
// than once (1 bit each, seq-set.ts). A segment's entries are then read again
// from its byte range whenever they are iterated.
import { RECORDING_VERSION, recordingHeaderSchema, recordingLineSchema, type RecordingHeader } from '../../protocol/recording/recording-format.ts';
import { bridgeFrameSchema } from '../../protocol/v1/frames/bridge-frame.ts';
import type { HelloFrame } from '../../protocol/v1/frames/bridge/hello.ts';
import { hostFrameSchema } from '../../protocol/v1/frames/host-frame.ts';
import { firstIssue } from './journal-file.ts';
import { LineTooLongError, readFileLines, type FileLine } from './lines.ts';
import { SeqSet } from './seq-set.ts';
import { SourceError } from './source-error.ts';
import type { Epoch, JournalSeqs, RecordingIndex, RecordingInput, SegmentEntry, SegmentInput } from './source-types.ts';

export const unknownJournal = '(unknown journal)';

export const expectedRecordingHeader = 'a recording header line {"type":"recording-header","format":"harness-bridge-recording","version":1,…}';
export const expectedRecordingLine = 'a recording line {"dir":"in"|"out"|"event","t":…,…} (docs/recording-format.md)';

/** A segment as the index pass found it: where its lines are, and what the rest of the tooling needs up front. */
type IndexedSegment = {
  readonly file: string;
  readonly line: number;
  readonly header: RecordingHeader;
  hello: HelloFrame | undefined;
  /** Byte range and first line number of the lines after the header. */
  readonly from: number;
  to: number;
  readonly firstLine: number;
  records: number;
  readonly replayBegins: Array<{ at: number; to: number }>;
  /** Seqs delivered before the segment's first hello said which journal they belong to. */
  readonly early: number[];
};

/** One recording line, parsed and validated: a new segment's header, or an entry of the current segment. */
function parseLine(file: string, fileLine: FileLine, segment: { header: RecordingHeader } | undefined): { header: RecordingHeader } | { entry: SegmentEntry } {
  const { line, offset, bytes, start, end, terminated } = fileLine;
  const fail = (reason: string, expected: string = segment ? expectedRecordingLine : expectedRecordingHeader): never => {
    throw new SourceError('corrupt', reason, { file, line, offset, expected });
  };
  if (end === start) fail('empty line inside a recording');
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8', start, end));
  } catch (error) {
    fail(`not JSON (${(error as Error).message})${terminated ? '' : '; the last line is cut short'}`);
  }
  const header = recordingHeaderSchema.safeParse(json);
  if (header.success) {
    if (header.data.version > RECORDING_VERSION) fail(`recording format version ${header.data.version} is newer than ${RECORDING_VERSION}`, `version ${RECORDING_VERSION} or older`);
    return { header: header.data };
  }
  if (!segment) fail('expected a recording header first (is this a recording?)');
  const parsed = recordingLineSchema.safeParse(json);
  if (!parsed.success) fail(`not a recording line: ${firstIssue(parsed.error)}`);
  const value = parsed.data!;
  const at = segment!.header.startedAt + value.t;
  if ('frame' in value) {
    if (value.dir === 'in') {
      const frame = bridgeFrameSchema.safeParse(value.frame);
      if (!frame.success) fail(`inbound frame fails the protocol schema: ${firstIssue(frame.error)}`, 'a bridge frame of protocol/v1');
      return { entry: { type: 'in', line, at, frame: frame.data! } };
    }
    const frame = hostFrameSchema.safeParse(value.frame);
    if (!frame.success) fail(`outbound frame fails the protocol schema: ${firstIssue(frame.error)}`, 'a host frame of protocol/v1');
    return { entry: { type: 'out', line, at, frame: frame.data! } };
  }
  if ('invalid' in value) return { entry: { type: 'invalid', line, at, code: value.code, message: value.message } };
  const { dir: _dir, t: _t, event, ...attrs } = value;
  return { entry: { type: 'event', line, at, event, attrs } };
}

/** `readFileLines` with an over-long line reported as a SourceError naming it. */
function* lines(file: string, range: { from?: number; to?: number; firstLine?: number } = {}): Generator<FileLine, void, undefined> {
  try {
    yield* readFileLines(file, range);
  } catch (error) {
    if (!(error instanceof LineTooLongError)) throw error;
    throw new SourceError('corrupt', `line too long: no newline within ${error.limit} bytes (not a recording line)`, {
      file,
      line: error.line,
      offset: error.offset,
      expected: error.line === 1 ? expectedRecordingHeader : expectedRecordingLine,
    });
  }
}

type JournalSets = Map<string, { present: SeqSet; repeated: SeqSet }>;

function addSeq(sets: JournalSets, journalId: string, seq: number): void {
  let entry = sets.get(journalId);
  if (!entry) sets.set(journalId, (entry = { present: new SeqSet(), repeated: new SeqSet() }));
  if (!entry.present.add(seq)) entry.repeated.add(seq);
}

/** The index pass over one file: validates every line (throws SourceError at the first bad one) and returns its segments. */
function indexFile(file: string, size: number, sets: JournalSets): IndexedSegment[] {
  if (size === 0) throw new SourceError('empty', 'empty file', { file, expected: expectedRecordingHeader });
  const segments: IndexedSegment[] = [];
  let current: IndexedSegment | undefined;
  const close = (segment: IndexedSegment | undefined, to: number): void => {
    if (!segment) return;
    segment.to = to;
    const journalId = segment.hello?.journalId ?? segment.header.journalId ?? unknownJournal;
    for (const seq of segment.early) addSeq(sets, journalId, seq);
    segment.early.length = 0;
  };
  for (const fileLine of lines(file)) {
    const parsed = parseLine(file, fileLine, current);
    if ('header' in parsed) {
      close(current, fileLine.offset);
      const from = fileLine.offset + (fileLine.end - fileLine.start) + 1;
      current = { file, line: fileLine.line, header: parsed.header, hello: undefined, from, to: from, firstLine: fileLine.line + 1, records: 0, replayBegins: [], early: [] };
      segments.push(current);
      continue;
    }
    const segment = current!;
    const entry = parsed.entry;
    if (entry.type !== 'in') continue;
    const frame = entry.frame;
    if (frame.type === 'hello' && segment.hello === undefined) {
      segment.hello = frame;
      for (const seq of segment.early) addSeq(sets, frame.journalId, seq);
      segment.early.length = 0;
    } else if (frame.type === 'replay-begin') segment.replayBegins.push({ at: entry.at, to: frame.to });
    else if (frame.type === 'records') {
      segment.records += frame.records.length;
      for (const record of frame.records) {
        if (segment.hello) addSeq(sets, segment.hello.journalId, record.seq);
        else segment.early.push(record.seq);
      }
    }
  }
  close(current, size);
  return segments;
}

/** Reads a segment's entries from its byte range (again, each iteration). */
function segmentEntries(segment: IndexedSegment): Iterable<SegmentEntry> {
  const header = { header: segment.header };
  return {
    *[Symbol.iterator]() {
      for (const fileLine of lines(segment.file, { from: segment.from, to: segment.to, firstLine: segment.firstLine })) {
        const parsed = parseLine(segment.file, fileLine, header);
        if ('header' in parsed) throw new SourceError('corrupt', 'the recording changed while it was read (a header inside a segment)', { file: segment.file, line: fileLine.line, offset: fileLine.offset });
        yield parsed.entry;
      }
    },
  };
}

/**
 * Opens one or more recording files: validates them (SourceError at the first
 * bad line, before anything is streamed), orders their segments by start time
 * (stable for equal times) and indexes them.
 */
export function openRecordings(path: string, files: ReadonlyArray<{ file: string; size: number }>): RecordingInput {
  const sets: JournalSets = new Map();
  const indexed: IndexedSegment[] = [];
  for (const { file, size } of files) indexed.push(...indexFile(file, size, sets));
  if (indexed.length === 0) throw new SourceError('empty', 'no recording segments', { file: path });
  const ordered = indexed.map((segment, index) => ({ segment, index }));
  ordered.sort((a, b) => a.segment.header.startedAt - b.segment.header.startedAt || a.index - b.index);
  const sorted = ordered.map((entry) => entry.segment);
  const journals: JournalSeqs[] = [];
  const listed = new Set<string>();
  const epochs: Epoch[] = [];
  sorted.forEach((segment, index) => {
    const journalId = segment.hello?.journalId ?? segment.header.journalId ?? unknownJournal;
    if (segment.records > 0 && !listed.has(journalId)) {
      listed.add(journalId);
      journals.push({ journalId, ...sets.get(journalId)! });
    }
    const ownerJournal = segment.hello?.journalId ?? segment.header.journalId ?? '';
    for (const begin of segment.replayBegins) epochs.push({ segment: index, at: begin.at, to: begin.to, journalId: ownerJournal });
  });
  const segments: SegmentInput[] = sorted.map((segment) => ({
    file: segment.file,
    line: segment.line,
    header: segment.header,
    hello: segment.hello,
    entries: segmentEntries(segment),
  }));
  const index: RecordingIndex = { journals, epochs };
  return { kind: 'recording', path, segments, index };
}
