// createBridgeHarness: a CLI adapter description + settings → a HarnessV1.
// doStart applies the bootstrap recipe (idempotent), starts or reaches the
// bridge (the ladder, for resumes), and hands a BridgeSession the link. The
// session owns everything after that. It serves @ai-sdk/harness 1.0.x and the
// canary.3 contract alike (protocol/harness-v1/session.ts): a lifecycle state
// may arrive as continueFrom, as resumeFrom, or nested in a resumeFrom, and the
// sandbox may be a network sandbox session or (1.0.x) a basic SandboxSession.
import { posix } from 'node:path';
import { applyBootstrap, bridgeRecipe, recipeIdentity, type BootstrapProgress } from '../bootstrap/index.ts';
import type { HarnessV1Bootstrap } from '../protocol/harness-v1/bootstrap.ts';
import {
  isNetworkSandboxSession,
  type HarnessV1NetworkSandboxSession,
  type HarnessV1PortEndpoint,
  type HarnessV1PortOptions,
  type SandboxSession,
} from '../protocol/harness-v1/sandbox.ts';
import type { HarnessV1, HarnessV1ResumeSessionState, HarnessV1StartOptions } from '../protocol/harness-v1/session.ts';
import { MCP_ENV_V1 } from '../protocol/v1/mcp-env.ts';
import type { CliAdapter } from './adapter-kit/adapter.ts';
import { createBridgeChannel, type BridgeChannelOptions } from './channel/index.ts';
import type { JournalSettings } from './reach/bridge-process.ts';
import { reachBridge, startBridge, type BridgeLink, type PortResolver, type Rung } from './reach/ladder.ts';
import { reviveBridge, type Revived } from './reach/revive.ts';
import { execRelayConnection, execRelayUrl, requireSpawnStdin, type ExecTransportSettings } from './reach/exec-relay.ts';
import { isolationWarning, type BridgeIsolation } from './reach/bridge-isolation.ts';
import { EXIT_STATE_DIR_LOCKED } from './reach/bridge-process.ts';
import { BridgeSessionError } from './session/errors.ts';
import { HOST_SESSION_LIMITS } from './limits.ts';
import { markPhase } from './phase-marks.ts';
import { lifecycleStateSchema, parseResumeState, resumeStateSchemaFor, startStateOf, type ResumeData } from './session/resume-state.ts';
import { BridgeSession, type CheckpointPolicy, type OpenChannel, type SessionContext } from './session/session.ts';

