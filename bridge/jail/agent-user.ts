// The unprivileged user a root bridge runs its CLIs as (docs/security.md#uid): found in
// /etc/passwd by name, or given as numbers, and created once (a system user with its own group,
// no home, no login shell) when a root bridge asks for a name the machine does not have yet.
// A real passwd entry matters: CLIs and the tools they run look their user up (Node's
// os.userInfo(), ssh, git's ident fallback) and fail on a uid without one.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export type AgentUser = { readonly name: string; readonly uid: number; readonly gid: number };

/** useradd / adduser: a second or two is slow, a minute means something hangs. */
const maxCreateMs = 60_000;

/** The passwd entry for `name`, if any. */
export function lookupUser(name: string, passwd = '/etc/passwd'): AgentUser | undefined {
  let text: string;
  try {
    text = readFileSync(passwd, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields[0] !== name || fields.length < 4) continue;
    const uid = Number(fields[2]);
    const gid = Number(fields[3]);
    if (Number.isSafeInteger(uid) && Number.isSafeInteger(gid)) return { name, uid, gid };
  }
  return undefined;
}

/**
 * The CLI user, created when missing (root only). Concurrent bridges may race to create it:
 * the loser's useradd fails and the lookup that follows finds the winner's entry.
 */
export function ensureAgentUser(spec: { name: string } | { uid: number; gid: number }): { ok: true; user: AgentUser; created: boolean } | { ok: false; reason: string } {
  if ('uid' in spec) return { ok: true, user: { name: String(spec.uid), uid: spec.uid, gid: spec.gid }, created: false };
  const found = lookupUser(spec.name);
  if (found) return found.uid === 0 ? { ok: false, reason: `user ${spec.name} is uid 0` } : { ok: true, user: found, created: false };
  const attempts: Array<[string, string[]]> = [
    ['useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', spec.name]],
    // busybox (Alpine): a system user in a group of its own name.
    ['sh', ['-c', 'addgroup -S "$0" && adduser -S -D -H -h /nonexistent -s /sbin/nologin -G "$0" "$0"', spec.name]],
  ];
  const errors: string[] = [];
  for (const [command, args] of attempts) {
    const run = spawnSync(command, args, { encoding: 'utf8', timeout: maxCreateMs, stdio: ['ignore', 'ignore', 'pipe'] });
    const created = lookupUser(spec.name);
    if (created) return { ok: true, user: created, created: run.status === 0 };
    errors.push(`${command}: ${run.error?.message ?? (run.stderr.trim() || `exit ${run.status}`)}`);
  }
  return { ok: false, reason: `cannot create the CLI user ${spec.name} (${errors.join('; ')})` };
}
