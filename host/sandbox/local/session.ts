// One local sandbox session: a directory on this machine plus the processes
// spawned in it. Assembles file I/O (files.ts) and processes (process.ts)
// into HarnessV1NetworkSandboxSession; the provider (../local.ts) decides
// where directories live and how sessions start.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarnessV1NetworkSandboxSession, SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { bwrapArgv, requireBwrap, type Isolation } from './bwrap.ts';
import { LocalSandboxError } from './errors.ts';
import { createFileMethods } from './files.ts';
import { isInside, pidFileName, resolveIn } from './paths.ts';
import { killRecorded, killResidentKeepers } from './pids.ts';
import { loopbackUrl } from './ports.ts';
import { runProcess, spawnProcess, type LiveProcess, type ProcessHost } from './process.ts';

/** How the session came to be; `fromTemplate` sessions started as a copy of an identity template. */
export interface LocalSessionOrigin {
  identity?: string;
  fromTemplate: boolean;
  /** This createSession call ran onFirstCreate (the first one for its identity). */
  builtTemplate?: boolean;
  /** How long onFirstCreate took when the template was built (what a copy saves). */
  firstCreateMs?: number;
  /** How long copying the template into this session took. */
  copyMs?: number;
}

export interface LocalSandboxSession extends HarnessV1NetworkSandboxSession {
  readonly isolation: Isolation;
  readonly origin: LocalSessionOrigin;
  readonly destroy: () => Promise<void>;
  readonly stop: () => Promise<void>;
  readonly setPorts: (ports: ReadonlyArray<number>) => Promise<void>;
}

export interface LocalSessionOptions {
  id: string;
  dir: string;
  isolation: Isolation;
  /** Resolved bwrap executable; required when isolation is 'bwrap'. */
  bwrapPath: string | undefined;
  ports: ReadonlyArray<number>;
  origin: LocalSessionOrigin;
  /** Runs after destroy removed the directory (the provider drops its bookkeeping). */
  onDestroy?: () => Promise<void>;
}

export function createLocalSession(options: LocalSessionOptions): LocalSandboxSession {
  const { id, dir, isolation, origin } = options;
  const pidFile = join(dir, pidFileName);
  const live = new Set<LiveProcess>();
  let ports = [...options.ports];

  // In bwrap mode the sandbox sees only its own dir as writable; host-side
  // writes elsewhere would show the caller a world the sandbox cannot see.
  const guard = (path: string, access: 'read' | 'write'): string => {
    const resolved = resolveIn(dir, path);
    if (isolation === 'bwrap' && access === 'write' && !isInside(dir, resolved)) {
      throw new LocalSandboxError('outside-sandbox', `path ${resolved} is outside the sandbox's writable directory ${dir}`);
    }
    return resolved;
  };

  const host: ProcessHost = {
    resolveCwd: (path) => resolveIn(dir, path ?? '.'),
    launcher: (command, cwd) =>
      isolation === 'bwrap'
        ? bwrapArgv({ bwrapPath: options.bwrapPath ?? requireBwrap(process.env.PATH), sessionDir: dir, pidFile, cwd, command })
        : { file: '/bin/sh', args: ['-c', command] },
    pidFile,
    live,
  };

  const description =
    `Local sandbox ${id}: working directory ${dir}` +
    (isolation === 'bwrap' ? ' (bubblewrap: only this directory is writable, /tmp is private per command)' : ' (no isolation)') +
    '. Servers listening on 127.0.0.1 are reachable from the host.';

  const restrictedView: SandboxSession = Object.freeze({
    description,
    ...createFileMethods(guard),
    spawn: ((spawnOptions: Parameters<typeof spawnProcess>[1]) => spawnProcess(host, spawnOptions)) as SandboxSession['spawn'],
    run: (runOptions) => runProcess(host, runOptions),
  });

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    // Concurrent calls share one pass; a later call does a fresh (cheap) pass.
    stopping ??= (async () => {
      await Promise.all([...live].map((entry) => entry.kill()));
      await killRecorded(pidFile);
      await killResidentKeepers(dir); // a bridge keeper and its CLI left every recorded group on purpose
    })().finally(() => {
      stopping = undefined;
    });
    return stopping;
  };

  const session: LocalSandboxSession = {
    ...restrictedView,
    id,
    defaultWorkingDirectory: dir,
    isolation,
    origin,
    get ports() {
      return ports;
    },
    getPortUrl: async (urlOptions) => loopbackUrl(urlOptions),
    setPorts: async (next) => {
      for (const port of next) loopbackUrl({ port });
      ports = [...next];
    },
    stop,
    destroy: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
      await options.onDestroy?.();
    },
    restricted: () => restrictedView,
  };
  return session;
}
