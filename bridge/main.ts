// Entry of the bridge daemon (bundled into dist/bridge.mjs), stage 1 of its start: arguments,
// state dir, token, lock, the record path (journal + turn log, and the records a restart owes:
// interrupted turn, bridge-start), the ready line, process signals. Each concern has its module.
//
//   node bridge.mjs --state-dir DIR [--port N] [--host H] [--recipe-identity ID] [--token-file NAME]
//                   [--isolation auto|uid+namespace|namespace|uid|none] [--require-isolation]
//                   [--cli-user NAME|UID:GID] [--network-policy FILE] [--srt CLI_JS] [--sessions-root DIR]
//   node bridge.mjs --version
//   node --snapshot-blob BLOB bridge.mjs …   (the same, started from a snapshot: startup-snapshot.ts)
//
// The token comes from --token-file (a file in DIR the host wrote for this bridge, renamed to
// DIR/token once the state lock is ours), HARNESS_BRIDGE_TOKEN or DIR/token
// (auth/token-source.ts), never argv. How the CLI is kept from it: jail/ (docs/security.md).
//
// Stage 1 loads only node builtins, auth, the journal and the turn log, so the ready line costs
// little more than Node's own start; everything else is stage 2 (after-ready.ts), loaded right
// after it (docs/bridge-internals.md#two-stage-start). What stage 1 hands over is
// after-ready-context.ts's AfterReadyContext: the RecordPath, the EarlyLog, StopSignals and the
// connections held until the server is attached.
import { closeSync, existsSync, openSync, renameSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { loadAfterReady } from './after-ready-loader.ts';
import { loadToken } from './auth/token-source.ts';
import { dropMallocTunable } from './malloc-tunable.ts';
import { EarlyLog } from './early-log.ts';
import { logFileName } from './log-file.ts';
import { acquireStateLock, EXIT_STATE_DIR_LOCKED } from './journal/state-lock.ts';
import { ensurePrivateDir } from './journal/journal-file.ts';
import { KEEPER_FILES, keeperSocketPath } from './survive/keeper.ts';
import { runKeeperFromStdin } from './survive/keeper-start.ts';
import { loadKeptEgress } from './jail/kept-egress-loader.ts';
import { runJailHelper } from './jail/jail-helper-main.ts';
import { startEarlyHelper } from './jail/early-helper.ts';
import { runRelay } from './relay/relay.ts';
import { deferredToSnapshot } from './startup-snapshot.ts';
import { JOURNAL_LIMITS, SERVER_LIMITS } from './limits.ts';
import { prepareRandom, randomUUID } from './random.ts';
import { RecordPath } from './record-path.ts';
import { StopSignals } from './stop-signals.ts';
import { TurnLog, recoverTurns } from './journal/turn-log.ts';
import { DEFAULT_JAIL_ARGS, isolationImpossible, JAIL_FLAGS, setJailArg, type JailArgs, type JailFlag } from './jail/jail-args.ts';
import { BRIDGE_VERSION } from './version.ts';

const usage =
  'usage: node bridge.mjs --state-dir DIR [--port N] [--host H] [--recipe-identity ID] [--token-file NAME] ' +
  '[--isolation auto|uid+namespace|namespace|uid|none] [--require-isolation] [--cli-user NAME|UID:GID] [--network-policy FILE] [--srt CLI_JS] [--sessions-root DIR]';
const readyFileName = 'bridge.json';

/** sysexits: bad usage, bad configuration, internal software error. */
const exitUsage = 64;
const exitConfig = 78;
const exitSoftware = 70;

type BridgeArgs = { stateDir: string; port: number; host: string; recipeIdentity?: string; tokenFile?: string; jail: JailArgs };

const valueFlags: readonly string[] = ['--state-dir', '--port', '--host', '--recipe-identity', '--token-file', ...JAIL_FLAGS];

function parseArgs(argv: readonly string[]): { ok: true; args: BridgeArgs } | { ok: false; message: string } {
  let stateDir: string | undefined;
  let port = 0;
  let host = '127.0.0.1';
  let recipeIdentity: string | undefined;
  let tokenFile: string | undefined;
  const jail: JailArgs = { ...DEFAULT_JAIL_ARGS };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1];
    if (flag === '--token') return { ok: false, message: 'the token is never taken from argv: use --token-file, HARNESS_BRIDGE_TOKEN or DIR/token (0600)' };
    if (flag === '--require-isolation') {
      jail.required = true;
      continue;
    }
    if (!valueFlags.includes(flag)) return { ok: false, message: `unknown argument ${flag}` };
    if (value === undefined || value.startsWith('--')) return { ok: false, message: `${flag} needs a value` };
    i++;
    if (flag === '--state-dir') stateDir = value;
    else if (flag === '--host') host = value;
    else if (flag === '--recipe-identity') recipeIdentity = value;
    else if (flag === '--token-file') {
      if (!/^token\.new\.[A-Za-z0-9_-]{1,64}$/.test(value)) return { ok: false, message: '--token-file must be token.new.<id>, a file in the state dir' };
      tokenFile = value;
    } else if ((JAIL_FLAGS as readonly string[]).includes(flag)) {
      const problem = setJailArg(jail, flag as JailFlag, value);
      if (problem) return { ok: false, message: problem };
    } else {
      port = Number(value);
      if (!/^\d+$/.test(value) || port > 65_535) return { ok: false, message: `--port must be 0-65535, got ${value}` };
    }
  }
  if (stateDir === undefined || stateDir === '') return { ok: false, message: '--state-dir is required' };
  return { ok: true, args: { stateDir, port, host, jail, ...(recipeIdentity === undefined ? {} : { recipeIdentity }), ...(tokenFile === undefined ? {} : { tokenFile }) } };
}

