// The local provider's isolation options (docs/security.md#settings), which it hands to every
// bridge started in its sessions: the provider itself runs the host's commands unjailed and the
// bridge jails the CLI at its spawn point (bridge/jail/). Replaces the hand-written bubblewrap
// wrapper that jailed every command, the bridge included.
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import type { IsolationRequest } from '../../../protocol/v1/isolation.ts';

/** 'auto' (the default): the strongest mode the machine allows; or one mode exactly. */
export type LocalIsolation = IsolationRequest;

/** First executable `name` on the search path, or undefined. */
export function onPathOf(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

let srtCli: string | null | undefined;

/**
 * sandbox-runtime's CLI as this package resolves it: a local sandbox is this machine, so the bridge
 * (whose bundle the recipe copies into the session dir, away from any node_modules) is pointed at it.
 */
export function localSrtCli(): string | undefined {
  if (srtCli === undefined) {
    try {
      srtCli = join(dirname(createRequire(import.meta.url).resolve('@anthropic-ai/sandbox-runtime/package.json')), 'dist', 'cli.js');
    } catch {
      srtCli = null;
    }
  }
  return srtCli ?? undefined;
}
