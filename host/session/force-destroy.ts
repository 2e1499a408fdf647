// doDestroy's fallback when no bridge acknowledges the destroy (unreachable,
// or it refused): remove the session's processes and state from the sandbox
// directly, so destroy still leaves nothing behind.
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';

/**
 * Kills the bridge named in the state dir's bridge.json (and its process group), every surviving CLI's
 * process group and keeper (launch `survive`: keepers/<id>/cli.pid, keeper.pid), and removes the state dir.
 */
export async function forceDestroy(sandbox: SandboxSession, stateDir: string): Promise<void> {
  await sandbox.run({
    command:
      'pid=$(sed -n \'s/.*"pid":\\([0-9]*\\).*/\\1/p\' "$HB_STATE/bridge.json" 2>/dev/null); ' +
      '[ -n "$pid" ] && { kill -9 -"$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null; }; ' +
      // A keeper that wrote exit.json is gone or going: its pids may belong to someone else by now.
      'for d in "$HB_STATE"/keepers/*/; do [ -f "$d/exit.json" ] && continue; ' +
      'c=$(cat "$d/cli.pid" 2>/dev/null); [ -n "$c" ] && kill -9 -"$c" 2>/dev/null; ' +
      'k=$(cat "$d/keeper.pid" 2>/dev/null); [ -n "$k" ] && kill -9 "$k" 2>/dev/null; ' +
      'done; rm -rf "$HB_STATE"',
    env: { HB_STATE: stateDir },
  });
}
