// The `--cli-user` setting: the name or UID:GID of the unprivileged user a root bridge runs its CLIs
// as. Apart from agent-user.ts (which finds or creates that user) because stage 1 parses the flag:
// agent-user.ts needs node:child_process, which stage 1 does not load (docs/bridge-internals.md#two-stage-start).

/** The one user every session's CLI shares when a root bridge cannot lease a uid of the session's own (session-uid.ts). */
export const DEFAULT_CLI_USER = 'harness-agent';

/** `--cli-user` not given: a uid of the session's own (session-uid.ts); given: that user for every session. */
export type CliUserSpec = { session: true } | { name: string } | { uid: number; gid: number };

const userNamePattern = /^[a-z_][a-z0-9_-]{0,31}$/;

/** `NAME`, or `UID:GID` for a user without a passwd entry. */
export function parseCliUser(value: string): { name: string } | { uid: number; gid: number } | { error: string } {
  const numeric = /^(\d{1,10}):(\d{1,10})$/.exec(value);
  if (numeric) {
    const uid = Number(numeric[1]);
    const gid = Number(numeric[2]);
    if (uid === 0 || gid === 0) return { error: '--cli-user must not be root (uid/gid 0)' };
    return { uid, gid };
  }
  if (!userNamePattern.test(value)) return { error: `--cli-user ${JSON.stringify(value)} is neither a user name nor UID:GID` };
  if (value === 'root') return { error: '--cli-user must not be root' };
  return { name: value };
}
