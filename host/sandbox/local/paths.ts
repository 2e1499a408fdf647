// Where local sandboxes live on disk: default roots under the OS cache dir,
// session-id sanitising, and resolving a caller's path against a session dir.
// Leaves file I/O and processes to files.ts and process.ts.
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { homedir, platform } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/** Directory names stay short enough for any filesystem (255 bytes) with room for suffixes. */
export const maxSessionDirNameChars = 100;

/** Name of the file (inside the session dir) that records spawned pids. */
export const pidFileName = '.sandbox-pids';

export function defaultCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'harness-bridge');
  // Root's home is 0700, and a root bridge runs the CLI under a uid of its own (docs/security.md).
  if (process.getuid?.() === 0) return '/var/cache/harness-bridge';
  if (platform() === 'darwin') return join(homedir(), 'Library', 'Caches', 'harness-bridge');
  return join(homedir(), '.cache', 'harness-bridge');
}

export function defaultSandboxesRoot(): string {
  return join(defaultCacheDir(), 'sandboxes');
}

export function defaultTemplatesRoot(): string {
  return join(defaultCacheDir(), 'templates');
}

/**
 * Maps any id to a safe directory name. Ids that are already safe map to
 * themselves; anything rewritten gets a short hash of the original, so two
 * different ids never share a directory.
 */
export function sanitizeId(id: string): string {
  const cleaned = id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  if (cleaned === id && id.length > 0 && id.length <= maxSessionDirNameChars) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 12);
  return `${cleaned.slice(0, maxSessionDirNameChars - 13) || 'id'}-${hash}`;
}

/** Relative paths resolve against the session dir; absolute paths are used as is. */
export function resolveIn(baseDir: string, path: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(baseDir, path);
}

export function isInside(dir: string, path: string): boolean {
  const d = resolve(dir);
  const p = resolve(path);
  return p === d || p.startsWith(d.endsWith('/') ? d : `${d}/`);
}

/**
 * The first existing dir from `/` down to `dir` (itself included) that a user of no group of its own cannot pass
 * (no o+x), or undefined: where a root host's CLI user (docs/security.md#modes) would be stopped. Dirs that do not
 * exist yet are created by root with the default mode, which is passable.
 */
export function unpassableAncestor(dir: string): { dir: string; mode: number } | undefined {
  const chain: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    chain.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of chain) {
    let mode: number;
    try {
      mode = statSync(d).mode;
    } catch {
      return undefined;
    }
    if ((mode & 0o001) === 0) return { dir: d, mode: mode & 0o777 };
  }
  return undefined;
}
