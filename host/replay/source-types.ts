// What replay tooling reads, as types: a journal (its header and records) or
// a recording (segments of entries). Two shapes of each: the materialized one
// (`…Source`, arrays: loadSource, tests) and the streaming one (`…Input`,
// iterables that read the file again on each iteration: openSource, the CLI).
// Every function of host/replay takes the streaming shape, so both work.
import type { JournalHeader } from '../../protocol/journal/line-format.ts';
import type { RecordingEventFields, RecordingHeader } from '../../protocol/recording/recording-format.ts';
import type { BridgeFrame } from '../../protocol/v1/frames/bridge-frame.ts';
import type { HelloFrame } from '../../protocol/v1/frames/bridge/hello.ts';
import type { HostFrame } from '../../protocol/v1/frames/host-frame.ts';
import type { JournalLine } from './journal-file.ts';
import type { SeqSet } from './seq-set.ts';

export type { JournalLine } from './journal-file.ts';

export type SegmentEntry =
  | { readonly type: 'in'; readonly line: number; readonly at: number; readonly frame: BridgeFrame }
  | { readonly type: 'out'; readonly line: number; readonly at: number; readonly frame: HostFrame }
  | { readonly type: 'invalid'; readonly line: number; readonly at: number; readonly code: string; readonly message: string }
  | { readonly type: 'event'; readonly line: number; readonly at: number; readonly event: string; readonly attrs: Readonly<RecordingEventFields> };

/** One channel's share of a recording: its header and every line after it. */
export type SegmentInput = {
  readonly file: string;
  /** Line of the header. */
  readonly line: number;
  readonly header: RecordingHeader;
  /** The first hello frame the channel received (bridge and journal identity). */
  readonly hello: HelloFrame | undefined;
  readonly entries: Iterable<SegmentEntry>;
};
export type Segment = SegmentInput & { readonly entries: ReadonlyArray<SegmentEntry> };

/** A replay-begin: the start of one ownership epoch (check.ts's owner rule). */
export type Epoch = { readonly segment: number; readonly at: number; readonly to: number; readonly journalId: string };

/** Which seqs a recording delivers per journal, known before its records are streamed (records.ts). */
export type JournalSeqs = { readonly journalId: string; readonly present: SeqSet; readonly repeated: SeqSet };

/** What a first pass over a recording learned: journals in order of first delivery, and every epoch. */
export type RecordingIndex = { readonly journals: ReadonlyArray<JournalSeqs>; readonly epochs: ReadonlyArray<Epoch> };

export type RecordingInput = {
  readonly kind: 'recording';
  readonly path: string;
  readonly segments: ReadonlyArray<SegmentInput>;
  /** Present when the recording was opened from disk (one validating pass made it); computed from the segments otherwise. */
  readonly index?: RecordingIndex;
};
export type RecordingSource = Omit<RecordingInput, 'segments'> & { readonly segments: ReadonlyArray<Segment> };

export type JournalInput = {
  readonly kind: 'journal';
  readonly path: string;
  readonly header: JournalHeader;
  readonly records: Iterable<JournalLine>;
};
export type JournalSource = Omit<JournalInput, 'records'> & { readonly records: ReadonlyArray<JournalLine> };

export type ReplayInput = JournalInput | RecordingInput;
export type ReplaySource = JournalSource | RecordingSource;
