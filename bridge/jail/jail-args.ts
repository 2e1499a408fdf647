// The bridge's isolation flags (docs/security.md#settings) and the one check cheap enough for
// stage 1: isolation that is required and known to be impossible before anything starts, so the
// bridge refuses before its ready line. Everything that needs a process (creating the CLI user,
// probing namespaces) is stage 2's (isolation.ts). Stage 1 cost: node:fs only, no zod.
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { IsolationRequest } from '../../protocol/v1/isolation.ts';
import { parseCliUser, type CliUserSpec } from './cli-user.ts';

export type JailArgs = {
  requested: IsolationRequest;
  required: boolean;
  cliUser: CliUserSpec;
  /** The network policy file the host's sandbox writes (host/sandbox/local/network-policy.ts). */
  networkPolicy?: string;
  /** sandbox-runtime's CLI (dist/cli.js); default: resolved next to the bridge file. */
  srt?: string;
  /** The dir holding every session's dir on this machine (the local provider's root): the jail hides it but its own project and areas. */
  sessionsRoot?: string;
};

export const DEFAULT_JAIL_ARGS: Readonly<JailArgs> = Object.freeze({ requested: 'auto', required: false, cliUser: { session: true as const } });

const requests: readonly IsolationRequest[] = ['auto', 'uid+namespace', 'namespace', 'uid', 'none'];

/** Applies one flag; a problem message for a bad value. */
export type JailFlag = '--isolation' | '--cli-user' | '--network-policy' | '--srt' | '--sessions-root';
export const JAIL_FLAGS: readonly JailFlag[] = ['--isolation', '--cli-user', '--network-policy', '--srt', '--sessions-root'];

export function setJailArg(args: JailArgs, flag: JailFlag, value: string): string | undefined {
  if (flag === '--isolation') {
    if (!(requests as readonly string[]).includes(value)) return `--isolation must be one of ${requests.join(', ')}, got ${value}`;
    args.requested = value as IsolationRequest;
  } else if (flag === '--cli-user') {
    const user = parseCliUser(value);
    if ('error' in user) return user.error;
    args.cliUser = user;
  } else if (flag === '--network-policy') {
    if (!value.startsWith('/')) return '--network-policy must be an absolute path';
    args.networkPolicy = value;
  } else if (flag === '--sessions-root') {
    if (!value.startsWith('/') || value === '/') return '--sessions-root must be an absolute path other than /';
    args.sessionsRoot = value;
  } else {
    if (!value.startsWith('/')) return '--srt must be an absolute path';
    args.srt = value;
  }
  return undefined;
}

/** Why required isolation cannot be had here, when that is certain before starting; else undefined. */
export function isolationImpossible(args: JailArgs): string | undefined {
  if (args.requested === 'none') return '--isolation none contradicts --require-isolation';
  const root = process.getuid?.() === 0;
  if (root && args.requested !== 'namespace') return undefined; // a CLI uid is possible (isolation.ts creates the user)
  const why = root ? 'isolation namespace was asked for' : 'the bridge does not run as root, so only a namespace can isolate the CLI';
  if (process.platform !== 'linux') return `${why}, and namespaces are Linux only`;
  if (onPath('bwrap') === undefined) return `${why}, and bubblewrap (bwrap) is not installed`;
  try {
    if (Number(readFileSync('/proc/sys/user/max_user_namespaces', 'utf8').trim()) === 0) return `${why}, and user namespaces are disabled (user.max_user_namespaces = 0)`;
  } catch {
    // no such sysctl: leave it to the probe
  }
  return undefined;
}

/** An executable `name` on PATH, or undefined. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
