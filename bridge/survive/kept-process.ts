// A CLI run by a keeper process (launch `survive`; keeper.ts is the keeper's
// side), behind the same SupervisedProcess interface as a piped or pty child. The
// keeper owns the CLI's pipes or pty and appends its output to capture files; this
// side reads those files from a byte offset, splits them into lines or pty text
// chunks (each piece carries `off`, the capture offset after it, which the supervisor
// journals), writes stdin and EOF over the keeper's socket, and signals the
// CLI's process group directly. A restarted bridge builds one with
// `adoptKept` from the offsets its journal holds, so every byte is journaled
// exactly once across any number of bridge crashes
// (docs/bridge-internals.md#surviving-clis).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { KEEPER_FILES, keeperSocketPath, type KeeperExit, type KeeperSpec } from './keeper.ts';
import type { RelaySpec } from './mcp-relay.ts';
import type { KeptEgressSpec } from '../jail/kept-egress.ts';
import type { AheadGo } from './jail-ahead.ts';
import { CaptureReader } from './capture-reader.ts';
import type { SpareKeepers } from './spare-keeper.ts';
import { hashKey, keeperDir, removeKeeperDir, type SavedLaunch } from './keeper-dir.ts';
import { signalJailed } from '../jail/jail-signals.ts';
import { childEnv, killGroup, type ProcessEvents, type ProcessOptions, type SupervisedProcess, type SupervisorLogger } from '../supervisor/supervised-process.ts';
import type { OutputStream } from '../supervisor/output-line.ts';
import { KEEPER_LIMITS, SUPERVISOR_LIMITS } from '../limits.ts';

/**
 * Bytes read per pump before the event loop gets its turn back (and the records read so far are
 * written and sent): the first pump after the reader caught up reads at most pumpFirstBytes, a
 * pipe read's worth, so the first lines of a burst reach the host as soon as a pipe's would; while
 * a backlog lasts each pump reads twice as much, up to what a piped CLI's output stages per tick
 * (SUPERVISOR_LIMITS.stagedOutputBytes).
 */
const pumpFirstBytes = 64 * 1024;
const pumpMaxBytes = SUPERVISOR_LIMITS.stagedOutputBytes;

export type KeptStart = { stdout: number; stderr: number };

/**
 * `again`: nothing ran, and spawning again is safe: the jail the keeper started ahead for it was gone (jail-ahead.ts),
 * or a port the keeper was to listen on was taken since the bridge picked it.
 */
export type KeptSpawn = { ok: true; proc: KeptProcess } | { ok: false; message: string; again?: boolean };

