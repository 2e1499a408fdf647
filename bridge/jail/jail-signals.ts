// Signals for a CLI inside sandbox-runtime's namespace. The process the supervisor spawned is srt
// (its own process group); the CLI runs two namespaces down, in a session of its own, beside the
// socat helpers that carry its network. A group signal to srt would reach srt, its shell and the
// outer bubblewrap, never the CLI — and a SIGINT there tears the whole jail down. So: SIGKILL goes
// to srt's group (bubblewrap's --die-with-parent then ends everything inside); any other signal
// goes to the CLI and everything it started — the descendants of srt's seccomp helper, found in
// /proc (the bridge's pid namespace sees every pid of the jail's). Until the CLI exists, srt's
// group gets it (srt passes SIGINT and SIGTERM on to its command).
import { readdirSync, readFileSync } from 'node:fs';

/** The seccomp helper that execs the command inside the jail (vendor/seccomp/<arch>/apply-seccomp). */
const helperName = 'apply-seccomp';

function children(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = map.get(ppid) ?? [];
      list.push(Number(name));
      map.set(ppid, list);
    } catch {
      // gone meanwhile
    }
  }
  return map;
}

function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The CLI's process tree inside the jail under srt `pid` (empty when it is not running yet). */
export function jailedTree(pid: number): number[] {
  const tree = children();
  const below = (root: number): number[] => {
    const out: number[] = [];
    const stack = [...(tree.get(root) ?? [])];
    while (stack.length > 0) {
      const next = stack.pop()!;
      out.push(next);
      stack.push(...(tree.get(next) ?? []));
    }
    return out;
  };
  const helper = below(pid).find((p) => comm(p) === helperName);
  return helper === undefined ? [] : below(helper);
}

/** Sends `signal` to the jailed CLI under srt `pid`; false when nothing was there to signal. */
export function signalJailed(pid: number, signal: NodeJS.Signals): boolean {
  if (signal !== 'SIGKILL') {
    const tree = jailedTree(pid);
    if (tree.length > 0) {
      let sent = false;
      for (const member of tree) {
        try {
          process.kill(member, signal);
          sent = true;
        } catch {
          // exited meanwhile
        }
      }
      if (sent) return true;
    }
  }
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
