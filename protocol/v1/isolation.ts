// How the bridge separates the CLI it spawns from itself (docs/security.md): the modes, what a
// host may ask for, and what the bridge reports in `hello`. Shared by the bridge (which decides
// and enforces at the spawn point) and the host (which asks, warns and may refuse).
import * as z from 'zod';

/**
 * What separates the CLI (and everything it spawns) from the bridge, strongest first:
 * - `uid+namespace`: the CLI runs under its own unprivileged uid AND inside a mount + pid +
 *   network namespace (sandbox-runtime over bubblewrap): the state dir, the token, the journal
 *   and the bridge's processes are neither visible nor reachable, and its traffic leaves only
 *   through the bridge's egress proxy (the network policy).
 * - `namespace`: the namespaces alone, same uid (a bridge that does not run as root).
 * - `uid`: the unprivileged uid alone (root without user namespaces): the bridge's files and
 *   /proc are unreadable and its processes unkillable, but the network is shared and no network
 *   policy can be enforced.
 * - `none`: the CLI shares the bridge's uid and namespaces; nothing keeps it from the token.
 */
export const isolationModeSchema = z.enum(['uid+namespace', 'namespace', 'uid', 'none']);
export type IsolationMode = z.infer<typeof isolationModeSchema>;

/** What a host asks for: `auto` is the strongest mode this machine allows. */
export const isolationRequestSchema = z.enum(['auto', 'uid+namespace', 'namespace', 'uid', 'none']);
export type IsolationRequest = z.infer<typeof isolationRequestSchema>;

export const ISOLATION_MODES_STRONGEST_FIRST: readonly IsolationMode[] = ['uid+namespace', 'namespace', 'uid', 'none'];

/** hello's `isolation`: the mode the bridge spawns CLIs in, and why it is not stronger. */
export const isolationReportSchema = z.object({
  mode: isolationModeSchema,
  requested: isolationRequestSchema,
  /** The bridge refuses to spawn a CLI when the mode is `none` (and exits at start when it knows so then). */
  required: z.boolean(),
  /** The uid the CLI runs as (uid modes). */
  cliUid: z.number().int().nonnegative().optional(),
  /** A network policy other than allow-all can be enforced (namespace modes). */
  networkPolicy: z.boolean(),
  /** Why a stronger mode was not available, one short sentence each. */
  reasons: z.array(z.string().max(500)).max(8),
});
export type IsolationReport = z.infer<typeof isolationReportSchema>;
