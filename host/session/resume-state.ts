// The resume payload our sessions return and accept. It names the bridge (by
// state dir and journal, never by secret: the token is read back from the
// sandbox), the cursor, and the in-flight turn, so any rung of the ladder can
// pick up from it. Validated with zod on the way in; foreign or corrupt
// payloads are refused with a clear error.
import { z } from 'zod';
import type { JSONValue } from '@ai-sdk/provider';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import { streamPartSchema } from '../../protocol/harness-v1/stream-part-schema.ts';
import { ResumeStateError } from './errors.ts';

export const RESUME_DATA_VERSION = 1;

const callState = z.object({ source: z.enum(['bridge', 'cli']), answered: z.boolean() });

const inFlightTurnSchema = z.object({
  turnId: z.string().min(1),
  /** Seq of the turn's turn-start record; absent if it was never received. */
  firstSeq: z.number().int().positive().optional(),
  /** The prompt text, kept so the rerun rung can re-drive the turn even if the journal is gone. */
  prompt: z.string(),
  rerun: z.boolean(),
  /** For a rerun turn: the turn it recomputes (so a rerun that never reached the bridge can be sent again). */
  rerunOf: z.string().optional(),
  /** Host tool calls delivered but never answered: delivered once more in the next slice. */
  redeliver: z.array(z.string()),
  /** Optional translator snapshot at `seq` (== cursor): the next slice attaches there instead of replaying the turn. */
  snapshot: z
    .object({
      seq: z.number().int().positive(),
      adapter: z.custom<JSONValue>((value) => value !== undefined),
      toolCalls: z.array(z.tuple([z.string(), callState])),
      approvals: z.array(z.tuple([z.string(), callState])),
      unansweredParts: z.array(z.custom<JSONValue>((value) => typeof value === 'object' && value !== null)),
    })
    .optional(),
});

export const resumeDataSchema = z.object({
  v: z.literal(RESUME_DATA_VERSION),
  stateDir: z.string().min(1),
  bootstrapDir: z.string().min(1),
  journalId: z.string().min(1),
  bridgeId: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  /** Highest seq whose parts the consumer fully received. */
  cursor: z.number().int().nonnegative(),
  threadId: z.string().optional(),
  /** True once the first prompt went out: instructions are never applied again. */
  prompted: z.boolean(),
  turn: inFlightTurnSchema.optional(),
  /** Compaction parts a doCompact produced between turns, not yet delivered: the next turn emits them after its stream-start. */
  carry: z.array(streamPartSchema.refine((part) => part.type === 'compaction', 'only compaction parts are carried')).optional(),
  /** Why the state was produced: suspend, detach or stop. */
  reason: z.enum(['suspend', 'detach', 'stop']),
});
export type ResumeData = z.infer<typeof resumeDataSchema>;
export type InFlightTurn = z.infer<typeof inFlightTurnSchema>;

export function resumeStateSchemaFor(harnessId: string) {
  return z.object({
    harnessId: z.literal(harnessId),
    specificationVersion: z.literal('harness-v1'),
    data: resumeDataSchema,
    pendingToolApprovals: z.array(z.unknown()).optional(),
  });
}

export function toResumeState(harnessId: string, data: ResumeData): HarnessV1ResumeState {
  return { harnessId, specificationVersion: 'harness-v1', data };
}

/** Validates a resume payload for this harness; throws ResumeStateError naming what is wrong. */
export function parseResumeState(harnessId: string, state: unknown): ResumeData {
  if (typeof state === 'object' && state !== null && 'harnessId' in state) {
    const other = (state as { harnessId: unknown }).harnessId;
    if (other !== harnessId) {
      throw new ResumeStateError(`resume state belongs to harness ${JSON.stringify(other)}, not ${JSON.stringify(harnessId)}`);
    }
  }
  const result = resumeStateSchemaFor(harnessId).safeParse(state);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
    throw new ResumeStateError(`corrupt resume state for ${harnessId}: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data.data;
}
