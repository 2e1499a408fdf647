// bridge → host, first frame on every connection: who this bridge is and what
// its journal holds, so the host can tell "same bridge", "restarted bridge,
// same journal" and "journal lost".
import * as z from 'zod';
import { seqSchema, turnIdSchema } from '../../common.ts';
import { isolationReportSchema } from '../../isolation.ts';

export const turnInfoSchema = z.object({
  turnId: turnIdSchema,
  firstSeq: seqSchema,
  lastSeq: seqSchema,
  status: z.enum(['running', 'ended', 'aborted', 'interrupted', 'stopped', 'spawn-failed']),
  rerun: z.boolean().optional(),
});
export type TurnInfo = z.infer<typeof turnInfoSchema>;

export const helloFrameSchema = z.object({
  type: z.literal('hello'),
  protocolVersion: z.string(),
  bridgeVersion: z.string(),
  bridgeId: z.string(),
  journalId: z.string(),
  /** idle: no turn; running: a turn is in flight; stopping: stop/destroy in progress. */
  state: z.enum(['idle', 'running', 'stopping']),
  /**
   * The turn running now. Its turn-start may not be durable yet, so `turns` may not list it:
   * a host deciding whether its start reached the bridge reads this too.
   */
  runningTurnId: turnIdSchema.optional(),
  /** First and last seq the journal holds (0/0 when empty). */
  firstSeq: seqSchema,
  lastSeq: seqSchema,
  /** The most recent turns, oldest first (bounded by maxHelloTurns). */
  turns: z.array(turnInfoSchema),
  /** Identity of the bootstrap recipe that installed this bridge, when known. */
  recipeIdentity: z.string().optional(),
  /** Loopback URL of the MCP endpoint serving host tools, when running. */
  mcpUrl: z.string().optional(),
  /** How the CLIs this bridge spawns are kept from it (docs/security.md); absent from bridges before it. */
  isolation: isolationReportSchema.optional(),
});
export type HelloFrame = z.infer<typeof helloFrameSchema>;
