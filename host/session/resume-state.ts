// The resume payload our sessions return and accept. It names the bridge (by
// state dir and journal, never by secret: the token is read back from the
// sandbox), the cursor, and the in-flight turn, so any rung of the ladder can
// pick up from it. Validated with zod on the way in; foreign or corrupt
// payloads are refused with a clear error.
//
// The payload (ResumeData) is the lifecycle state's `data`; the state around
// it is tagged for @ai-sdk/harness 1.0.x ('continue-turn' from a suspend,
// 'resume-session' from detach/stop, nesting a continueFrom while a turn is in
// flight) and is at the same time the untagged state of the canary.3 contract
// (protocol/harness-v1/session.ts). Whether a turn is in flight is the data's
// own `turn`, so doStart treats every shape alike.
import { z } from 'zod';
import type { JSONValue } from '@ai-sdk/provider';
import type {
  HarnessV1ContinueTurnState,
  HarnessV1ResumeSessionState,
  HarnessV1ResumeState,
  HarnessV1StartOptions,
} from '../../protocol/harness-v1/session.ts';
import { streamPartSchema } from '../../protocol/harness-v1/stream-part-schema.ts';
import { ResumeStateError } from './errors.ts';

export const RESUME_DATA_VERSION = 1;

const callState = z.object({ source: z.enum(['bridge', 'cli']), answered: z.boolean(), toolName: z.string().max(1024).optional() });

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
      /** The start parts of the blocks open at `seq`: the next slice re-opens them (docs/guarantees.md#ui). */
      openBlocks: z.array(z.custom<JSONValue>((value) => typeof value === 'object' && value !== null)).optional(),
      /** The tool-input-start parts of input blocks ended at `seq` whose tool-call is still to come: re-announced before it. */
      inputsAwaitingCall: z.array(z.custom<JSONValue>((value) => typeof value === 'object' && value !== null)).optional(),
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
  /** The owner epoch of the host that cut the state (fencing: the next host attaches with epoch + 1); absent in older states (0). */
  epoch: z.number().int().nonnegative().optional(),
  threadId: z.string().optional(),
  /** True once the first prompt went out: instructions are never applied again. */
  prompted: z.boolean(),
  turn: inFlightTurnSchema.optional(),
  /** Compaction parts a doCompact produced between turns, not yet delivered: the next turn emits them after its stream-start. */
  carry: z.array(streamPartSchema.refine((part) => part.type === 'compaction', 'only compaction parts are carried')).optional(),
  /**
   * Why the state was produced: suspend, detach or stop; checkpoint: handed out while this host ran
   * (session.checkpoint(), onCheckpoint) — a resume from it may re-deliver parts after `cursor`, marked.
   */
  reason: z.enum(['suspend', 'detach', 'stop', 'checkpoint']),
  /** The model the last turn ran with, when the caller chose one per turn (internal turns and reruns keep it). */
  model: z.string().optional(),
  /** SHA-256 of the instructions last sent to the CLI: the same instructions are never sent twice. */
  instructions: z.string().optional(),
  /** The skills the CLI can see: a digest of the set, and the files written for it (replaced when the set changes). */
  skills: z.object({ digest: z.string(), paths: z.array(z.string()) }).optional(),
});
export type ResumeData = z.infer<typeof resumeDataSchema>;
export type InFlightTurn = z.infer<typeof inFlightTurnSchema>;

const resumeStateSchemas = new Map<string, ReturnType<typeof buildResumeStateSchema>>();

/**
 * canary.3's resumeStateSchema: the whole state. Loose, so the 1.0.x fields
 * (type, continueFrom, pendingToolResults, turnSettings) pass through untouched.
 */
export function resumeStateSchemaFor(harnessId: string) {
  let schema = resumeStateSchemas.get(harnessId);
  if (schema === undefined) {
    schema = buildResumeStateSchema(harnessId);
    // One per harness id, kept: zod compiles a schema's parser at its first parse, so a schema built per
    // resume paid that compile at every doStart. Bounded against an application minting ids.
    if (resumeStateSchemas.size >= 64) resumeStateSchemas.clear();
    resumeStateSchemas.set(harnessId, schema);
  }
  return schema;
}

function buildResumeStateSchema(harnessId: string) {
  return z.looseObject({
    harnessId: z.literal(harnessId),
    specificationVersion: z.literal('harness-v1'),
    type: z.enum(['continue-turn', 'resume-session']).optional(),
    data: resumeDataSchema,
    pendingToolApprovals: z.array(z.unknown()).optional(),
  });
}

/** 1.0.x's lifecycleStateSchema: the state's `data` alone (the framework validates the envelope itself). */
export const lifecycleStateSchema = resumeDataSchema;

/** The canary.3 shape: an untagged state around `data` (what a caller that stored only the data rebuilds). */
export function toResumeState(harnessId: string, data: ResumeData): HarnessV1ResumeState {
  return { harnessId, specificationVersion: 'harness-v1', data };
}

/** What doSuspendTurn returns. */
export function toContinueState(harnessId: string, data: ResumeData): HarnessV1ContinueTurnState {
  return { type: 'continue-turn', harnessId, specificationVersion: 'harness-v1', data };
}

/** What doDetach and doStop return; a turn still in flight also travels as the nested continueFrom. */
export function toResumeSessionState(harnessId: string, data: ResumeData): HarnessV1ResumeSessionState {
  return {
    type: 'resume-session',
    harnessId,
    specificationVersion: 'harness-v1',
    data,
    ...(data.turn ? { continueFrom: toContinueState(harnessId, data) } : {}),
  };
}

/**
 * The state doStart resumes from, whichever shape the caller uses: 1.0.x's
 * continueFrom, a resume-session's nested continueFrom, or the resumeFrom
 * itself (a parked session, or canary.3's state of any kind).
 */
export function startStateOf(options: Pick<HarnessV1StartOptions, 'continueFrom' | 'resumeFrom'>): HarnessV1ResumeState | undefined {
  // Only `undefined` means "no state": a present but falsy one ('' or null from a store the application
  // never filled) would otherwise start a fresh session beside the old one.
  refuseFalsy(options, 'continueFrom');
  refuseFalsy(options, 'resumeFrom');
  if (options.continueFrom) return options.continueFrom;
  const resumeFrom = options.resumeFrom;
  if (!resumeFrom) return undefined;
  const nested = (resumeFrom as { continueFrom?: HarnessV1ContinueTurnState }).continueFrom;
  return nested ?? resumeFrom;
}

function refuseFalsy(options: Pick<HarnessV1StartOptions, 'continueFrom' | 'resumeFrom'>, key: 'continueFrom' | 'resumeFrom'): void {
  const value: unknown = options[key];
  if (value === undefined || (typeof value === 'object' && value !== null)) return;
  throw new ResumeStateError(`${key} is ${JSON.stringify(value) ?? String(value)}, not a resume state: leave it undefined for a fresh session`);
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
