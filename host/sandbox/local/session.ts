// One local sandbox session: a directory on this machine plus the processes
// spawned in it. Assembles file I/O (files.ts) and processes (process.ts)
// into HarnessV1NetworkSandboxSession; the provider (../local.ts) decides
// where directories live and how sessions start.
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type {
  HarnessV1NetworkPolicy,
  HarnessV1NetworkSandboxSession,
  HarnessV1PortEndpoint,
  HarnessV1PortOptions,
  SandboxSession,
} from '../../../protocol/harness-v1/index.ts';
import type { NetworkPolicy } from '../../../protocol/v1/network-policy.ts';
import { BRIDGE_ISOLATION, type BridgeIsolation } from '../../reach/bridge-isolation.ts';
import { holdOpen } from '../../session/hold-open.ts';
import { createFileMethods, type LocalFileExtras } from './files.ts';
import { localSrtCli, type LocalIsolation } from './isolation-options.ts';
import { networkPolicyFile, readNetworkPolicy, writeNetworkPolicy } from './network-policy.ts';
import { pidFileName, resolveIn } from './paths.ts';
import { killRecorded, killResidentKeepers } from './pids.ts';
import { loopbackUrl } from './ports.ts';
import { runProcess, spawnProcess, type LiveProcess, type LocalSpawn, type ProcessHost } from './process.ts';

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

/** The restricted view: the contract's SandboxSession plus the local file extras and spawn's `stdin: true`. */
export type LocalRestrictedSession = SandboxSession & LocalFileExtras & { readonly spawn: LocalSpawn; readonly [BRIDGE_ISOLATION]: BridgeIsolation };

/**
 * A local session has every member of both contract releases (getPortEndpoint
 * and getPortUrl, a required destroy), so it is a network sandbox session for
 * @ai-sdk/harness 1.0.x and for canary.3 alike. Every awaited method has
 * finished its work when it resolves (holdOpen): a script may end right after.
 */
export interface LocalSandboxSession extends HarnessV1NetworkSandboxSession, LocalFileExtras {
  /** How bridges started here isolate their CLI (the provider's options). */
  readonly isolation: LocalIsolation;
  /** What bridges started here are told (BRIDGE_ISOLATION): the provider's options and this session's policy file. */
  readonly [BRIDGE_ISOLATION]: BridgeIsolation;
  /**
   * The network policy for every CLI a bridge runs here and everything it spawns (the bridges'
   * egress proxy enforces it; the bridges' own traffic to the host is never subject to it).
   * Persisted in the session dir, so later bridges and resumed sessions keep it; resolves once every
   * live bridge enforces it, rejects with 'network-policy-unenforced' when one cannot (no network
   * namespace: it then refuses to start CLIs rather than run them unrestricted).
   */
  readonly setNetworkPolicy: (policy: HarnessV1NetworkPolicy) => Promise<void>;
  /** Local extension: the policy in force (allow-all when none was set). */
  readonly getNetworkPolicy: () => Promise<NetworkPolicy>;
  readonly origin: LocalSessionOrigin;
  readonly spawn: LocalSpawn;
  readonly getPortEndpoint: (options: HarnessV1PortOptions) => Promise<HarnessV1PortEndpoint>;
  readonly getPortUrl: (options: HarnessV1PortOptions) => Promise<string>;
  /** Kills every process of the session (also those an earlier host process spawned), then removes its directory. */
  readonly destroy: () => Promise<void>;
  /** Kills every process of the session; the directory stays (resumeSession reaches it). Idempotent. */
  readonly stop: () => Promise<void>;
  readonly setPorts: (ports: ReadonlyArray<number>) => Promise<void>;
  readonly restricted: () => LocalRestrictedSession;
}

export interface LocalSessionOptions {
  id: string;
  dir: string;
  /** The provider's isolation options, passed on to bridges. */
  isolation: { mode: LocalIsolation; require: boolean; cliUser?: string };
  ports: ReadonlyArray<number>;
  origin: LocalSessionOrigin;
  /** Runs after destroy removed the directory (the provider drops its bookkeeping). */
  onDestroy?: () => Promise<void>;
}

export function createLocalSession(options: LocalSessionOptions): LocalSandboxSession {
  const { id, dir, origin } = options;
  const isolation = options.isolation.mode;
  const srt = localSrtCli();
  // The provider's root holds every session's dir: each bridge's jail hides it from its CLI but the CLI's own.
  const bridgeIsolation: BridgeIsolation = Object.freeze({ ...options.isolation, networkPolicyFile: networkPolicyFile(dir), sessionsRoot: dirname(dir), ...(srt ? { srt } : {}) });
  const pidFile = join(dir, pidFileName);
  const live = new Set<LiveProcess>();
  let ports = [...options.ports];

  // The host's own file I/O: relative paths resolve in the session dir (the CLI's jail is the bridge's).
  const guard = (path: string): string => resolveIn(dir, path);

  const host: ProcessHost = {
    resolveCwd: (path) => resolveIn(dir, path ?? '.'),
    launcher: (command) => ({ file: '/bin/sh', args: ['-c', command] }),
    pidFile,
    live,
  };

  const description =
    `Local sandbox ${id}: working directory ${dir}` +
    (isolation === 'none'
      ? ' (the CLI is not isolated from the bridge)'
      : ` (the CLI runs isolated from the bridge, isolation ${isolation}: its project dir and its own home are writable, the bridge's state is hidden)`) +
    '. Servers listening on 127.0.0.1 are reachable from the host.';

  const restrictedView: LocalRestrictedSession = Object.freeze({
    description,
    ...createFileMethods(guard),
    spawn: (spawnOptions: Parameters<LocalSpawn>[0]) => spawnProcess(host, spawnOptions),
    run: (runOptions: Parameters<SandboxSession['run']>[0]) => runProcess(host, runOptions),
    [BRIDGE_ISOLATION]: bridgeIsolation,
  });

  let stopping: Promise<void> | undefined;
  // Held open: what it waits on (an unref'd bridge's exit, unref'd grace timers) would not keep a script alive.
  const stop = (): Promise<void> =>
    holdOpen(() => {
      // Concurrent calls share one pass; a later call does a fresh (cheap) pass.
      stopping ??= (async () => {
        await Promise.all([...live].map((entry) => entry.kill()));
        await killRecorded(pidFile);
        await killResidentKeepers(dir); // a bridge keeper and its CLI left every recorded group on purpose
      })().finally(() => {
        stopping = undefined;
      });
      return stopping;
    });

  const session: LocalSandboxSession = {
    ...restrictedView,
    id,
    defaultWorkingDirectory: dir,
    isolation,
    origin,
    get ports() {
      return ports;
    },
    getPortEndpoint: async (urlOptions) => ({ url: loopbackUrl(urlOptions) }),
    getPortUrl: async (urlOptions) => loopbackUrl(urlOptions),
    setPorts: async (next) => {
      for (const port of next) loopbackUrl({ port });
      ports = [...next];
    },
    stop,
    setNetworkPolicy: (policy) => holdOpen(() => writeNetworkPolicy(dir, policy)),
    getNetworkPolicy: () => readNetworkPolicy(dir),
    destroy: () =>
      holdOpen(async () => {
        await stop();
        await rm(dir, { recursive: true, force: true });
        await options.onDestroy?.();
      }),
    restricted: () => restrictedView,
  };
  return session;
}
