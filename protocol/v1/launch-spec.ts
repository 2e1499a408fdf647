// How the bridge spawns a CLI for a turn. The bridge knows nothing about any
// particular CLI (DESIGN D1): everything CLI-specific arrives here.
import { z } from 'zod';
import { signalNameSchema } from './common.ts';

/**
 * Declarative turn-end matcher, checked against each complete output line.
 * `json`: the line parses as JSON and the value at `path` equals `equals`.
 * `regex`: the line matches (JavaScript syntax, no flags).
 * `prefix`: the line starts with this text. Unlike json/regex it also fires for
 * a line longer than the line cap (checked on its first piece; the turn ends
 * once the line's last piece is journaled), for CLIs whose end-of-turn line can
 * be huge (pi's `agent_end` repeats every message of the run).
 */
const jsonPathSchema = z.array(z.string()).min(1).max(16);
const jsonEqualsSchema = z.object({
  path: jsonPathSchema,
  equals: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});

export const turnEndMatcherSchema = z.object({
  stream: z.enum(['stdout', 'stderr']).default('stdout'),
  json: jsonEqualsSchema.optional(),
  regex: z.string().max(1000).optional(),
  prefix: z.string().min(1).max(1000).optional(),
});
export type TurnEndMatcher = z.infer<typeof turnEndMatcherSchema>;

/**
 * Optional gate on `turnEnd` (lifetime 'session' only), for CLIs that queue a
 * message written while a turn runs and answer it after that turn's end line
 * (Claude Code's stream-json input). An input line names itself with an id; the
 * CLI acknowledges it with an output line naming the same id when it takes the
 * message up. While an input of the turn is unacknowledged, a turnEnd match does
 * not end the turn: the turn ends at the first match after the last ack. Exit,
 * abort and stop end the turn as before.
 * - `inputId`: every stdin line the bridge writes during the turn (the start
 *   input, `input` frames) that parses as a JSON object with a non-empty string
 *   at this path is pending under that string. Other lines are not waited for.
 * - An output line on `stream` acknowledges an input when it parses as JSON,
 *   the value at each `when` path equals its `equals`, and the string at `ackId`
 *   is a pending id (ids the turn is not waiting for are ignored). Only whole
 *   lines count, as for json turnEnd matchers.
 * - `maxWaitMs` (optional; default SUPERVISOR_LIMITS.inputAckMaxWaitMs, 30 s): a
 *   match held while inputs are pending waits at most this long for an ack. If
 *   none arrives, the turn ends anyway (reason 'matched') and its turn-end
 *   record lists the ids never acknowledged (`unacknowledged`). An ack restarts
 *   the wait at the next held match.
 */
export const inputAckSchema = z.object({
  inputId: jsonPathSchema,
  stream: z.enum(['stdout', 'stderr']).default('stdout'),
  when: z.array(jsonEqualsSchema).max(8).default([]),
  ackId: jsonPathSchema,
  maxWaitMs: z.number().int().min(1).max(86_400_000).optional(),
});
export type InputAck = z.infer<typeof inputAckSchema>;

export const ioSpecSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('pipes'), maxLineBytes: z.number().int().positive().optional() }),
  z.object({ mode: z.literal('pty'), cols: z.number().int().min(10).max(1000), rows: z.number().int().min(2).max(1000) }),
]);
export type IoSpec = z.infer<typeof ioSpecSchema>;

export const launchSpecSchema = z.object({
  argv: z.array(z.string()).min(1),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  /** 'null' gives the CLI /dev/null (CLIs block on an open, silent pipe). */
  stdin: z.enum(['pipe', 'null']).default('null'),
  io: ioSpecSchema.default({ mode: 'pipes' }),
  /** 'turn': one process per turn; 'session': one long-lived process fed over stdin. */
  lifetime: z.enum(['turn', 'session']).default('turn'),
  /**
   * lifetime 'session' only: a live process is reused for a new turn when its
   * reuseKey equals this one. Without a reuseKey the whole spec (argv, env,
   * cwd, stdin, io) must be identical. An adapter sets it when argv carries
   * spawn-only details (e.g. `--resume <thread>`) that must not restart a
   * process already running that thread.
   */
  reuseKey: z.string().max(1000).optional(),
  /** Any matcher ends the turn; process exit always ends it. */
  turnEnd: z.array(turnEndMatcherSchema).max(8).default([]),
  /** Holds turnEnd matches back until the CLI has acknowledged the turn's inputs (see inputAckSchema). */
  inputAck: inputAckSchema.optional(),
  /** How `abort` interrupts: write this to stdin, or send this signal (default SIGINT). */
  interrupt: z
    .union([z.object({ input: z.string() }), z.object({ signal: signalNameSchema })])
    .default({ signal: 'SIGINT' }),
  /**
   * Opt-in: the CLI outlives a bridge crash (docs/bridge-internals.md, "Surviving
   * CLIs"). The bridge spawns a keeper process (the bridge file in keeper mode,
   * its own session) that runs the CLI with pipes and captures its output to
   * files in the state dir; a bridge restarted on that state dir re-adopts the
   * CLI and its unfinished turn instead of ending it 'interrupted'. Pipes only.
   */
  survive: z.boolean().optional(),
}).refine((launch) => !(launch.survive === true && launch.io.mode === 'pty'), {
  message: "survive: true needs io mode 'pipes' (a pty cannot be handed from a dead bridge to a new one)",
  path: ['survive'],
});
export type LaunchSpec = z.infer<typeof launchSpecSchema>;
export type LaunchSpecInput = z.input<typeof launchSpecSchema>;
