// How the bridge spawns a CLI for a turn. The bridge knows nothing about any
// particular CLI (docs/design.md#d1): everything CLI-specific arrives here.
import * as z from 'zod';
import { signalNameSchema } from './common.ts';
import { PROTOCOL_LIMITS_V1 } from './limits.ts';

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
 * (Claude Code's stream-json input): a turnEnd match does not end the turn
 * while a stdin line of the turn that names an id awaits its acknowledgement.
 * Exit, abort and stop end the turn as always.
 * - `inputId`: where a stdin JSON line names its id.
 * - `stream`, `when`, `ackId`: a whole output line on `stream` that meets every
 *   `when` condition acknowledges the pending id at `ackId`.
 * - `maxWaitMs` (default SUPERVISOR_LIMITS.inputAckMaxWaitMs, 30 s): the
 *   longest a held match waits for an ack; then the turn ends anyway and its
 *   turn-end lists the ids in `unacknowledged`.
 * Exact rules: docs/bridge-internals.md#input-ack.
 */
export const inputAckSchema = z.object({
  inputId: jsonPathSchema,
  stream: z.enum(['stdout', 'stderr']).default('stdout'),
  when: z.array(jsonEqualsSchema).max(8).default([]),
  ackId: jsonPathSchema,
  maxWaitMs: z.number().int().min(1).max(86_400_000).optional(),
});
export type InputAck = z.infer<typeof inputAckSchema>;

/**
 * lifetime 'session' only: the per-process handshake (docs/bridge-internals.md#process-start). Each
 * step's `input` is written to stdin of EVERY process the bridge spawns for the launch (never to a
 * reused live one), before the turn's own input; a step with `until` holds everything after it
 * (the next step, the turn's input, input frames) until a whole stdout line meets every condition
 * (e.g. the JSON-RPC answer to the step's request). Each write is journaled as a `stdin` record.
 */
export const startStepSchema = z.object({
  input: z.string().min(1).max(1_000_000),
  until: z.array(jsonEqualsSchema).min(1).max(8).optional(),
});
export type StartStep = z.infer<typeof startStepSchema>;

/**
 * Env var names whose `${NAME}` placeholders the bridge substitutes in every stdin write to the
 * process (start steps, the turn's input, input frames) with the value in the CLI's env, escaped as
 * the contents of a JSON string; the journal and recordings keep the placeholder (for the MCP
 * endpoint's URL and token a JSON-RPC CLI takes on stdin, e.g. ACP's session/new).
 */
export const stdinSecretsSchema = z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).max(16);

export const ioSpecSchema = z.discriminatedUnion('mode', [
  /** maxLineBytes: the CLI's line cap, within PROTOCOL_LIMITS_V1's [minLineBytes, maxLineBytesCeiling] (refused outside, never clamped). */
  z.object({
    mode: z.literal('pipes'),
    maxLineBytes: z.number().int().min(PROTOCOL_LIMITS_V1.minLineBytes).max(PROTOCOL_LIMITS_V1.maxLineBytesCeiling).optional(),
  }),
  z.object({ mode: z.literal('pty'), cols: z.number().int().min(10).max(1000), rows: z.number().int().min(2).max(1000) }),
]);
export type IoSpec = z.infer<typeof ioSpecSchema>;

export const launchSpecSchema = z.object({
  argv: z.array(z.string()).min(1),
  /**
   * The CLI's environment is explicit (docs/security.md#cli-env): a minimal base of the bridge's own
   * (PATH, HOME, USER, LANG, LC_*, TERM, TZ, …), plus `passEnv`, plus `env`. Nothing else of the
   * bridge's environment (the host's, for a local sandbox) reaches the CLI.
   */
  env: z.record(z.string(), z.string()).optional(),
  /** Names of the bridge's environment variables the CLI gets as they are there (its credentials, e.g. ANTHROPIC_API_KEY); unset ones are skipped. */
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).max(128)).max(64).optional(),
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
  /** The per-process handshake (see startStepSchema). */
  start: z.array(startStepSchema).min(1).max(8).optional(),
  /** Placeholders substituted in stdin writes (see stdinSecretsSchema). */
  stdinSecrets: stdinSecretsSchema.optional(),
  /** How `abort` interrupts: write this to stdin, or send this signal (default SIGINT). */
  interrupt: z
    .union([z.object({ input: z.string() }), z.object({ signal: signalNameSchema })])
    .default({ signal: 'SIGINT' }),
  /**
   * The CLI runs under a keeper process (on pipes or a pty) and outlives a
   * bridge crash; a bridge restarted on the state dir adopts it and its
   * unfinished turn instead of ending that turn 'interrupted'
   * (docs/bridge-internals.md#surviving-clis).
   */
  survive: z.boolean().optional(),
});
export type LaunchSpec = z.infer<typeof launchSpecSchema>;
export type LaunchSpecInput = z.input<typeof launchSpecSchema>;
