// Entry of the bridge daemon (bundled into dist/bridge.mjs). Only wiring:
// arguments, state dir, token, logger, journal (+ the records a restart owes:
// interrupted turn, bridge-start), supervisor, server, the ready line, process
// signals. Each concern lives in its own module.
//
//   node bridge.mjs --state-dir DIR [--port N] [--host H] [--recipe-identity ID]
//
// The token comes from HARNESS_BRIDGE_TOKEN or DIR/token (auth.ts), never argv.
//
// Start-up order (cold start is measured against Node's own floor): the ready
// line needs only the listening socket and the open journal, so only node
// builtins, auth, journal and turns load before it. pino, ws, the zod
// protocol, the supervisor and the MCP endpoint are dynamic imports — esbuild
// keeps them in this one file but evaluates them only when imported, right
// after the ready line. Upgrades that arrive meanwhile are held and handed to
// the server once it is attached; log lines are queued for the logger.
import { randomUUID } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { LogLevel, RecordDraft } from '../protocol/v1/index.ts';
import { loadToken } from './auth.ts';
import { Journal } from './journal.ts';
import { SERVER_LIMITS } from './limits.ts';
import type { BridgeLogger, Logger } from './logger.ts';
import type { BridgeServer } from './server.ts';
import type { Supervisor } from './supervisor.ts';
import { TurnLog, recoverTurns } from './turns.ts';
import { BRIDGE_VERSION } from './version.ts';

const usage = 'usage: node bridge.mjs --state-dir DIR [--port N] [--host H] [--recipe-identity ID]';
const readyFileName = 'bridge.json';

/** sysexits: bad usage, bad configuration, internal software error. */
const exitUsage = 64;
const exitConfig = 78;
const exitSoftware = 70;

type BridgeArgs = { stateDir: string; port: number; host: string; recipeIdentity?: string };

function parseArgs(argv: readonly string[]): { ok: true; args: BridgeArgs } | { ok: false; message: string } {
  let stateDir: string | undefined;
  let port = 0;
  let host = '127.0.0.1';
  let recipeIdentity: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    if (flag === '--token') return { ok: false, message: 'the token is never taken from argv: set HARNESS_BRIDGE_TOKEN or write DIR/token (0600)' };
    if (!['--state-dir', '--port', '--host', '--recipe-identity'].includes(flag)) return { ok: false, message: `unknown argument ${flag}` };
    if (value === undefined || value.startsWith('--')) return { ok: false, message: `${flag} needs a value` };
    i++;
    if (flag === '--state-dir') stateDir = value;
    else if (flag === '--host') host = value;
    else if (flag === '--recipe-identity') recipeIdentity = value;
    else {
      port = Number(value);
      if (!/^\d+$/.test(value) || port > 65_535) return { ok: false, message: `--port must be 0-65535, got ${value}` };
    }
  }
  if (stateDir === undefined || stateDir === '') return { ok: false, message: '--state-dir is required' };
  return { ok: true, args: { stateDir, port, host, ...(recipeIdentity === undefined ? {} : { recipeIdentity }) } };
}

function fail(code: number, message: string): never {
  process.stderr.write(`harness-bridge: ${message}\n`);
  process.exit(code);
}

/** Writes `text` to `path` with mode 0600, atomically (a reader never sees half a file). */
function writePrivateFile(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, path);
}

const logLevels: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

type LogCall = { level: 'info' | 'warn' | 'fatal'; obj: object; msg: string };

