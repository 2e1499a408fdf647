// Phase marks of a session start or resume (doStart → ladder → channel →
// first records), for the bench's resume breakdown (test/bench/host-channel.mjs,
// docs/bridge-internals.md#resume-costs). Published on a diagnostics channel
// only while something subscribes: otherwise a mark costs one property read.
import { channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';

export const PHASE_MARKS_CHANNEL = 'harness-bridge:phase';

export type PhaseMark = { readonly phase: string; readonly at: number };

const marks = channel(PHASE_MARKS_CHANNEL);

export function markPhase(phase: string): void {
  if (marks.hasSubscribers) marks.publish({ phase, at: performance.now() } satisfies PhaseMark);
}
