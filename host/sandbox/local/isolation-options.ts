// The local provider's isolation options (docs/security.md#settings), which it hands to every
// bridge started in its sessions: the provider itself runs the host's commands unjailed and the
// bridge jails the CLI at its spawn point (bridge/jail/). Replaces the hand-written bubblewrap
// wrapper that jailed every command, the bridge included.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
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