export type BridgeHarnessSettings = {
  /** Host path of the bridge bundle (default: this package's dist/bridge.mjs). */
  readonly bridgeFile?: string;
  /**
   * Build the bridge's V8 startup snapshot in the sandbox when the recipe is applied (docs/bridge-internals.md#startup-snapshot):
   * each bridge starts faster and holds more private memory. Default false.
   */
  readonly startupSnapshot?: boolean;
  /** Where the recipe installs the bridge and CLI (default `.harness-bridge/<harnessId>` under the sandbox's working dir). */
  readonly bootstrapDir?: string;
  /** The Node binary inside the sandbox. */
  readonly nodeCommand?: string;
  /** Port the bridge listens on; default the sandbox's first exposed port, else any free port. */
  readonly bridgePort?: number;
  /** Interface the bridge binds; a remote sandbox behind a port proxy may need 0.0.0.0. */
  readonly bridgeHost?: string;
  readonly readyTimeoutMs?: number;
  readonly probeTimeoutMs?: number;
  /** Channel tuning (reconnect budget, heartbeat, queue bounds). */
  readonly channel?: Pick<BridgeChannelOptions, 'reconnectDeadlineMs' | 'backoff' | 'heartbeatMs' | 'connectTimeoutMs' | 'maxQueuedFrames'>;
  /** Record every frame of every channel to `<recordDir>/<sessionId>-<n>.ndjson`. */
  readonly recordDir?: string;
  /** Skip applying the recipe in doStart (a framework or prewarm already did). Default: apply (idempotent, cheap when applied). */
  readonly skipBootstrap?: boolean;
  /**
   * How the bridge isolates the CLI from itself (docs/security.md#settings): `mode` ('auto' default: the strongest
   * the sandbox allows), `require` (refuse to run a CLI without isolation), `cliUser`, `networkPolicyFile`, `srt`.
   * Each field given wins over what the sandbox session carries (the local provider's options).
   */
  readonly isolation?: BridgeIsolation;
  /**
   * How the host reaches a sandbox port when the sandbox session cannot say
   * (a basic SandboxSession has no getPortEndpoint/getPortUrl). For a sandbox
   * that shares this host's loopback: `({ port }) => ({ url: \`ws://127.0.0.1:${port}\` })`.
   * Without it, such a session is reached through its exec stream (spawn with stdin: the
   * exec transport, docs/remote-providers.md), and refused with HarnessCapabilityUnsupportedError
   * when its spawn gives no stdin.
   */
  readonly resolvePort?: (options: HarnessV1PortOptions) => PromiseLike<HarnessV1PortEndpoint>;
  /**
   * The exec transport over a hosted exec API (docs/remote-providers.md#hosted-exec): base64-line
   * framing when the API hands output over as strings; write batching when each stdin write is
   * billed or rate-limited. Default: bytes as they are, each write at once (docker exec, local).
   */
  readonly execTransport?: ExecTransportSettings;
  readonly onBootstrapProgress?: (progress: BootstrapProgress) => void;
  /** How long one bootstrap command may run (default 10 minutes): then it is killed and doStart fails with BootstrapError 'command-timeout', naming the command and its output. */
  readonly bootstrapCommandTimeoutMs?: number;
  /**
   * Journal bytes one turn may write before the bridge kills its CLI and the turn ends with an error
   * part naming the cap (finish raw 'capped'). Default 1 GiB; 0: no cap (docs/guarantees.md#disk-full-and-caps).
   */
  readonly maxTurnJournalBytes?: number;
  /** Journal bytes a session may hold; past it the running turn is capped and new turns are refused (journal-cap). Default: no cap. */
  readonly maxSessionJournalBytes?: number;
  /** How long a bridge whose disk is full waits for space (the CLI paused) before it exits naming ENOSPC. Default 10 minutes. */
  readonly diskFullExitMs?: number;
  /**
   * A bridge this harness starts exits after this long with no host attached and no turn running,
   * keeping its journal (the next resume takes the replay rung). Default 30 minutes (docs/guarantees.md#host-crash).
   */
  readonly idleExitMs?: number;
  /**
   * A host tool call that has had no host attached for this long is failed with an error result the
   * CLI sees. Default: it waits for a host however long (a suspended turn's call is answered later).
   */
  readonly ownerlessToolTimeoutMs?: number;
  /**
   * Called with a checkpoint (a resume state, session.checkpoint()) while turns run: at each turn start and end,
   * each host tool call or approval, and every `checkpointEveryRecords` records, after the parts of those records
   * were emitted. Persist the latest: a new host resumes from it if this one dies (docs/guarantees.md#host-crash).
   */
  readonly onCheckpoint?: (state: HarnessV1ResumeSessionState, info: { sessionId: string }) => void;
  /** Records between two checkpoints within a turn (default 1000). */
  readonly checkpointEveryRecords?: number;
};

export type BridgeHarness = HarnessV1 & {
  /** The identity of this harness's recipe (what sandbox snapshots are keyed by). */
  getRecipeIdentity(): Promise<string>;
};