/** Bytes an unprivileged writer may still use on `dir`'s filesystem; null when statfs is not available. */
function freeBytes(dir: string): number | null {
  try {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
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


async function main(): Promise<void> {
  dropMallocTunable(process.env);
  const parsed = parseArgs(process.argv.slice(2));
  if (!parsed.ok) fail(exitUsage, `${parsed.message}\n${usage}`);
  const { stateDir, port, host, recipeIdentity, tokenFile, jail } = parsed.args;
  // Isolation that is known to be impossible before anything starts: refuse now, not after the ready line.
  const impossible = jail.required ? isolationImpossible(jail) : undefined;
  if (impossible !== undefined) fail(exitConfig, `isolation is required and not possible here: ${impossible}`);

  try {
    ensurePrivateDir(stateDir);
  } catch (error) {
    fail(exitConfig, `cannot create state dir ${stateDir}: ${(error as Error).message}`);
  }
  // A (still) full disk fails the start now, not the first turn later (docs/guarantees.md#disk-full-and-caps).
  const free = freeBytes(stateDir);
  if (free !== null && free < JOURNAL_LIMITS.minFreeBytesAtStart) {
    fail(exitSoftware, `ENOSPC: the state dir's filesystem has ${free} bytes free, under the ${JOURNAL_LIMITS.minFreeBytesAtStart} a start needs (disk-full)`);
  }
  await prepareRandom();

  // Until pino is loaded (right after the ready line) log calls are queued; stage 2 hands `log` the logger.
  const log = new EarlyLog();
  installCrashHandlers(log);
  const bridgeId = randomUUID();
  // One bridge per state dir: a second bridge appending to the same journal would reuse seqs. The
  // lock comes before the token: a bridge refused here must leave the live one's token alone.
  const lock = acquireStateLock(stateDir, bridgeId);
  if (!lock.ok) {
    if (tokenFile !== undefined) rmSync(join(stateDir, tokenFile), { force: true });
    fail(EXIT_STATE_DIR_LOCKED, `state dir ${stateDir} is held by a live bridge (pid ${lock.holder.pid}, ${lock.holder.bridgeId}); attach to it instead`);
  }
  process.on('exit', () => lock.release());
  const token = loadToken(stateDir, process.env, tokenFile);
  if (!token.ok) fail(exitConfig, token.message);
  // Never passed on (the supervisor strips it from CLIs' env too); /proc/<pid>/environ keeps the
  // original block, which is why the host hands the token over in a file instead (docs/security.md).
  delete process.env.HARNESS_BRIDGE_TOKEN;
  try {
    closeSync(openSync(join(stateDir, logFileName), 'a', 0o600)); // exists (0600) from the ready line on; pino appends once loaded
  } catch {
    // the logger reports an unwritable log file once it loads; not a reason to refuse to start
  }
  log.write('info', { bridgeId, version: BRIDGE_VERSION, tokenSource: token.source }, 'starting');

  // Bind first, in parallel with the journal. A plain TCP listener (node:http loads only with
  // stage 2): connections are accepted paused, nothing is read from them, and they wait here
  // until stage 2's server attaches and parses them with its own HTTP server.
  const listener = createServer({ pauseOnConnect: true });
  const held: Socket[] = [];
  const hold = (socket: Socket): void => {
    socket.on('error', () => {}); // a client that gives up while held; the server attaches its own handler
    held.push(socket);
  };
  listener.on('connection', hold);
  const listening = new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });

  const fatal = (error: Error): never => {
    log.write('fatal', { err: error }, 'journal write failed; exiting (continuing would let seqs diverge from disk)');
    log.logger?.flushSync();
    if (log.logger === null) process.stderr.write(`harness-bridge: journal write failed: ${error.message}\n`);
    process.exit(exitSoftware);
  };
  const turns = new TurnLog(SERVER_LIMITS);
  const recordPath = await RecordPath.open({ stateDir, turns, log, onFatal: fatal });
  const { journal, record } = recordPath;
  const unreadable = journal.durableSeq === 0 ? 0 : await recoverTurns(turns, journal.read(1, journal.durableSeq, SERVER_LIMITS.maxReplayBatchRecords));
  if (unreadable > 0) log.write('warn', { unreadable }, 'journal lines that looked like turn records did not parse');

  await listening;

  const address = listener.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  const ready = { type: 'bridge-ready', port: boundPort, bridgeId, journalId: journal.journalId, version: BRIDGE_VERSION, pid: process.pid };
  const readyLine = JSON.stringify(ready);
  writePrivateFile(join(stateDir, readyFileName), `${readyLine}\n`);
  // The bridge outlives the host that spawned it (cross-process resume): once that host is gone
  // its stdout/stderr pipes are broken, and a later write (a Node warning, a last-gasp message)
  // must not turn EPIPE into an uncaught exception that kills the bridge and its CLI.
  // (stderr is set up right after the ready line: its stream is created on first use.)
  process.stdout.on('error', () => undefined);
  process.stdout.write(`${readyLine}\n`);
  process.stderr.on('error', () => undefined);
  // The jail helper starts now, beside stage 2's load and the host's connect (after the ready line: a bridge's
  // cold start is unchanged; the token left the environment it inherits long before). Not awaited: it never
  // rejects, and stage 2 takes it.
  const earlyJailHelper = startEarlyHelper(jail, process.argv[1]!);

  // The records a restart owes go in right after the ready line: no host can connect before it,
  // and stage 2 attaches the server only once the sync below (their write, then the fdatasync —
  // for a fresh journal also its creation's) has returned, so every record a host sees was
  // written first (docs/design.md#d2), and these come before any record of this bridge's own.
  const unfinished = turns.unfinished;
  // A kept CLI (launch `survive`) whose keeper still answers, or wrote its exit: adopt it (and the
  // turn running on it) instead of ending that turn 'interrupted'. Stage 2 reads what it printed since
  // (docs/bridge-internals.md#surviving-clis).
  const kept = turns.kept;
  const adopted = kept !== undefined && (await keeperAlive(join(stateDir, 'keepers', kept.keeper))) ? kept : undefined;
  const adoptedTurnId = adopted === undefined ? undefined : (unfinished?.turnId ?? null);
  // Its CLI's exit journaled already (the bridge died between that record and the turn-end): the turn ended as the supervisor would have ended it.
  const exited = adopted === undefined ? turns.unfinishedExit : undefined;
  if (unfinished !== undefined && adopted === undefined) {
    record({
      kind: 'turn-end',
      turnId: unfinished.turnId,
      data: exited ?? { reason: 'interrupted', message: 'the bridge running this turn exited before the turn ended' },
    });
  }
  record({
    kind: 'bridge-start',
    turnId: null,
    data: {
      bridgeId,
      version: BRIDGE_VERSION,
      recovered: { ...journal.recovered },
      ...(adopted === undefined ? {} : { adopted: { turnId: adoptedTurnId ?? null, pid: adopted.pid, keeper: adopted.keeper } }),
    },
  });

  // A signal before the server is attached stops the bridge once it is.
  const stopSignals = StopSignals.install(log);
  const synced = journal.sync().catch((error: unknown) => fatal(error instanceof Error ? error : new Error(String(error))));

  const { runAfterReady } = await loadAfterReady();
  await runAfterReady({
    stateDir,
    host,
    boundPort,
    ...(recipeIdentity === undefined ? {} : { recipeIdentity }),
    token: token.token,
    bridgeId,
    jail,
    earlyJailHelper,
    listener,
    recordPath,
    synced,
    unfinishedTurnId: adopted === undefined && exited === undefined ? unfinished?.turnId : undefined,
    ...(adopted === undefined ? {} : { adopted: { ...adopted, turnId: adoptedTurnId ?? null, turnFirstSeq: unfinished?.firstSeq } }),
    log,
    stopSignals,
    held,
    hold,
    removeStateDir: () => rmSync(stateDir, { recursive: true, force: true }),
  });
}

