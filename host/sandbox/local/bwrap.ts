// Bubblewrap isolation: finding the binary and building the argv that runs a
// command with the session dir read-write, the system read-only, a private
// /tmp and the host network (loopback ports must reach the bridge).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { LocalSandboxError } from './errors.ts';

export type Isolation = 'none' | 'bwrap';

/** First executable `bwrap` on the search path, or undefined. */
export function findBwrap(searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch (error) {
      // Not in this directory; keep looking.
      void error;
    }
  }
  return undefined;
}

export function requireBwrap(searchPath: string | undefined): string {
  const found = findBwrap(searchPath);
  if (found === undefined) {
    throw new LocalSandboxError(
      'bwrap-missing',
      "isolation 'bwrap' was requested but no bwrap executable is on PATH; install it (scripts/ensure-apt.sh bubblewrap) " +
        "or ask for isolation 'none' explicitly. Refusing to run unisolated.",
    );
  }
  return found;
}

/**
 * The argv prefix for one isolated command. No --die-with-parent and no
 * --new-session: processes must outlive the host process (resume) and stay in
 * the process group we signal. /tmp is a fresh tmpfs per invocation.
 */
export function bwrapArgv(options: {
  bwrapPath: string;
  sessionDir: string;
  pidFile: string;
  cwd: string;
  command: string;
}): { file: string; args: string[] } {
  const { bwrapPath, sessionDir, pidFile, cwd, command } = options;
  return {
    file: bwrapPath,
    args: [
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      '--bind', sessionDir, sessionDir,
      // The pid record steers host-side kills: the sandbox may read it, never write it.
      '--ro-bind', pidFile, pidFile,
      '--unshare-ipc',
      '--chdir', cwd,
      '--', '/bin/sh', '-c', command,
    ],
  };
}