export function createBridgeHarness<S>(adapter: CliAdapter<S>, settings: BridgeHarnessSettings = {}): BridgeHarness {
  let recipe: Promise<HarnessV1Bootstrap> | undefined;
  const getBootstrap = () =>
    (recipe ??= bridgeRecipe({
      harnessId: adapter.harnessId,
      ...(settings.bootstrapDir === undefined ? {} : { bootstrapDir: settings.bootstrapDir }),
      ...(settings.bridgeFile === undefined ? {} : { bridgeFile: settings.bridgeFile }),
      ...(settings.startupSnapshot === true ? { startupSnapshot: true } : {}),
      ...(adapter.install?.files ? { extraFiles: adapter.install.files } : {}),
      ...(adapter.install?.commands ? { commands: adapter.install.commands } : {}),
    }));
  let recordCount = 0;

  return {
    specificationVersion: 'harness-v1',
    harnessId: adapter.harnessId,
    builtinTools: adapter.builtinTools,
    supportsBuiltinToolApprovals: adapter.supportsBuiltinToolApprovals ?? false,
    lifecycleStateSchema,
    resumeStateSchema: resumeStateSchemaFor(adapter.harnessId),
    getBootstrap,
    getRecipeIdentity: async () => recipeIdentity(await getBootstrap()),

    async doStart(options: HarnessV1StartOptions) {
      markPhase('start');
      const box = options.sandboxSession;
      const network = isNetworkSandboxSession(box) ? box : undefined;
      const sandbox = network ? network.restricted() : box;
      const portEndpoint = portResolver(box, settings.resolvePort);
      if (!portEndpoint) await requireSpawnStdin(sandbox, adapter.harnessId);
      const startState = startStateOf(options);
      const resume: ResumeData | undefined = startState ? parseResumeState(adapter.harnessId, startState) : undefined;
      const defaultWorkingDirectory = await workingDirectoryOf(box, sandbox, options.abortSignal);
      const bootstrap = await getBootstrap();
      const identity = recipeIdentity(bootstrap);
      if (!settings.skipBootstrap) {
        await applyBootstrap(sandbox, bootstrap, {
          ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
          ...(settings.onBootstrapProgress ? { onProgress: settings.onBootstrapProgress } : {}),
          ...(settings.bootstrapCommandTimeoutMs === undefined ? {} : { commandTimeoutMs: settings.bootstrapCommandTimeoutMs }),
        });
      }
      markPhase('bootstrap');
      const bootstrapDir = absolute(defaultWorkingDirectory, bootstrap.bootstrapDir);
      const stateDir = resume?.stateDir ?? defaultStateDir(defaultWorkingDirectory, adapter.harnessId, options.sessionId);
      // No port to reach: the exec transport, a relay over the sandbox's spawn stdio (docs/remote-providers.md#exec-transport).
      const relay = {
        sandbox,
        nodeCommand: settings.nodeCommand ?? 'node',
        bridgeFile: posix.join(bootstrapDir, 'bridge.mjs'),
        ...(settings.execTransport ? { transport: settings.execTransport } : {}),
      };
      const endpoint: PortResolver = portEndpoint ?? (async (port) => ({ url: execRelayUrl(port), createConnection: execRelayConnection(relay, port) }));
      const reach = {
        endpoint,
        sandbox,
        probeTimeoutMs: settings.probeTimeoutMs ?? HOST_SESSION_LIMITS.probeTimeoutMs,
        spawn: {
          nodeCommand: settings.nodeCommand ?? 'node',
          bridgeFile: posix.join(bootstrapDir, 'bridge.mjs'),
          stateDir,
          port: settings.bridgePort ?? network?.ports[0] ?? 0,
          ...(settings.bridgeHost === undefined ? {} : { host: settings.bridgeHost }),
          recipeIdentity: identity,
          readyTimeoutMs: settings.readyTimeoutMs ?? HOST_SESSION_LIMITS.readyTimeoutMs,
          ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
          ...(settings.isolation ? { isolation: settings.isolation } : {}),
          ...journalSettings(settings),
          ...(settings.idleExitMs === undefined ? {} : { idleExitMs: positiveMs('idleExitMs', settings.idleExitMs) }),
          ...(settings.ownerlessToolTimeoutMs === undefined ? {} : { ownerlessToolTimeoutMs: positiveMs('ownerlessToolTimeoutMs', settings.ownerlessToolTimeoutMs) }),
        },
      };
      let link: BridgeLink;
      const rungs: Rung[] = [];
      if (resume) {
        const reached = await reachBridge({ ...reach, journalId: resume.journalId });
        link = reached.link;
        rungs.push(reached.rung);
      } else {
        link = await startBridge(reach).catch((error: unknown) => {
          // A live bridge holds this session's state dir: its host is gone or elsewhere, and starting
          // afresh would fork the session. Resuming from a state is the way in (docs/guarantees.md#host-crash).
          if ((error as { exitCode?: number }).exitCode !== EXIT_STATE_DIR_LOCKED) throw error;
          throw new BridgeSessionError(
            'session-live',
            `session ${options.sessionId} already has a live bridge (state dir ${stateDir}); resume it with resumeFrom: a checkpoint (onCheckpoint, session.checkpoint()) or a detach/suspend state`,
            error,
          );
        });
      }
      markPhase('reached');
      // A CLI that runs without isolation can act as the host (docs/security.md): said at start, every start.
      const unisolated = isolationWarning(link.hello);
      if (unisolated !== undefined) {
        options.observability?.report?.({
          level: 'warn',
          message: unisolated,
          subsystem: 'harness-bridge.isolation',
          kind: 'event',
          attrs: { isolation: link.hello.isolation },
          sessionId: options.sessionId,
          timestamp: Date.now(),
        });
      }
      if (link.hello.recipeIdentity !== undefined && link.hello.recipeIdentity !== identity) {
        options.observability?.report?.({
          level: 'warn',
          message: `stale bridge: it was installed by recipe ${link.hello.recipeIdentity.slice(0, 12)}…, this harness expects ${identity.slice(0, 12)}…`,
          subsystem: 'harness-bridge.bootstrap',
          kind: 'event',
          attrs: { bridgeVersion: link.hello.bridgeVersion, running: link.hello.recipeIdentity, expected: identity },
          sessionId: options.sessionId,
          timestamp: Date.now(),
        });
      }
      // The bridge the session's channels reach: this one until a revival replaces it (a dead bridge, host/reach/revive.ts).
      let current = link;
      const revive = async (signal: AbortSignal, onRevived: (revived: Revived) => void) => {
        const revived = await reviveBridge(reach, signal);
        if (!revived) return null;
        current = revived.link;
        onRevived(revived);
        return revived.link;
      };
      const openChannel: OpenChannel = (channelOptions) => {
        const channel = createBridgeChannel({
          ...settings.channel,
          url: channelOptions.url,
          headers: current.headers,
          ...(current.createConnection ? { createConnection: current.createConnection } : {}),
          ...(current.adoptSocket && channelOptions.url === current.url ? { adoptSocket: current.adoptSocket } : {}),
          revive: (_dead, signal) => revive(signal, channelOptions.onRevived),
          token: channelOptions.token,
          cursor: channelOptions.cursor,
          journalId: channelOptions.journalId,
          owner: channelOptions.owner,
          ...(settings.recordDir
            ? { recordTo: posix.join(settings.recordDir, `${safeName(options.sessionId)}-${++recordCount}.ndjson`) }
            : {}),
          onRecords: (records) => channelOptions.onRecords(records),
          ...(options.observability?.report ? { onDiagnostic: options.observability.report } : {}),
        });
        void channel.closed.then((error) => {
          if (error) channelOptions.onTerminal(error);
        });
        return channel;
      };
      const context: SessionContext<S> = {
        adapter,
        sessionId: options.sessionId,
        sessionWorkDir: options.sessionWorkDir,
        stateDir,
        bootstrapDir,
        permissionMode: options.permissionMode ?? 'allow-all',
        skills: options.skills ?? [],
        observability: options.observability,
        openChannel,
        sandbox,
        mcp: MCP_ENV_V1, // the bridge serves the endpoint and puts its URL/token in the CLI's env under these names
        ...(settings.onCheckpoint ? { checkpoints: checkpointPolicy(settings.onCheckpoint, options.sessionId, settings.checkpointEveryRecords) } : {}),
      };
      const session = new BridgeSession(context, {
        link,
        isResume: resume !== undefined,
        ...(resume ? { resume } : {}),
        rungs,
      });
      // canary.3 passes skills once, for the session: the CLI can see them from the start.
      if (!resume && context.skills.length > 0) await session.applySkills(context.skills);
      if (!resume) session.expectFirstTurn();
      return session;
    },
  };
}