async function main(): Promise<void> {
  const parsed = parseArgs(process.argv.slice(2));
  if (!parsed.ok) fail(exitUsage, `${parsed.message}\n${usage}`);
  const { stateDir, port, host, recipeIdentity } = parsed.args;

  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    chmodSync(stateDir, 0o700);
  } catch (error) {
    fail(exitConfig, `cannot create state dir ${stateDir}: ${(error as Error).message}`);
  }
  const token = loadToken(stateDir, process.env);
  if (!token.ok) fail(exitConfig, token.message);
  try {
    closeSync(openSync(join(stateDir, 'bridge.log'), 'a', 0o600)); // exists (0600) from the ready line on; pino appends once loaded
  } catch {
    // the logger reports an unwritable log file once it loads; not a reason to refuse to start
  }

  // Until pino is loaded (right after the ready line) log calls are queued.
  let logger: BridgeLogger | null = null;
  let log: Logger | null = null;
  const early: LogCall[] = [];
  const say = (level: LogCall['level'], obj: object, msg: string): void => {
    if (log !== null) log[level](obj, msg);
    else early.push({ level, obj, msg });
  };
  installCrashHandlers(() => logger);
  const bridgeId = randomUUID();
  say('info', { bridgeId, version: BRIDGE_VERSION, tokenSource: token.source }, 'starting');

  // Bind first, in parallel with the journal; upgrades wait here until the server is attached.
  const http = createServer();
  const held: Array<[IncomingMessage, Duplex, Buffer]> = [];
  const hold = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => {}); // a client that gives up while held; the server attaches its own handler
    held.push([request, socket, head]);
  };
  http.on('upgrade', hold);
  const listening = new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });

  // The journal calls onDurable from its first write on; the server and supervisor exist by then.
  let server: BridgeServer | null = null;
  let supervisor: Supervisor | null = null;
  let outputPaused = false;
  const maxPending = SERVER_LIMITS.maxJournalPendingBytes;
  const fatal = (error: Error): never => {
    say('fatal', { err: error }, 'journal write failed; exiting (continuing would let seqs diverge from disk)');
    logger?.flushSync();
    if (logger === null) process.stderr.write(`harness-bridge: journal write failed: ${error.message}\n`);
    process.exit(exitSoftware);
  };
  const journal = await Journal.open({
    stateDir,
    onDurable: (batch) => {
      server?.onDurable(batch);
      if (outputPaused && journal.pendingBytes <= maxPending / 2) {
        outputPaused = false;
        supervisor?.resume();
      }
    },
    onFatal: fatal,
  });
  const turns = new TurnLog(SERVER_LIMITS);
  const unreadable = await recoverTurns(turns, journal.read(1, journal.durableSeq, SERVER_LIMITS.maxReplayBatchRecords));
  if (unreadable > 0) say('warn', { unreadable }, 'journal lines that looked like turn records did not parse');

  let journalClosed = false;
  const record = (draft: RecordDraft): number | null => {
    if (journalClosed) {
      say('warn', { kind: draft.kind, turnId: draft.turnId }, 'record after the journal closed; dropped');
      return null;
    }
    const seq = journal.append(draft);
    turns.observe(draft, seq);
    if (!outputPaused && journal.pendingBytes > maxPending) {
      outputPaused = true; // the disk is behind the CLI: stop reading its output until the queue halves
      supervisor?.pause();
    }
    return seq;
  };

  const unfinished = turns.unfinished;
  if (unfinished !== undefined) {
    record({
      kind: 'turn-end',
      turnId: unfinished.turnId,
      data: { reason: 'interrupted', message: 'the bridge running this turn exited before the turn ended' },
    });
  }
  record({ kind: 'bridge-start', turnId: null, data: { bridgeId, version: BRIDGE_VERSION, recovered: { ...journal.recovered } } });
  // Written (page cache) before the ready line; the fdatasync runs right after it. A host sees a
  // record only once written either way; only a power loss in those milliseconds can lose them.
  await journal.flush();
  await listening;

  const address = http.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const ready = { type: 'bridge-ready', port: boundPort, bridgeId, journalId: journal.journalId, version: BRIDGE_VERSION, pid: process.pid };
  const readyLine = JSON.stringify(ready);
  writePrivateFile(join(stateDir, readyFileName), `${readyLine}\n`);
  // The bridge outlives the host that spawned it (cross-process resume): once that host is gone
  // its stdout/stderr pipes are broken, and a later write (a Node warning, a last-gasp message)
  // must not turn EPIPE into an uncaught exception that kills the bridge and its CLI.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  process.stdout.write(`${readyLine}\n`);

  // A signal before the server is attached stops the bridge once it is.
  let stopSignal: NodeJS.Signals | null = null;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      say('info', { signal }, 'signal: stopping');
      if (server !== null) void server.shutdown('stop');
      else stopSignal ??= signal;
    });
  }
  const synced = journal.sync().catch((error: unknown) => fatal(error instanceof Error ? error : new Error(String(error))));

  const [{ createBridgeLogger }, { createBridgeServer }, { Supervisor }, { McpEndpoint, withMcp }] = await Promise.all([
    import('./logger.ts'),
    import('./server.ts'),
    import('./supervisor.ts'),
    import('./mcp.ts'),
  ]);
  const envLevel = process.env.HARNESS_BRIDGE_LOG_LEVEL ?? 'info';
  const level = (logLevels as readonly string[]).includes(envLevel) ? (envLevel as LogLevel) : 'info';
  logger = createBridgeLogger({ stateDir, token: token.token, level });
  const mainLog = logger.child('main');
  log = mainLog;
  for (const call of early.splice(0)) mainLog[call.level](call.obj, call.msg);
  await synced;
  mainLog.info({ journalId: journal.journalId, lastSeq: journal.durableSeq, recovered: journal.recovered, interrupted: unfinished?.turnId }, 'journal open');

  const runningSupervisor = new Supervisor({ emit: record, log: logger.child('supervisor') });
  supervisor = runningSupervisor;
  // Host tools for the CLI (DESIGN D6): its own token, 127.0.0.1 only; the CLI learns both from env (MCP_ENV_V1).
  const mcp = new McpEndpoint({
    record,
    nextSeq: () => journal.lastSeq + 1,
    flush: () => journal.flush(),
    turnId: () => runningSupervisor.turnId,
    log: logger.child('mcp'),
  });
  await mcp.listen();
  const closeJournal = async (): Promise<void> => {
    await journal.close();
    journalClosed = true;
  };
  const bridgeLogger = logger;
  const running = await createBridgeServer({
    host,
    port: boundPort,
    http,
    token: token.token,
    bridgeId,
    bridgeVersion: BRIDGE_VERSION,
    ...(recipeIdentity === undefined ? {} : { recipeIdentity }),
    journal,
    supervisor: withMcp(runningSupervisor, mcp),
    turns,
    logger: bridgeLogger,
    lifecycle: {
      async stop(graceMs) {
        await mcp.close();
        await runningSupervisor.stop(graceMs);
        await closeJournal();
      },
      async destroy() {
        await mcp.close();
        await runningSupervisor.stop(0);
        await closeJournal();
        rmSync(stateDir, { recursive: true, force: true });
      },
      exit(code) {
        mainLog.info({ code }, 'exiting');
        bridgeLogger.flushSync();
        process.exit(code);
      },
    },
  });
  mcp.bindCalls(running.pendingCalls); // host tool-result frames reach waiting calls through the server's routing
  server = running;
  http.off('upgrade', hold);
  for (const [request, socket, head] of held.splice(0)) http.emit('upgrade', request, socket, head);
  mainLog.info({ port: boundPort }, 'ready');
  if (stopSignal !== null) void running.shutdown('stop');
}

function installCrashHandlers(getLogger: () => BridgeLogger | null): void {
  const crash = (kind: string) => (error: unknown) => {
    const logger = getLogger();
    if (logger !== null) {
      logger.child('main').fatal({ err: error }, kind);
      logger.flushSync();
    }
    process.stderr.write(`harness-bridge: ${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(exitSoftware);
  };
  process.on('uncaughtException', crash('uncaught exception'));
  process.on('unhandledRejection', crash('unhandled rejection'));
}

main().catch((error: unknown) => fail(exitSoftware, `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
