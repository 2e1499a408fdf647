// The embedded local sandbox provider: each session is a directory on this
// machine (optionally behind bubblewrap), resumable by id from any host
// process, with identity-keyed templates standing in for snapshots.
// Session mechanics live in ./local/; this file owns roots, ids and lifecycle.
import { randomUUID } from 'node:crypto';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { HarnessV1SandboxProvider } from '../../../protocol/harness-v1/index.ts';
import { requireBwrap, type Isolation } from './bwrap.ts';
import { errnoCode } from './errno.ts';
import { LocalSandboxError } from './errors.ts';
import { defaultSandboxesRoot, defaultTemplatesRoot, pidFileName, sanitizeId } from './paths.ts';
import { createLocalSession, type LocalSandboxSession, type LocalSessionOrigin } from './session.ts';
import { startFromTemplate, type OnFirstCreate } from './templates.ts';

export { LocalSandboxError, type LocalSandboxErrorCode } from './errors.ts';
export { findBwrap, type Isolation } from './bwrap.ts';
export { findFreeLoopbackPorts } from './ports.ts';
export type { LocalSandboxSession, LocalSessionOrigin } from './session.ts';
export { defaultSandboxesRoot, defaultTemplatesRoot } from './paths.ts';

export interface LocalSandboxProviderOptions {
  /** Where session directories live. Default: `<OS cache dir>/harness-bridge/sandboxes`. */
  root?: string;
  /** 'bwrap' runs every command under bubblewrap and fails when bwrap is missing. Default 'none'. */
  isolation?: Isolation;
  /** Where identity templates live. Default: `<OS cache dir>/harness-bridge/templates`. */
  templatesRoot?: string;
  /** PATH used to find bwrap. Default: process.env.PATH at session creation. */
  bwrapSearchPath?: string;
  /** Ports every session reports in `ports` (all loopback ports are reachable regardless). */
  ports?: ReadonlyArray<number>;
}

export interface LocalSandboxProvider extends HarnessV1SandboxProvider {
  readonly providerId: 'local';
  readonly root: string;
  readonly templatesRoot: string;
  readonly isolation: Isolation;
  readonly createSession: (options?: {
    sessionId?: string;
    abortSignal?: AbortSignal;
    identity?: string;
    onFirstCreate?: OnFirstCreate;
  }) => Promise<LocalSandboxSession>;
  readonly resumeSession: (options: { sessionId: string; abortSignal?: AbortSignal }) => Promise<LocalSandboxSession>;
}

export function createLocalSandboxProvider(options: LocalSandboxProviderOptions = {}): LocalSandboxProvider {
  const isolation = options.isolation ?? 'none';
  if (isolation !== 'none' && isolation !== 'bwrap') {
    throw new LocalSandboxError('invalid-option', `isolation must be 'none' or 'bwrap', got ${JSON.stringify(isolation)}`);
  }
  const root = resolve(options.root ?? defaultSandboxesRoot());
  const templatesRoot = resolve(options.templatesRoot ?? defaultTemplatesRoot());
  const searchPath = () => options.bwrapSearchPath ?? process.env.PATH;

  const open = async (id: string, dir: string, origin: LocalSessionOrigin): Promise<LocalSandboxSession> => {
    // The pid record must exist up front: bwrap bind-mounts it read-only into the sandbox.
    await writeFile(join(dir, pidFileName), '', { flag: 'a' });
    return createLocalSession({ id, dir, isolation, bwrapPath: checkIsolation(), ports: options.ports ?? [], origin });
  };

  /** The bwrap executable when isolation asks for it; throws 'bwrap-missing' rather than run unisolated. */
  const checkIsolation = (): string | undefined => (isolation === 'bwrap' ? requireBwrap(searchPath()) : undefined);

  return {
    specificationVersion: 'harness-sandbox-v1',
    providerId: 'local',
    root,
    templatesRoot,
    isolation,

    createSession: async ({ sessionId, abortSignal, identity, onFirstCreate } = {}) => {
      abortSignal?.throwIfAborted();
      checkIsolation();
      const id = sessionId ?? randomUUID();
      const dir = join(root, sanitizeId(id));
      await mkdir(root, { recursive: true });
      if (identity === undefined) {
        try {
          await mkdir(dir);
        } catch (error) {
          if (errnoCode(error) === 'EEXIST') {
            throw new LocalSandboxError('session-exists', `sandbox session ${JSON.stringify(id)} already exists at ${dir}; use resumeSession`);
          }
          throw error;
        }
        const session = await open(id, dir, { fromTemplate: false });
        try {
          await onFirstCreate?.(session.restricted(), { abortSignal });
        } catch (error) {
          await session.destroy();
          throw error;
        }
        return session;
      }
      if (await stat(dir).catch(() => null)) {
        throw new LocalSandboxError('session-exists', `sandbox session ${JSON.stringify(id)} already exists at ${dir}; use resumeSession`);
      }
      const origin = await startFromTemplate({
        templatesRoot,
        identity,
        onFirstCreate,
        targetDir: dir,
        abortSignal,
        makeSession: (stagingDir) => open(`template:${identity}`, stagingDir, { identity, fromTemplate: false }),
      });
      return open(id, dir, origin);
    },

    resumeSession: async ({ sessionId, abortSignal }) => {
      abortSignal?.throwIfAborted();
      checkIsolation();
      const dir = join(root, sanitizeId(sessionId));
      const info = await stat(dir).catch(() => null);
      if (info === null || !info.isDirectory()) {
        throw new LocalSandboxError('session-not-found', `no local sandbox session ${JSON.stringify(sessionId)} under ${root}`);
      }
      return open(sessionId, dir, { fromTemplate: false });
    },
  };
}