/** Per-session bridge state lives beside the CLI's work dir, not inside it: the CLI never sees its journal. */
export function defaultStateDir(defaultWorkingDirectory: string, harnessId: string, sessionId: string): string {
  return posix.join(defaultWorkingDirectory, '.harness-bridge', 'sessions', `${harnessId}-${safeName(sessionId)}`);
}

/**
 * How the host reaches the bridge's port: the session's getPortEndpoint (1.0.x), its getPortUrl (canary.3), or
 * settings.resolvePort; undefined when none can say (the exec transport then carries the connection).
 */
function portResolver(box: HarnessV1NetworkSandboxSession | SandboxSession, fallback: BridgeHarnessSettings['resolvePort']): PortResolver | undefined {
  const session = box as Partial<Pick<HarnessV1NetworkSandboxSession, 'getPortEndpoint' | 'getPortUrl'>>;
  if (typeof session.getPortEndpoint === 'function') {
    const getPortEndpoint = session.getPortEndpoint;
    return async (port) => getPortEndpoint({ port, protocol: 'ws' });
  }
  if (typeof session.getPortUrl === 'function') {
    const getPortUrl = session.getPortUrl;
    return async (port) => ({ url: await getPortUrl({ port, protocol: 'ws' }) });
  }
  if (fallback) return async (port) => fallback({ port, protocol: 'ws' });
  return undefined;
}

