// The bridge after its ready line (stage 2 of main.ts): pino, the ws server,
// the zod protocol, the supervisor and the MCP endpoint. main.ts (stage 1)
// prints the ready line with only node builtins, auth, the journal and the
// turn log loaded, then loads this module — in dist/bridge.mjs it is a
// separately built bundle embedded in the same file as a string and compiled
// only now (after-ready-loader.ts), so Node never parses it before the ready
// line. Connections that arrived meanwhile were held by main.ts and are handed
// to the server once it is attached; early log calls were queued.
import './young-generation.ts'; // first: caps the young generation before the rest allocates
import type { Server, Socket } from 'node:net';
import type { LogLevel, RecordDraft } from '../protocol/v1/index.ts';
import type { HostToolSpec } from '../protocol/v1/index.ts';
import { adoptSurvivor } from './survive/adopt-survivor.ts';
import { inheritedMcpEnv, keeperDir, removeStaleKeeperDirs } from './survive/kept-process.ts';
import type { Journal } from './journal/journal.ts';
import type { Adopted } from './main.ts';
import { createBridgeLogger, type BridgeLogger, type Logger } from './logger.ts';
import { McpEndpoint, withMcp } from './mcp-endpoint.ts';
import { createBridgeServer, type BridgeServer } from './server/server.ts';
import { Supervisor } from './supervisor/supervisor.ts';
import type { TurnLog } from './journal/turn-log.ts';
import { BRIDGE_VERSION } from './version.ts';

export type EarlyLogCall = { level: 'info' | 'warn' | 'fatal'; obj: object; msg: string };

/** What main.ts hands over after the ready line. */
export type AfterReadyContext = {
  readonly stateDir: string;
  readonly host: string;
  readonly boundPort: number;
  readonly recipeIdentity?: string;
  readonly token: string;
  readonly bridgeId: string;
  /** The TCP listener main.ts bound (connections accepted paused). */
  readonly listener: Server;
  readonly journal: Journal;
  readonly turns: TurnLog;
  /** journal.append + turn log + output backpressure; null once the journal is closed. */
  readonly record: (draft: RecordDraft) => number | null;
  /** The fdatasync main.ts started right after the ready line (a fresh journal's creation included). */
  readonly synced: Promise<void>;
  readonly unfinishedTurnId: string | undefined;
  /** A surviving CLI (launch `survive`) to re-adopt, journaled in this bridge's `bridge-start`. */
  readonly adopted?: Adopted;
  /** Log calls made before the logger existed. */
  readonly early: EarlyLogCall[];
  /** Connections that arrived before the server was attached (paused, unread), and the listener that holds them. */
  readonly held: Socket[];
  readonly hold: (socket: Socket) => void;
  /** main.ts's live references: onDurable reaches the server, backpressure the supervisor, crashes the logger. */
  readonly wiring: {
    server: BridgeServer | null;
    supervisor: Supervisor | null;
    logger: BridgeLogger | null;
    log: Logger | null;
    /** A SIGTERM/SIGINT that arrived before the server existed. */
    stopSignal: NodeJS.Signals | null;
  };
  readonly closeJournal: () => Promise<void>;
  readonly removeStateDir: () => void;
};

const logLevels: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

export async function runAfterReady(ctx: AfterReadyContext): Promise<void> {
  const { journal, wiring } = ctx;
  const envLevel = process.env.HARNESS_BRIDGE_LOG_LEVEL ?? 'info';
  const level = (logLevels as readonly string[]).includes(envLevel) ? (envLevel as LogLevel) : 'info';
  const logger = createBridgeLogger({ stateDir: ctx.stateDir, token: ctx.token, level });
  wiring.logger = logger;
  const mainLog = logger.child('main');
  wiring.log = mainLog;
  for (const call of ctx.early.splice(0)) mainLog[call.level](call.obj, call.msg);
  await ctx.synced;
  mainLog.info(
    { journalId: journal.journalId, lastSeq: journal.durableSeq, recovered: journal.recovered, interrupted: ctx.unfinishedTurnId },
    'journal open',
  );

  const supervisor = new Supervisor({
    emit: ctx.record,
    log: logger.child('supervisor'),
    stateDir: ctx.stateDir,
    afterDurable: (fn) => void journal.flush().then(fn, () => undefined),
  });
  wiring.supervisor = supervisor;
  let adoptedTools: HostToolSpec[] = [];
  let inherited: { token: string; port: number } | null = null;
  if (ctx.adopted !== undefined) {
    mainLog.info({ adopted: ctx.adopted }, 'adopting a surviving CLI');
    inherited = inheritedMcpEnv(keeperDir(ctx.stateDir, ctx.adopted.keeper));
    ({ tools: adoptedTools } = await adoptSurvivor({ stateDir: ctx.stateDir, adopted: ctx.adopted, journal, supervisor, record: ctx.record }));
  }
  // Keeper dirs a crash left behind (exit journaled but the dir not yet removed, or a keeper that died).
  const stale = await removeStaleKeeperDirs(ctx.stateDir, ctx.adopted?.keeper);
  if (stale.length > 0) mainLog.info({ keepers: stale }, 'removed stale keeper dirs');
  // Host tools for the CLI (DESIGN D6): its own token, 127.0.0.1 only; the CLI learns both from env (MCP_ENV_V1).
  const mcp = new McpEndpoint({
    record: ctx.record,
    nextSeq: () => journal.lastSeq + 1,
    flush: () => journal.flush(),
    turnId: () => supervisor.turnId,
    log: logger.child('mcp'),
    ...(inherited === null ? {} : { token: inherited.token, port: inherited.port }),
  });
  mcp.addTools(adoptedTools);
  await mcp.listen();
  const running = await createBridgeServer({
    host: ctx.host,
    port: ctx.boundPort,
    listener: ctx.listener,
    token: ctx.token,
    bridgeId: ctx.bridgeId,
    bridgeVersion: BRIDGE_VERSION,
    ...(ctx.recipeIdentity === undefined ? {} : { recipeIdentity: ctx.recipeIdentity }),
    journal,
    supervisor: withMcp(supervisor, mcp),
    turns: ctx.turns,
    logger,
    lifecycle: {
      async stop(graceMs) {
        await mcp.close();
        await supervisor.stop(graceMs);
        await ctx.closeJournal();
      },
      async destroy() {
        await mcp.close();
        await supervisor.stop(0);
        await ctx.closeJournal();
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
  wiring.server = running;
  ctx.listener.off('connection', ctx.hold);
  for (const socket of ctx.held.splice(0)) ctx.listener.emit('connection', socket);
  mainLog.info({ port: ctx.boundPort }, 'ready');
  if (wiring.stopSignal !== null) void running.shutdown('stop');
}