/** Spawns a keeper for `launch` in a new keeper dir and waits until it runs the CLI (or failed to). */
export async function spawnKept(
  /** Where the keeper process comes from (a spare started ahead, spare-keeper.ts), and the bridge's state dir. */
  keepers: SpareKeepers,
  id: string,
  launch: LaunchSpec,
  key: string,
  options: ProcessOptions,
  events: ProcessEvents,
  /** What the keeper runs: the jail's launch (argv, env, cwd); `launch` is what is saved for adoption. */
  spawnAs: LaunchSpec = launch,
  /** The keeper relays the CLI's MCP requests (mcp-relay.ts); spawnAs's MCP URL names its port. */
  relay?: RelaySpec,
  /** The keeper runs the CLI's egress proxy (a kept CLI in a network namespace: jail/kept-egress.ts). */
  egress?: KeptEgressSpec,
  /** The CLI takes the jail the keeper started ahead (spawnAs.argv is that jail's): what its shell is told. */
  ahead?: AheadGo,
): Promise<KeptSpawn> {
  const dir = resolve(keeperDir(keepers.stateDir, id));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const reachable = keeperSocketPath(dir);
  if ('error' in reachable) {
    rmSync(dir, { recursive: true, force: true });
    return { ok: false, message: `survive: ${reachable.error}` };
  }
  reachable.release();
  // The keeper works from inside its dir: the CLI's cwd is always explicit.
  const spec: KeeperSpec = {
    argv: spawnAs.argv,
    stdin: launch.stdin,
    exitDrainMs: options.exitDrainMs,
    cwd: resolve(spawnAs.cwd ?? process.cwd()),
    ...options.credentials,
    ...(options.signal ? { jailed: true } : {}),
    ...(relay ? { mcp: relay } : {}),
    ...(egress ? { egress } : {}),
    ...(launch.io.mode === 'pty' ? { pty: { cols: launch.io.cols, rows: launch.io.rows } } : {}),
    ...(ahead ? { ahead } : {}),
  };
  writeFileSync(join(dir, KEEPER_FILES.spec), JSON.stringify(spec), { mode: 0o600 });
  const { env: _env, ...withoutEnv } = launch;
  const saved: SavedLaunch = { launch: withoutEnv, key: hashKey(key) };
  writeFileSync(join(dir, KEEPER_FILES.launch), JSON.stringify(saved), { mode: 0o600 });
  const keeper = keepers.take(egress !== undefined);
  keeper.stdin!.end(`${JSON.stringify({ dir, env: childEnv(spawnAs) })}\n`);
  // Its first line says it all (the keeper ends its stdout right after it, but that end can come later).
  const first = await new Promise<string>((resolve) => {
    let text = '';
    keeper.stdout!.setEncoding('utf8');
    keeper.stdout!.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) resolve(text);
    });
    keeper.stdout!.on('end', () => resolve(text));
    keeper.stdout!.on('error', () => resolve(text));
  });
  keeper.stdout!.removeAllListeners('data');
  keeper.stdout!.resume(); // the rest (nothing, then EOF) is not read into memory
  keeper.stdout!.on('error', () => undefined);
  keeper.unref();
  let said: { pid?: number; error?: string; ahead?: string; again?: string } = {};
  try {
    said = JSON.parse(first.split('\n')[0] ?? '') as typeof said;
  } catch {
    said = { error: `the keeper did not start (${first.slice(0, 200) || 'no output'})` };
  }
  if (typeof said.pid !== 'number') {
    rmSync(dir, { recursive: true, force: true });
    return { ok: false, message: said.error ?? 'the keeper did not start', ...(said.ahead === 'gone' || said.again === 'port' ? { again: true } : {}) };
  }
  const proc = new KeptProcess(dir, said.pid, launch, { stdout: 0, stderr: 0 }, options, events);
  await proc.connect();
  // The next kept spawn's keeper starts once this CLI's output goes quiet, or it ends: a Node start beside the
  // CLI's own start, or beside its flood of output, costs a small machine more than the spare saves. A long-lived
  // CLI (lifetime 'session') takes the next turns itself: a spare behind it would wait, a Node process and its
  // memory, for a respawn that seldom comes (and whose turn start begins a keeper while the jail wraps).
  // That spare starts the jail the next CLI will likely need, too (jail-ahead.ts).
  if (launch.lifetime !== 'session') void proc.quiet.then(() => keepers.refill(egress !== undefined, true));
  return { ok: true, proc };
}

/** Re-adopts a kept CLI: reads its capture files from `from` on (what the journal does not hold yet). */
export async function adoptKept(
  dir: string,
  pid: number,
  launch: LaunchSpec,
  from: KeptStart,
  options: ProcessOptions,
  events: ProcessEvents,
): Promise<KeptProcess> {
  // A CLI its first bridge jailed is signalled through /proc here too.
  let jailed = false;
  try {
    jailed = (JSON.parse(readFileSync(join(dir, KEEPER_FILES.spec), 'utf8')) as KeeperSpec).jailed === true;
  } catch {
    // no readable spec: signal its group
  }
  const proc = new KeptProcess(dir, pid, launch, from, jailed ? { ...options, signal: signalJailed } : options, events);
  await proc.connect();
  return proc;
}

