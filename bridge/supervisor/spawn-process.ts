// One turn's process, spawned the way its launch asks: under a keeper (launch `survive`,
// survive/kept-process.ts), on a pty (node-pty) or on pipes (supervised-process.ts). The
// supervisor decides what runs and when, and what a failure ends (supervisor.ts); this spawns it
// and attaches it to a new entry.
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { KeptEgressSpec } from '../jail/kept-egress.ts';
import type { AheadGo } from '../survive/jail-ahead.ts';
import { spawnKept } from '../survive/kept-process.ts';
import type { RelaySpec } from '../survive/mcp-relay.ts';
import type { SpareKeepers } from '../survive/spare-keeper.ts';
import { newEntry, survivorKey, type EntryHandlers, type ProcEntry } from './proc-entry.ts';
import type { PtyModule } from './pty.ts';
import { childEnvNames, spawnPipes, spawnPty, type ProcessOptions } from './supervised-process.ts';

export type SpawnPlan = {
  /** The host's launch: what is journaled, saved for adoption and compared for reuse. */
  launch: LaunchSpec;
  /** The jail's launch: what runs (docs/security.md). */
  spawnAs: LaunchSpec;
  options: ProcessOptions;
  handlers: EntryHandlers;
  /** A kept CLI's: where its keeper comes from, its keeper dir's id, its MCP relay and egress proxy. */
  kept?: { keepers: SpareKeepers; keeperId: string; relay?: RelaySpec; egress?: KeptEgressSpec; ahead?: AheadGo };
  /** node-pty, loaded, for a pty launch that is not kept (a keeper loads its own). */
  pty?: PtyModule;
};

/** `again`: nothing was spawned, and spawning again is safe (kept-process.ts: a jail started ahead gone, a port taken). */
export async function spawnProcess(plan: SpawnPlan): Promise<{ ok: true; entry: ProcEntry } | { ok: false; message: string; again?: boolean }> {
  const { launch, spawnAs, options, kept } = plan;
  // Names only, never values (docs/security.md#cli-env).
  options.log.debug({ env: childEnvNames(spawnAs) }, 'spawn: the CLI env (base, passed by name, named but unset, set by the launch)');
  const shell = newEntry(launch, plan.handlers);
  if (kept) {
    const spawned = await spawnKept(kept.keepers, kept.keeperId, launch, survivorKey(launch), options, shell.events, spawnAs, kept.relay, kept.egress, kept.ahead);
    if (!spawned.ok) return spawned;
    const entry = shell.attach(spawned.proc);
    if (kept.relay && spawnAs.env) entry.secretsEnv = spawnAs.env; // stdin placeholders name the relay's URL, as the CLI's env does
    return { ok: true, entry };
  }
  if (plan.pty) {
    const spawned = spawnPty(plan.pty, spawnAs, options, shell.events);
    return spawned.ok ? { ok: true, entry: shell.attach(spawned.proc) } : spawned;
  }
  const spawned = spawnPipes(spawnAs, options, shell.events);
  return spawned.ok ? { ok: true, entry: shell.attach(spawned.proc) } : { ok: false, message: await spawned.message };
}