/** A keeper dir whose CLI can be adopted: its exit is written, or its keeper answers on its socket. */
function keeperAlive(dir: string): Promise<boolean> {
  if (existsSync(join(dir, KEEPER_FILES.exit))) return Promise.resolve(true);
  const reachable = keeperSocketPath(dir);
  if ('error' in reachable) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(reachable.path);
    socket.once('connect', () => {
      reachable.release();
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      reachable.release();
      resolve(existsSync(join(dir, KEEPER_FILES.exit)));
    });
  });
}

/** An uncaught exception or unhandled rejection: logged (once pino is loaded) and flushed, then exit 70. */
function installCrashHandlers(log: EarlyLog): void {
  const crash = (kind: string) => (error: unknown) => {
    const logger = log.logger;
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

/** The oldest Node the bridge runs on (README.md, Node): an older one fails the start, named, never a turn later. */
const minNodeMajor = 20;

/** The bridge file's modes, by its first argument: keeper, jail helper, relay, egress tunnel, version, else the bridge. */
function dispatch(): void {
  if (process.argv[2] === '--version') {
    process.stdout.write(`${BRIDGE_VERSION}\n`);
    return;
  }
  if (!(Number(process.versions.node.split('.')[0]) >= minNodeMajor)) {
    process.stderr.write(`harness-bridge: needs Node ${minNodeMajor} or newer in the sandbox; ${process.execPath} is Node ${process.versions.node}\n`);
    process.exit(exitConfig);
  }
  if (process.argv[2] === '--keeper') {
    // Keeper mode (launch `survive`): this same file runs a CLI for bridges (keeper-start.ts, keeper.ts).
    runKeeperFromStdin(async () => (await loadKeptEgress()).startKeptEgress, process.argv[3] === '--egress').catch((error: unknown) => fail(exitSoftware, `keeper failed: ${error instanceof Error ? error.message : String(error)}`));
  } else if (process.argv[2] === '--jail-helper' && process.argv[3] !== undefined) {
    // Jail helper mode: sandbox-runtime as a library for one bridge, as its CLIs' uid (jail/jail-helper.ts).
    runJailHelper(process.argv[3]).catch((error: unknown) => fail(exitSoftware, `jail helper failed: ${error instanceof Error ? error.message : String(error)}`));
  } else if (process.argv[2] === '--relay' && process.argv[3] !== undefined) {
    // Relay mode: the host's socket to this sandbox's bridge, carried over the exec stream's stdio (relay/relay.ts).
    runRelay(process.argv[3], process.argv[4]);
  } else if (process.argv[2] === '--egress-tunnel' && process.argv[3] !== undefined) {
    // Egress tunnel mode: the CLI's proxy in a sandbox with no network, its connections carried to the host (tunnel/egress-forwarder.ts).
    // It validates frames with zod, so it lives in stage 2 (after-ready.ts), not in every bridge's stage 1.
    const port = process.argv[3];
    loadAfterReady().then(
      (stage2) => stage2.runEgressForwarder(port),
      (error: unknown) => fail(exitSoftware, `egress tunnel failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  } else {
    main().catch((error: unknown) => fail(exitSoftware, `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
  }
}

// Built into a startup snapshot, the dispatch runs when a bridge starts from it; otherwise now.
if (!deferredToSnapshot(dispatch)) dispatch();