export class KeptProcess implements SupervisedProcess {
  readonly pty: boolean;
  readonly hasStdin: boolean;
  readonly done: Promise<void>;
  /** Resolves once the CLI's first output is read, or it ended without any. */
  readonly #started: Promise<void>;
  #markStarted!: () => void;
  /** Resolves once the CLI wrote nothing for KEEPER_LIMITS.quietMs after its first output, or it ended. */
  readonly quiet: Promise<void>;
  #markQuiet!: () => void;
  /** The keeper's `grew` notices: the CLI wrote (counted while paused too). */
  #grew = 0;
  #quietTimer: ReturnType<typeof setInterval> | undefined;
  readonly keeper: string;
  #markDone!: () => void;
  #exited = false;
  #paused: boolean;
  #socket: Socket | null = null;
  #pumping = false;
  #again = false;
  /** The keeper's exit notice (or exit.json): pump to these sizes, then deliver the exit. */
  #exit: KeeperExit | null = null;
  #keeperGone = false;
  /** The offsets last said to the keeper (`{"t":"read"}`: its backpressure, keeper.ts). */
  #said = '';
  /** This pump's byte budget: pumpFirstBytes after a pump that caught up, doubling while one does not. */
  #budget = pumpFirstBytes;
  /** No reading before begin(): the supervisor attaches its entry first. */
  #held = true;
  #stdinOpen: boolean;
  /** stdout and stderr, or a pty's one capture (stdout). */
  readonly #readers: CaptureReader[];
  readonly #log: SupervisorLogger;
  readonly #signal: ProcessOptions['signal'];

  constructor(
    readonly dir: string,
    readonly pid: number,
    readonly launch: LaunchSpec,
    from: KeptStart,
    options: ProcessOptions,
    private readonly events: ProcessEvents,
  ) {
    this.keeper = dir.slice(dir.lastIndexOf('/') + 1);
    this.pty = launch.io.mode === 'pty';
    this.hasStdin = this.pty || launch.stdin === 'pipe';
    this.#stdinOpen = this.hasStdin;
    this.#paused = options.paused;
    this.#log = options.log;
    this.#signal = options.signal;
    this.done = new Promise<void>((resolve) => (this.#markDone = resolve));
    this.#started = new Promise<void>((resolve) => (this.#markStarted = resolve));
    this.quiet = new Promise<void>((resolve) => (this.#markQuiet = resolve));
    void this.#started.then(() => this.#watchQuiet());
    const lines = (name: OutputStream) =>
      CaptureReader.lines(join(dir, KEEPER_FILES[name]), from[name], options.maxLineBytes, (text, cont, off) => this.events.line(name, text, cont, off));
    // A pty's text is capped per record like a pipe's line.
    this.#readers = this.pty
      ? [CaptureReader.chunks(join(dir, KEEPER_FILES.stdout), from.stdout, options.maxLineBytes, (text, off) => this.events.chunk(text, off))]
      : [lines('stdout'), lines('stderr')];
    this.#said = this.#readNotice(); // where reading starts: nothing read yet, nothing to say
  }

  get exited(): boolean {
    return this.#exited;
  }

  /** Connects to the keeper; if it is gone, its exit.json says how the CLI ended (or the CLI is lost: killed). */
  connect(): Promise<void> {
    return new Promise<void>((resolve) => {
      const reachable = keeperSocketPath(this.dir);
      const socket = connect('error' in reachable ? join(this.dir, KEEPER_FILES.sock) : reachable.path);
      const release = () => ('error' in reachable ? undefined : reachable.release());
      socket.once('connect', release);
      socket.once('close', release);
      let buffered = '';
      socket.setEncoding('utf8');
      socket.once('connect', () => {
        this.#socket = socket;
        resolve();
      });
      socket.on('data', (text: string) => {
        buffered += text;
        for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line === '{"t":"grew"}') {
            this.#grew++;
            this.#pump();
          } else {
            try {
              const msg = JSON.parse(line) as KeeperExit;
              if (msg.t === 'exit') this.#exit = msg;
            } catch {
              // not for us
            }
            this.#pump();
          }
        }
      });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.#socket = null;
        resolve();
        this.#keeperGone = true;
        this.#exit ??= this.#readExitFile();
        if (this.#exit === null) {
          // The keeper died without an exit (killed): the CLI cannot be driven any more.
          this.#log.warn({ pid: this.pid, dir: this.dir }, 'keeper gone without an exit; killing the CLI group');
          killGroup(this.pid, 'SIGKILL', this.#log);
        }
        this.#pump();
      });
    });
  }

  #watchQuiet(): void {
    if (this.#exited) return;
    let seen = this.#grew;
    this.#quietTimer = setInterval(() => {
      if (this.#grew !== seen) {
        seen = this.#grew;
        return;
      }
      clearInterval(this.#quietTimer);
      this.#markQuiet();
    }, KEEPER_LIMITS.quietMs);
    this.#quietTimer.unref();
  }

