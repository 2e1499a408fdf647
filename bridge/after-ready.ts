// The bridge after its ready line (stage 2 of main.ts): pino, the ws server, the zod protocol,
// the supervisor and the MCP endpoint, kept out of stage 1 so that Node does not even parse them
// before the ready line (docs/bridge-internals.md#two-stage-start). Here the pieces stage 1 handed
// over (after-ready-context.ts) get what they were waiting for: the EarlyLog its logger, the
// RecordPath its supervisor (backpressure) and then its server (durable batches), StopSignals the
// server; the held connections go to the server last.
import './young-generation.ts'; // first: caps the young generation before the rest allocates
import type { LogLevel } from '../protocol/v1/index.ts';
import type { HostToolSpec } from '../protocol/v1/index.ts';
import type { AfterReadyContext } from './after-ready-context.ts';
import { adoptSurvivor } from './survive/adopt-survivor.ts';
import { keeperDir, keeperRelayPort, removeStaleKeeperDirs } from './survive/keeper-dir.ts';
import type { AdoptedCall } from './mcp/relayed-calls.ts';
import { createBridgeLogger } from './logger.ts';
import { MemoryRelease } from './memory-release.ts';
import { McpEndpoint } from './mcp/endpoint.ts';
import { withMcp } from './mcp/with-mcp.ts';
import { ownerPolicyFromEnv } from './server/owner-watch.ts';
import { createBridgeServer } from './server/server.ts';
import { Supervisor } from './supervisor/supervisor.ts';
import { registerBridgePorts } from './jail/bridge-ports.ts';
import { DEFAULT_SESSION_PIDS_MAX, openNprocCap, openPidsCap } from './jail/pids-cap.ts';
import { SESSION_UID_BASE, SESSION_UID_SLOTS } from './jail/session-uid.ts';
import { resolveIsolation } from './jail/isolation.ts';
import { modeHasNamespace } from './jail/cli-jail.ts';
import { endJailHelper } from './jail/early-helper.ts';
import { namespaceSupport } from './jail/srt.ts';
import { defaultPolicyFile, PolicySource } from './jail/policy.ts';
import { MEMORY_RELEASE_LIMITS } from './limits.ts';
import { BRIDGE_VERSION } from './version.ts';

/** Egress tunnel mode (`--egress-tunnel`), loaded through stage 2 because it validates with zod (main.ts). */
export { runEgressForwarder } from './tunnel/egress-forwarder.ts';

// Keeper mode loads this stage for a namespaced kept CLI's egress proxy (survive/keeper.ts).

const logLevels: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