/** The sandbox's default working directory: the network session says; a basic session is asked (`pwd`), as the framework does. */
async function workingDirectoryOf(box: HarnessV1NetworkSandboxSession | SandboxSession, sandbox: SandboxSession, abortSignal: AbortSignal | undefined): Promise<string> {
  const known = (box as { defaultWorkingDirectory?: unknown }).defaultWorkingDirectory;
  if (typeof known === 'string' && known.startsWith('/')) return known;
  const result = await sandbox.run({ command: 'pwd', ...(abortSignal ? { abortSignal } : {}) });
  const cwd = result.stdout.trim();
  if (result.exitCode !== 0 || !cwd.startsWith('/')) {
    throw new Error(`cannot tell the sandbox's working directory: pwd exited ${result.exitCode} with ${JSON.stringify(cwd || result.stderr.trim())}`);
  }
  return cwd === '/' ? cwd : cwd.replace(/\/+$/, '');
}

/** The journal caps and the disk-full wait, checked here so a bad value fails createSession, not the bridge's start. */
function journalSettings(settings: BridgeHarnessSettings): { journal?: JournalSettings } {
  const journal: { -readonly [K in keyof JournalSettings]: JournalSettings[K] } = {};
  for (const name of ['maxTurnJournalBytes', 'maxSessionJournalBytes', 'diskFullExitMs'] as const) {
    const value = settings[name];
    if (value === undefined) continue;
    const floor = name === 'diskFullExitMs' ? 1 : 0;
    if (!Number.isSafeInteger(value) || value < floor) throw new RangeError(`createBridgeHarness: ${name} must be an integer >= ${floor}, got ${value}`);
    journal[name] = value;
  }
  return Object.keys(journal).length === 0 ? {} : { journal };
}

function checkpointPolicy(
  onCheckpoint: NonNullable<BridgeHarnessSettings['onCheckpoint']>,
  sessionId: string,
  everyRecords: number | undefined,
): CheckpointPolicy {
  const every = everyRecords ?? 1000;
  if (!Number.isSafeInteger(every) || every <= 0) throw new RangeError(`createBridgeHarness: checkpointEveryRecords must be a positive integer, got ${every}`);
  return { onCheckpoint: (state) => onCheckpoint(state, { sessionId }), everyRecords: every };
}

function positiveMs(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`createBridgeHarness: ${name} must be a positive integer (ms), got ${value}`);
  return value;
}

function absolute(base: string, path: string): string {
  return path.startsWith('/') ? path : posix.join(base, path);
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
}
