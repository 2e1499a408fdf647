// The embedded local sandbox provider: each session is a directory on this
// machine, resumable by id from any host process, with identity-keyed
// templates standing in for snapshots. Isolation is the bridge's: the options
// here travel to every bridge started in a session (BRIDGE_ISOLATION), which
// jails its CLI — a uid of its own, sandbox-runtime's namespaces, the network
// policy setNetworkPolicy writes (docs/security.md). The host's own commands
// (bootstrap, the bridge) run as this process does.
// Session mechanics live in ./local/; this file owns roots, ids and lifecycle.
import { randomUUID } from 'node:crypto';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { HarnessV1SandboxProvider } from '../../../protocol/harness-v1/index.ts';
import { onPathOf, type LocalIsolation } from './isolation-options.ts';
import { errnoCode } from './errno.ts';
import { LocalSandboxError } from './errors.ts';
import { defaultSandboxesRoot, defaultTemplatesRoot, pidFileName, sanitizeId, unpassableAncestor } from './paths.ts';
import { createLocalSession, type LocalSandboxSession, type LocalSessionOrigin } from './session.ts';
import { startFromTemplate, type OnFirstCreate } from './templates.ts';

export { LocalSandboxError, type LocalSandboxErrorCode } from './errors.ts';
export type { LocalIsolation } from './isolation-options.ts';
export { findFreeLoopbackPorts } from './ports.ts';
export type { LocalSandboxSession, LocalSessionOrigin } from './session.ts';
export { defaultSandboxesRoot, defaultTemplatesRoot } from './paths.ts';

export interface LocalSandboxProviderOptions {
  /**
   * Where session directories live. Default: `$XDG_CACHE_HOME/harness-bridge/sandboxes` when
   * XDG_CACHE_HOME is set, else `/var/cache/harness-bridge/sandboxes` as root, `~/Library/Caches/harness-bridge/sandboxes`
   * on macOS, `~/.cache/harness-bridge/sandboxes` otherwise.
   */
  root?: string;
  /**
   * How bridges started in a session isolate the CLI from themselves (docs/security.md#modes).
   * Default 'auto': the strongest this machine allows — as root a uid of its own plus
   * sandbox-runtime's namespaces (with the network policy), else what is possible, with a warning
   * diagnostic when nothing is. An explicit mode is that mode or a refusal; one that needs a
   * namespace fails createSession with 'bwrap-missing' when bubblewrap is not installed.
   */
  isolation?: LocalIsolation;
  /** Refuse to run a CLI without isolation (the bridge exits at start, or refuses the turn). Default false. */
  requireIsolation?: boolean;
  /** One user for every session's CLI when bridges run as root: a name (created if missing) or `UID:GID`. Default: a uid of each session's own (docs/security.md#session-uid). */
  cliUser?: string;
  /** Where identity templates live. Default: `templates` in the same cache dir as the default `root` (`…/harness-bridge/templates`). */
  templatesRoot?: string;
  /** PATH used to find bwrap for an explicit namespace mode. Default: process.env.PATH at session creation. */
  bwrapSearchPath?: string;
  /** Ports every session reports in `ports` (all loopback ports are reachable regardless). */
  ports?: ReadonlyArray<number>;
}

export interface LocalSandboxProvider extends HarnessV1SandboxProvider {
  readonly providerId: 'local';
  readonly root: string;
  readonly templatesRoot: string;
  readonly isolation: LocalIsolation;
  readonly createSession: (options?: {
    sessionId?: string;
    abortSignal?: AbortSignal;
    identity?: string;
    onFirstCreate?: OnFirstCreate;
  }) => Promise<LocalSandboxSession>;
  readonly resumeSession: (options: { sessionId: string; abortSignal?: AbortSignal }) => Promise<LocalSandboxSession>;
}

export function createLocalSandboxProvider(options: LocalSandboxProviderOptions = {}): LocalSandboxProvider {
  const isolation = options.isolation ?? 'auto';
  const modes: readonly string[] = ['auto', 'uid+namespace', 'namespace', 'uid', 'none'];
  if (!modes.includes(isolation)) {
    throw new LocalSandboxError('invalid-option', `isolation must be one of ${modes.join(', ')}, got ${JSON.stringify(isolation)}`);
  }
  const cli = { mode: isolation, require: options.requireIsolation === true, ...(options.cliUser === undefined ? {} : { cliUser: options.cliUser }) };
  const root = resolve(options.root ?? defaultSandboxesRoot());
  const templatesRoot = resolve(options.templatesRoot ?? defaultTemplatesRoot());
  const searchPath = () => options.bwrapSearchPath ?? process.env.PATH;

  const open = async (id: string, dir: string, origin: LocalSessionOrigin): Promise<LocalSandboxSession> => {
    await writeFile(join(dir, pidFileName), '', { flag: 'a' });
    return createLocalSession({ id, dir, isolation: cli, ports: options.ports ?? [], origin });
  };

  /**
   * An explicit namespace mode with no bubblewrap installed fails here, before anything is created; so does a root
   * whose sandboxes the CLI's user could not reach where the mode needs it to (its uid modes as root: the bridge would
   * refuse the first spawn). auto falls back to the namespace alone there, and the host gets a warning diagnostic.
   */
  const checkIsolation = (): void => {
    if ((isolation === 'uid+namespace' || isolation === 'namespace') && onPathOf('bwrap', searchPath()) === undefined) {
      throw new LocalSandboxError(
        'bwrap-missing',
        `isolation '${isolation}' was requested but no bwrap executable is on PATH; install it (scripts/ensure-apt.sh bubblewrap socat ripgrep) ` +
          "or ask for isolation 'auto'. Refusing to run unisolated.",
      );
    }
    const blocked = process.getuid?.() === 0 && isolation !== 'none' && isolation !== 'namespace' ? unpassableAncestor(root) : undefined;
    if (blocked !== undefined && (isolation !== 'auto' || onPathOf('bwrap', searchPath()) === undefined)) {
      throw new LocalSandboxError(
        'invalid-option',
        `isolation '${isolation}' runs the CLI as a user of its own (${options.cliUser ?? "the session's uid"}), which cannot pass ${blocked.dir} ` +
          `(mode ${blocked.mode.toString(8)}) on the way to the sandboxes root ${root}: make it passable (chmod o+x ${blocked.dir}), ` +
          `choose a root that user can reach (the default is ${defaultSandboxesRoot()})` +
          (isolation === 'auto' ? ', or install bubblewrap so the CLI runs in a namespace instead' : ", or ask for isolation 'auto'"),
      );
    }
  };

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

