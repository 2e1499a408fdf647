// One journaled thing that happened in the sandbox (docs/design.md#d2). `seq` is
// monotonic for the whole journal and never reset. `turnId` is null for
// session-level records (bridge start, a process exit between turns).
import * as z from 'zod';
import { callIdSchema, seqSchema, signalNameSchema, turnIdSchema } from './common.ts';
import { hostToolSpecSchema } from './tool-spec.ts';

const base = {
  seq: seqSchema.min(1),
  turnId: turnIdSchema.nullable(),
  /** Epoch ms when the bridge journaled it. */
  ts: z.number(),
};

/** A record variant: the common fields plus `kind` and its `data`. */
function variant<K extends string, D extends z.ZodType>(kind: K, data: D) {
  return z.object({ ...base, kind: z.literal(kind), data });
}

/** A piece of an output line. `cont: true` marks a piece split off an over-long line; the next piece continues it. */
/**
 * `off` (launches with `survive` only): the byte offset in the CLI's captured
 * stream right after this piece, so a restarted bridge resumes exactly there.
 */
const lineData = z.object({ text: z.string(), cont: z.boolean().optional(), off: z.number().int().nonnegative().optional() });

export const recordSchema = z.discriminatedUnion('kind', [
  /** A turn began. `input`: what was written to stdin for it. `rerun`: started by `rerun`, so its output is recomputed. */
  variant(
    'turn-start',
    z.object({
      input: z.string().optional(),
      tools: z.array(hostToolSpecSchema).optional(),
      argv: z.array(z.string()).optional(),
      rerun: z.boolean().optional(),
    }),
  ),
  /** `keeper` (launches with `survive` only): the keeper's dir under `<stateDir>/keepers/`, where the CLI's output is captured. */
  variant('spawn', z.object({ pid: z.number().int(), argv: z.array(z.string()), pty: z.boolean(), keeper: z.string().optional() })),
  variant('stdout', lineData),
  variant('stderr', lineData),
  /** A PTY chunk, decoded as UTF-8. `off`: as a line's (a kept CLI's capture offset after it). */
  variant('pty', z.object({ text: z.string(), off: z.number().int().nonnegative().optional() })),
  variant('stdin', z.object({ text: z.string() })),
  variant('signal', z.object({ signal: signalNameSchema, reason: z.string().optional() })),
  variant('exit', z.object({ pid: z.number().int(), code: z.number().int().nullable(), signal: z.string().nullable() })),
  /**
   * A turn ended. matched: a turn-end matcher fired (long-lived CLI); exit: the
   * process exited; aborted: the host aborted it; interrupted: the bridge died
   * while it ran (written by the next bridge); stopped: the bridge was stopped;
   * spawn-failed: the CLI never started; capped: the turn's or the session's journal cap was
   * reached and the CLI was killed (message names the cap).
   */
  variant(
    'turn-end',
    z.object({
      reason: z.enum(['matched', 'exit', 'aborted', 'interrupted', 'stopped', 'spawn-failed', 'capped']),
      code: z.number().int().nullable().optional(),
      message: z.string().optional(),
      /** The turn ended at a match launch.inputAck held for maxWaitMs: the input ids never acknowledged. */
      unacknowledged: z.array(z.string()).optional(),
    }),
  ),
  /**
   * The CLI called a host tool over the MCP endpoint. `relay`: the keeper's id for the HTTP request
   * (launch `survive`), so a bridge adopting the CLI answers that request when the keeper re-sends it
   * (docs/bridge-internals.md#survive-mcp-relay).
   */
  variant('tool-call', z.object({ callId: callIdSchema, name: z.string(), input: z.unknown(), relay: z.string().min(1).max(64).optional() })),
  variant('tool-result', z.object({ callId: callIdSchema, output: z.unknown(), isError: z.boolean() })),
  /** The CLI asks whether it may use a tool (a permission prompt routed to the host). */
  variant(
    'approval-request',
    z.object({
      callId: callIdSchema,
      toolName: z.string(),
      input: z.unknown(),
      /** The CLI's id for the tool use awaiting approval, when it says. */
      toolCallId: z.string().optional(),
    }),
  ),
  variant('approval', z.object({ callId: callIdSchema, approved: z.boolean(), reason: z.string().optional() })),
  /** A bridge process started on this journal; `recovered` says what a torn tail cost. */
  variant(
    'bridge-start',
    z.object({
      bridgeId: z.string(),
      version: z.string(),
      recovered: z
        .object({ droppedBytes: z.number().int().nonnegative(), droppedRecords: z.number().int().nonnegative() })
        .optional(),
      /**
       * This bridge re-adopted a surviving CLI (launch `survive`) that the previous
       * bridge process left running: its turn (null: a session process between
       * turns) continues instead of ending 'interrupted'.
       */
      adopted: z.object({ turnId: turnIdSchema.nullable(), pid: z.number().int(), keeper: z.string() }).optional(),
    }),
  ),
]);

export type JournalRecord = z.infer<typeof recordSchema>;
export type RecordKind = JournalRecord['kind'];
export type RecordOf<K extends RecordKind> = Extract<JournalRecord, { kind: K }>;
/** A record before the journal assigns `seq` and `ts`. */
export type RecordDraft = JournalRecord extends infer R ? (R extends JournalRecord ? Omit<R, 'seq' | 'ts'> : never) : never;
