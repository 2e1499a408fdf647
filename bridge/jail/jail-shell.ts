// What runs inside the jail before the CLI, and the work on srt's command lines (srt.ts wraps with them):
// the jail's shell scripts (innerScript, and waitScript for a jail started ahead: docs/bridge-internals.md#jail-ahead),
// the relay socket swapped for a keeper's, the env names srt sets, and POSIX shell quoting.

/** The env names srt's bubblewrap line sets or unsets (`--setenv NAME …`, `--unsetenv NAME`): in the jail they keep srt's values. */
export function setByJail(wrapped: string): string[] {
  return [...new Set([...wrapped.matchAll(/(?:^|\s)--(?:un)?setenv\s+([A-Za-z_][A-Za-z0-9_]*)\s/g)].map((match) => match[1]!))];
}

/**
 * The host side of srt's proxy relay in a wrapped command line (`--bind` into the jail, and the inner
 * relays' UNIX-CONNECT), when the line holds all of it: one socket for both protocols (the helper's proxy
 * ports are one), and the mounts on the line, not passed through a file (`--args`).
 */
export function srtRelaySocket(wrapped: string): string | undefined {
  if (/\s--args\s/.test(wrapped) || wrapped.includes('claude-socks-')) return undefined;
  const found = /\/[^\s'"\\]*\/claude-http-[0-9a-f]+\.sock/.exec(wrapped)?.[0];
  return found !== undefined && shellSafePath.test(found) ? found : undefined;
}

/** A path that reads the same bare and in any quotes srt's command line puts it in. */
export const shellSafePath = /^[A-Za-z0-9_./-]+$/;

/** One POSIX shell word. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs inside the jail, then execs the CLI ("$@"): the MCP forwarder (waiting until it listens, as
 * srt waits for its own relays), the proxy exemptions cleared, the CLI's TMPDIR, the jail's own
 * variables removed. 3128 is srt's HTTP proxy relay inside the namespace. The wait starts no process:
 * the shell's own `read` looks for the listener in /proc/net/tcp (HB_JAIL_MCP_LISTEN, its local
 * address as the kernel writes it) until it is there or 5 s (/proc/uptime, centiseconds) have passed
 * (a `grep` and a `sleep` per look cost ~13 ms of every spawn). The centiseconds are whole seconds × 100
 * plus the two decimals read as 1xx − 100 (a leading 0 would be octal), so a count that gains a digit
 * (99.99 → 100.00) is 1 cs later, not a jump that ends the wait. Past the first 50 ms each look
 * sleeps 10 ms: a forwarder that never listens costs the 5 s, not 5 s of a core.
 */
export const innerScript = [
  'export NO_PROXY= no_proxy=',
  '[ -n "$HB_JAIL_TMPDIR" ] && export TMPDIR="$HB_JAIL_TMPDIR"',
  'if [ -n "$HB_JAIL_MCP_PORT" ]; then',
  '  socat "TCP4-LISTEN:$HB_JAIL_MCP_PORT,bind=127.0.0.1,fork,reuseaddr" "PROXY:127.0.0.1:127.0.0.1:$HB_JAIL_MCP_PORT,proxyport=3128" </dev/null >/dev/null 2>&1 &',
  '  hb_since=',
  '  while :; do',
  '    while read -r hb_sl hb_local hb_remote hb_state hb_rest; do',
  '      [ "$hb_local $hb_remote $hb_state" = "$HB_JAIL_MCP_LISTEN 00000000:0000 0A" ] && break 2',
  '    done < /proc/net/tcp',
  '    read -r hb_now hb_rest < /proc/uptime || break',
  '    hb_now=$((${hb_now%.*} * 100 + 1${hb_now#*.} - 100))',
  '    [ $((hb_now - ${hb_since:=$hb_now})) -lt 500 ] || break',
  '    [ $((hb_now - hb_since)) -lt 5 ] || sleep 0.01',
  '  done',
  '  unset hb_since hb_now hb_sl hb_local hb_remote hb_state hb_rest',
  'fi',
  'unset HB_JAIL_TMPDIR HB_JAIL_MCP_PORT HB_JAIL_MCP_LISTEN',
  'exec "$@"',
].join('\n');

/**
 * A jail made ahead (docs/bridge-internals.md#jail-ahead) runs innerScript up to its `exec`, then waits: it reads
 * its stdin line by line (the shell's `read` takes one byte at a time from a pipe, so nothing after the marker is
 * taken from the CLI) until the marker line ($1), and evaluates what came before it: the CLI's env and argv, and its
 * exec (survive/jail-ahead.ts goScript). EOF first: the jail was not taken, and ends.
 */
export const waitScript = [
  ...innerScript.split('\n').slice(0, -1),
  'hb_go=',
  'while IFS= read -r hb_line; do',
  '  [ "$hb_line" = "$1" ] && break',
  '  hb_go="$hb_go$hb_line',
  '"',
  'done',
  '[ "$hb_line" = "$1" ] || exit 0',
  'unset hb_line',
  'eval "$hb_go"',
].join('\n');

/** `exec` before a wrap that is one bwrap command line (what srt gives on Linux: `bwrap …`, or by the absolute path it is given); anything else as it is. */
export function execFirst(wrapped: string): string {
  return /^(?:\/[^\s'"\\]*\/)?bwrap\s/.test(wrapped) ? `exec ${wrapped}` : wrapped;
}
