// Replay tooling as a library (the harness-bridge CLI, tests and the chaos
// suite use it): load a recording or journal, reconstruct its records,
// re-translate them offline with any adapter, check invariants, diff two
// translations, lay out a timeline.
export { SourceError, loadSource, scanJournalBytes, sourceName, type JournalScan, type JournalSource, type RecordingSource, type ReplaySource, type Segment, type SegmentEntry } from './source.ts';
export { deliveries, reconstruct, type Delivery, type Reconstruction } from './records.ts';
export { normalizeParts, translateRecords, type HostCall, type TranslatedPart, type Translation } from './retranslate.ts';
export { checkInvariants, type CheckResult, type InvariantRule, type Violation } from './check.ts';
export { diffTranslations, partText, type PartsDiff } from './diff.ts';
export { buildTimeline, recordSummary, type TimelineRow } from './timeline.ts';
export { guessAdapterId } from './guess.ts';
