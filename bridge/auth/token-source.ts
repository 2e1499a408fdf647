// The bridge's auth token: where it comes from (the file `--token-file` names,
// which the host wrote for this bridge; HARNESS_BRIDGE_TOKEN; else a 0600
// `token` file in the state dir; never argv). How a connection's token is
// checked (constant time, length first) is token-check.ts: this module runs
// before the ready line and stays free of node:crypto (random.ts).
import { closeSync, fstatSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from '../random.ts';

export const tokenEnvVar = 'HARNESS_BRIDGE_TOKEN';
export const tokenFileName = 'token';

/** Shortest token accepted: a guessable token defeats the point of checking it. */
const minTokenLength = 16;

export type LoadedToken =
  | { ok: true; token: string; source: 'handed-over' | 'env' | 'file' | 'generated' }
  | { ok: false; message: string };

/**
 * The token: from `handedOver` (a file in the state dir the host wrote for this
 * bridge: read, checked like the token file, then renamed to `<stateDir>/token`
 * for resuming hosts — the caller holds the state lock, so no live bridge's
 * token is replaced), else from the environment, else from `<stateDir>/token`.
 * A token file readable or writable by group/other is refused (someone else may
 * know it). With none, a fresh random token is written to the file (0600) so
 * the process that started the bridge can read it.
 */
export function loadToken(stateDir: string, env: NodeJS.ProcessEnv, handedOver?: string): LoadedToken {
  if (handedOver !== undefined) {
    const path = join(stateDir, handedOver);
    const read = readPrivate(path);
    if (!read.ok) return { ok: false, message: read.message };
    const token = checked(read.text.trim(), 'handed-over');
    if (!token.ok) return token;
    try {
      renameSync(path, join(stateDir, tokenFileName));
    } catch (error) {
      return { ok: false, message: `cannot rename ${path} to ${tokenFileName}: ${(error as Error).message}` };
    }
    return token;
  }
  const fromEnv = env[tokenEnvVar];
  if (fromEnv !== undefined && fromEnv !== '') return checked(fromEnv.trim(), 'env');
  const path = join(stateDir, tokenFileName);
  const read = readPrivate(path);
  if (read.ok) return checked(read.text.trim(), 'file');
  if (read.code !== 'ENOENT') return { ok: false, message: read.message };
  const token = randomBytes(32).toString('base64url');
  try {
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (writeError) {
    return { ok: false, message: `cannot create ${path}: ${(writeError as Error).message}` };
  }
  return { ok: true, token, source: 'generated' };
}

/** A regular 0600 file of this uid, read whole. */
function readPrivate(path: string): { ok: true; text: string } | { ok: false; message: string; code?: string } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return { ok: false, message: `cannot open ${path}: ${(error as Error).message}`, code: (error as NodeJS.ErrnoException).code };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, message: `${path} is not a regular file` };
    if ((stat.mode & 0o077) !== 0) return { ok: false, message: `${path} has mode ${(stat.mode & 0o777).toString(8)}; it must be 0600 (no group/other access)` };
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return { ok: false, message: `${path} is owned by uid ${stat.uid}, not by this process` };
    return { ok: true, text: readFileSync(fd, 'utf8') };
  } finally {
    closeSync(fd);
  }
}

function checked(token: string, source: 'handed-over' | 'env' | 'file'): LoadedToken {
  if (token.length < minTokenLength) {
    const from = source === 'env' ? tokenEnvVar : source === 'file' ? tokenFileName : 'the --token-file';
    return { ok: false, message: `the token from ${from} is shorter than ${minTokenLength} characters` };
  }
  return { ok: true, token, source };
}
