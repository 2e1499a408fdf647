// The bridge's auth token: where it comes from (HARNESS_BRIDGE_TOKEN, else a
// 0600 `token` file in the state dir; never argv). How a connection's token is
// checked (constant time, length first) is token-check.ts: this module runs
// before the ready line and stays free of node:crypto (random.ts).
import { closeSync, fstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from '../random.ts';

export const tokenEnvVar = 'HARNESS_BRIDGE_TOKEN';
export const tokenFileName = 'token';

/** Shortest token accepted: a guessable token defeats the point of checking it. */
const minTokenLength = 16;

export type LoadedToken =
  | { ok: true; token: string; source: 'env' | 'file' | 'generated' }
  | { ok: false; message: string };

/**
 * The token from the environment, else from `<stateDir>/token`. A token file
 * readable or writable by group/other is refused (someone else may know it).
 * With neither, a fresh random token is written to the file (0600) so the
 * process that started the bridge can read it.
 */
export function loadToken(stateDir: string, env: NodeJS.ProcessEnv): LoadedToken {
  const fromEnv = env[tokenEnvVar];
  if (fromEnv !== undefined && fromEnv !== '') return checked(fromEnv.trim(), 'env');
  const path = join(stateDir, tokenFileName);
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      return { ok: false, message: `cannot open ${path}: ${(error as Error).message}` };
    }
    const token = randomBytes(32).toString('base64url');
    try {
      writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
    } catch (writeError) {
      return { ok: false, message: `cannot create ${path}: ${(writeError as Error).message}` };
    }
    return { ok: true, token, source: 'generated' };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, message: `${path} is not a regular file` };
    if ((stat.mode & 0o077) !== 0) {
      return { ok: false, message: `${path} has mode ${(stat.mode & 0o777).toString(8)}; it must be 0600 (no group/other access)` };
    }
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
      return { ok: false, message: `${path} is owned by uid ${stat.uid}, not by this process` };
    }
    return checked(readFileSync(fd, 'utf8').trim(), 'file');
  } finally {
    closeSync(fd);
  }
}

function checked(token: string, source: 'env' | 'file'): LoadedToken {
  if (token.length < minTokenLength) {
    return { ok: false, message: `the token from ${source === 'env' ? tokenEnvVar : tokenFileName} is shorter than ${minTokenLength} characters` };
  }
  return { ok: true, token, source };
}
