// Replay tooling as a library (the harness-bridge CLI, tests and the chaos
// suite use it): open a recording or journal (streaming, any size) or load it
// (into memory), reconstruct its records, re-translate them offline with any
// adapter, check invariants, diff two translations, lay out a timeline.
export {
  SourceError,
  loadSource,
  openSource,
  scanJournalBytes,
  sourceName,
  validateSource,
  type JournalInput,
  type JournalScan,
  type JournalSource,
  type RecordingInput,
  type RecordingSource,
  type ReplayInput,
  type ReplaySource,
  type Segment,
  type SegmentEntry,
  type SegmentInput,
} from './source.ts';
export { JournalFile, type JournalProblem, type JournalScanState } from './journal-file.ts';
export { deliveries, reconstruct, RecordStream, type Delivery, type Reconstruction } from './records.ts';
export { normalizeParts, translateRecords, translateStream, TranslationStream, type HostCall, type TranslatedPart, type Translation } from './retranslate.ts';
export { checkInvariants, maxViolations, type CheckResult, type InvariantRule, type Violation } from './check.ts';
export { diffTranslations, partText, type PartsDiff } from './diff.ts';
export { buildTimeline, recordSummary, timelineRows, type TimelineRow } from './timeline.ts';
export { guessAdapterId } from './guess.ts';
