// doDestroy's fallback when no bridge acknowledges the destroy (unreachable,
// or it refused): remove the session's processes and state from the sandbox
// directly, so destroy still leaves nothing behind.
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';

/**
 * A pid recorded in a file is signalled only if its process started no later than the file was
 * written: a pid the kernel handed out again since (pids wrap within minutes on a busy machine)
 * belongs to a process started after, perhaps another session's. Start: /proc/<pid>/stat field 22
 * (clock ticks since boot, after the parenthesised name) plus /proc/stat's btime.
 */
const STARTED_BEFORE_SH =
  'started_before() { s=$(sed "s/.*) //" "/proc/$1/stat" 2>/dev/null | cut -d" " -f20); [ -n "$s" ] || return 1; ' +
  'b=$(sed -n "s/^btime //p" /proc/stat); h=$(getconf CLK_TCK 2>/dev/null || echo 100); ' +
  'w=$(stat -c %Y "$2" 2>/dev/null) || return 1; [ $((b + s / h)) -le "$w" ]; }; ';

/**
 * Kills the bridge named in the state dir's bridge.json (and its process group), every surviving CLI's
 * process group and keeper (launch `survive`: keepers/<id>/cli.pid, keeper.pid), and removes the state dir.
 */
export async function forceDestroy(sandbox: SandboxSession, stateDir: string): Promise<void> {
  await sandbox.run({
    command:
      STARTED_BEFORE_SH +
      'pid=$(sed -n \'s/.*"pid":\\([0-9]*\\).*/\\1/p\' "$HB_STATE/bridge.json" 2>/dev/null); ' +
      '[ -n "$pid" ] && started_before "$pid" "$HB_STATE/bridge.json" && { kill -9 -"$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null; }; ' +
      // A keeper that wrote exit.json is gone or going: its pids may belong to someone else by now.
      'for d in "$HB_STATE"/keepers/*/; do [ -f "$d/exit.json" ] && continue; ' +
      'c=$(cat "$d/cli.pid" 2>/dev/null); [ -n "$c" ] && started_before "$c" "$d/cli.pid" && kill -9 -"$c" 2>/dev/null; ' +
      'k=$(cat "$d/keeper.pid" 2>/dev/null); [ -n "$k" ] && started_before "$k" "$d/keeper.pid" && kill -9 "$k" 2>/dev/null; ' +
      'done; rm -rf "$HB_STATE"',
    env: { HB_STATE: stateDir },
  });
}