  #readExitFile(): KeeperExit | null {
    try {
      return JSON.parse(readFileSync(join(this.dir, KEEPER_FILES.exit), 'utf8')) as KeeperExit;
    } catch {
      return null;
    }
  }

  /** Starts reading the capture files (after the supervisor attached the process). */
  begin(): void {
    this.#held = false;
    this.#pump();
  }

  #pump(): void {
    if (this.#exited || this.#held || this.#paused) return;
    this.#pumpRead();
    this.#sayRead();
  }

  /** Tells the keeper how far the captures are read, when that moved (the keeper holds a CLI too far ahead; never a pty). */
  #sayRead(): void {
    const socket = this.#socket;
    if (this.pty || this.#exited || socket === null || socket.destroyed) return;
    const said = this.#readNotice();
    if (said === this.#said) return;
    this.#said = said;
    socket.write(said);
  }

  #readNotice(): string {
    return `{"t":"read","o":[${this.#readers[0]!.offset},${this.#readers[1]?.offset ?? 0}]}\n`;
  }

  #pumpRead(): void {
    if (this.#pumping) {
      this.#again = true; // a line handler asked (resume) while this pump reads: once more after it
      return;
    }
    this.#pumping = true;
    try {
      this.#pumpOnce();
    } catch (error) {
      this.#log.warn({ err: (error as Error).message, dir: this.dir }, 'reading a capture file failed');
    } finally {
      this.#pumping = false;
    }
    if (this.#again) {
      this.#again = false;
      setImmediate(() => this.#pump());
    }
  }

  /** Reads both capture files as far as they go (at most this pump's budget, then the loop's turn); delivers the exit once both are read to their end. */
  #pumpOnce(): void {
    // Known before reading: the keeper appends with synchronous writes before it notifies or exits,
    // so once the exit (or the keeper's death) is known, end of file is the end of the output.
    const exit = this.#exit;
    const gone = this.#keeperGone;
    let budget = this.#budget;
    for (const reader of this.#readers) {
      const read = reader.read(budget, () => this.#paused);
      if (read > 0) this.#markStarted();
      budget -= read;
      if (this.#paused) return;
      if (budget <= 0) {
        this.#budget = Math.min(this.#budget * 2, pumpMaxBytes);
        this.#again = true;
        return;
      }
    }
    this.#budget = pumpFirstBytes;
    if (exit !== null) this.#deliverExit(exit.code, exit.signal);
    else if (gone) this.#deliverExit(null, 'SIGKILL');
    else if (this.#exit !== null || this.#keeperGone) this.#again = true; // learnt while reading: read to the end once more
  }

  #deliverExit(code: number | null, signal: string | null): void {
    if (this.#exited) return;
    for (const reader of this.#readers) reader.end();
    this.#exited = true;
    this.#socket?.destroy();
    this.events.exit(code, signal);
    this.#markDone();
    this.#markStarted();
    clearInterval(this.#quietTimer);
    this.#markQuiet();
  }

  /** Removes the keeper dir (call once the exit is journaled). */
  cleanUp(): void {
    if (existsSync(join(this.dir, KEEPER_FILES.exit)) || this.#exited) removeKeeperDir(this.dir);
  }

  /** Points the keeper's MCP relay at this bridge's endpoint (an adopted CLI's held requests go there now). */
  relayTo(port: number): void {
    const socket = this.#socket;
    if (socket !== null && !socket.destroyed) socket.write(`{"t":"up","port":${port}}\n`);
  }

  /** The keeper counts and keeps `journaled` (what the `stdin` record says) for an adopting bridge (recent-inputs.ts). */
  write(text: string, journaled: string = text): boolean {
    const socket = this.#socket;
    if (!this.#stdinOpen || this.#exited || socket === null || socket.destroyed) return false;
    const b = Buffer.from(text, 'utf8').toString('base64');
    socket.write(journaled === text ? `{"t":"in","b":"${b}"}\n` : `${JSON.stringify({ t: 'in', b, j: journaled })}\n`);
    return true;
  }

  endStdin(): void {
    if (!this.#stdinOpen) return;
    this.#stdinOpen = false;
    this.#socket?.write('{"t":"eof"}\n');
  }

  killGroup(signal: NodeJS.Signals): boolean {
    if (this.#exited) return false;
    return this.#signal ? this.#signal(this.pid, signal) : killGroup(this.pid, signal, this.#log);
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
    this.#pump();
  }
}