export async function runAfterReady(ctx: AfterReadyContext): Promise<void> {
  const { recordPath } = ctx;
  const { journal, record } = recordPath;
  const envLevel = process.env.HARNESS_BRIDGE_LOG_LEVEL ?? 'info';
  const level = (logLevels as readonly string[]).includes(envLevel) ? (envLevel as LogLevel) : 'info';
  const logger = createBridgeLogger({ stateDir: ctx.stateDir, token: ctx.token, level });
  // Idle exit and owner-less tool calls (server/owner-watch.ts), set by the host kit at spawn; not passed on to CLIs.
  const ownerPolicy = ownerPolicyFromEnv(process.env);
  delete process.env.HARNESS_BRIDGE_IDLE_EXIT_MS;
  delete process.env.HARNESS_BRIDGE_OWNERLESS_TOOL_MS;
  const mainLog = ctx.log.loaded(logger);
  await ctx.synced;
  mainLog.info(
    { journalId: journal.journalId, lastSeq: journal.durableSeq, recovered: journal.recovered, interrupted: ctx.unfinishedTurnId },
    'journal open',
  );

  // Where the CLI is kept from the bridge (docs/security.md): decided before any CLI is spawned or adopted,
  // with the network policy its egress proxy enforces (read, watched, acknowledged to policy writers).
  const jailLog = logger.child('jail');
  const bridgeFile = process.argv[1]!;
  const policy = new PolicySource({ file: ctx.jail.networkPolicy ?? defaultPolicyFile(ctx.stateDir), bridgeId: ctx.bridgeId, log: jailLog });
  const jail = await resolveIsolation({
    requested: ctx.jail.requested,
    required: ctx.jail.required,
    cliUser: ctx.jail.cliUser,
    stateDir: ctx.stateDir,
    bridgeFile,
    namespace: async (user) =>
      namespaceSupport({ user, srt: ctx.jail.srt, stateDir: ctx.stateDir, bridgeFile, policyFile: policy.file, sessionsRoot: ctx.jail.sessionsRoot, early: await ctx.earlyJailHelper, log: jailLog }),
    policy: () => policy.reload(),
    log: jailLog,
  });
  // The helper stage 1 started serves a namespace only (srt.ts adopted it): without one, it goes.
  if (!modeHasNamespace(jail.report.mode)) void ctx.earlyJailHelper.then((child) => child && endJailHelper(child));
  // The session's CLIs under a process cap of their own (a root bridge: the pids controller, else an rlimit on the session's uid): before any spawn or adoption.
  const pidsMax = Number(process.env.HARNESS_BRIDGE_PIDS_MAX ?? DEFAULT_SESSION_PIDS_MAX);
  delete process.env.HARNESS_BRIDGE_PIDS_MAX;
  if (jail.report.mode !== 'none') {
    const max = Number.isSafeInteger(pidsMax) && pidsMax > 0 ? pidsMax : DEFAULT_SESSION_PIDS_MAX;
    const pids = openPidsCap(ctx.stateDir, max);
    // Without the pids controller, a uid of the session's own still gives a cap of its own: RLIMIT_NPROC on it.
    const sessionUid = jail.report.cliUid !== undefined && jail.report.cliUid >= SESSION_UID_BASE && jail.report.cliUid < SESSION_UID_BASE + SESSION_UID_SLOTS;
    const nproc = pids.ok || !sessionUid ? undefined : openNprocCap(max);
    if (pids.ok) jailLog.info({ cgroup: pids.cap.dir, max: pids.cap.max }, 'jail: the session\'s CLIs run under a pids cap');
    else if (nproc?.ok) jailLog.info({ rlimit: 'nproc', uid: jail.report.cliUid, max, cgroup: pids.reason }, 'jail: the session\'s CLIs run under a process cap on their own uid');
    else jailLog.info({ reason: nproc ? `${pids.reason}; ${nproc.reason}` : pids.reason }, 'jail: no pids cap for the session\'s CLIs');
  }
  const egress = jail.egress;
  if (egress) {
    egress.setPolicy(policy.current.policy);
    policy.onChange((state) => egress.setPolicy(state.policy));
    egress.addBridgePort(ctx.boundPort);
  }
  policy.start(jail.report.networkPolicy, jail.report.mode);
  // The start's garbage and a burst's young generation go back to the system once output pauses.
  const memory = new MemoryRelease(MEMORY_RELEASE_LIMITS);
  const supervisor = new Supervisor({
    emit: (draft) => {
      memory.touch();
      record(draft);
    },
    log: logger.child('supervisor'),
    stateDir: ctx.stateDir,
    afterDurable: (fn) => void journal.flush().then(fn, () => undefined),
    jail,
  });
  recordPath.connectSupervisor(supervisor); // before adoption: an adopted CLI's output is read from here on
  let adoptedTools: HostToolSpec[] = [];
  let inherited: { token: string; port: number } | null = null;
  let adoptedCalls: AdoptedCall[] = [];
  let relayPort: number | undefined;
  if (ctx.adopted !== undefined) {
    mainLog.info({ adopted: ctx.adopted }, 'adopting a surviving CLI');
    ({ tools: adoptedTools, calls: adoptedCalls, mcp: inherited } = await adoptSurvivor({ stateDir: ctx.stateDir, adopted: ctx.adopted, journal, supervisor, record }));
    relayPort = keeperRelayPort(keeperDir(ctx.stateDir, ctx.adopted.keeper));
    // The kept CLI's MCP URL names its keeper's relay: this bridge needs the token, not the port.
    if (relayPort !== undefined && inherited !== null) inherited = { token: inherited.token, port: 0 };
  }
  // Keeper dirs a crash left behind (exit journaled but the dir not yet removed, or a keeper that died).
  const stale = await removeStaleKeeperDirs(ctx.stateDir, ctx.adopted?.keeper);
  if (stale.length > 0) mainLog.info({ keepers: stale }, 'removed stale keeper dirs');
  // Host tools for the CLI (docs/design.md#d6): its own token, 127.0.0.1 only; the CLI learns both from env (MCP_ENV_V1).
  const mcp = new McpEndpoint({
    record,
    nextSeq: () => journal.lastSeq + 1,
    flush: () => journal.flush(),
    turnId: () => supervisor.turnId,
    log: logger.child('mcp'),
    ...(inherited === null ? {} : { token: inherited.token, ...(inherited.port > 0 ? { port: inherited.port } : {}) }),
  });
  mcp.setTurnTools(adoptedTools);
  await mcp.listen();
  egress?.setMcpPort(mcp.port); // the CLI's host tools: reachable through the egress proxy whatever the policy
  // Every session's egress proxy on this machine refuses these two ports (bridge-ports.ts), whatever its policy.
  registerBridgePorts([ctx.boundPort, mcp.port]);
  const running = await createBridgeServer({
    host: ctx.host,
    port: ctx.boundPort,
    listener: ctx.listener,
    token: ctx.token,
    bridgeId: ctx.bridgeId,
    bridgeVersion: BRIDGE_VERSION,
    ...(ctx.recipeIdentity === undefined ? {} : { recipeIdentity: ctx.recipeIdentity }),
    journal,
    isolation: jail.report,
    supervisor: withMcp(supervisor, mcp),
    turns: recordPath.turns,
    logger,
    policy: ownerPolicy,
    record,
    lifecycle: {
      async stop(graceMs) {
        memory.stop();
        await mcp.close();
        await supervisor.stop(graceMs);
        policy.stop();
        await egress?.close();
        jail.close?.();
        await recordPath.close();
      },
      async destroy() {
        memory.stop();
        await mcp.close();
        await supervisor.stop(0);
        policy.stop();
        await egress?.close();
        jail.close?.();
        await recordPath.close({ discardUnwritten: true }); // the file goes anyway: a full disk must not keep destroy from freeing it
        ctx.removeStateDir();
      },
      exit(code) {
        mainLog.info({ code }, 'exiting');
        logger.flushSync();
        process.exit(code);
      },
    },
  });
  mcp.bindCalls(running.pendingCalls); // host tool-result frames reach waiting calls through the server's routing
  mcp.adoptCalls(adoptedCalls); // before any host frame is read: a re-delivered answer finds its call
  for (const call of adoptedCalls) if (call.result !== undefined) running.answeredCalls.add(call.callId, call.result);
  if (relayPort !== undefined) supervisor.relayMcpTo(mcp.port); // the keeper's held requests come here now
  recordPath.connectServer(running);
  ctx.listener.off('connection', ctx.hold);
  for (const socket of ctx.held.splice(0)) ctx.listener.emit('connection', socket);
  mainLog.info({ port: ctx.boundPort }, 'ready');
  setImmediate(() => supervisor.startKeeperAhead()); // after the held connections are handed to the server
  memory.touch();
  ctx.stopSignals.connect(running);
}
