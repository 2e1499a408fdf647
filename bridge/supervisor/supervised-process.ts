// One spawned CLI process, with pipes or a pty, behind one small interface.
// Owns spawning (own process group), reading and framing its output, stdin,
// group signals and the exit handshake (output fully drained before `exit`).
// Turns, records and policy (abort, stop, matchers) are supervisor.ts's.
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable } from 'node:stream';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { spawnCapped } from '../jail/pids-cap.ts';
import { SUPERVISOR_LIMITS } from '../limits.ts';
import { LineSplitter } from './line-splitter.ts';
import { drainBeforeDestroy } from './pty-drain.ts';
import type { PtyModule } from './pty.ts';
import type { OutputStream } from './output-line.ts';

/** Structural subset of a pino Logger; any pino logger fits. */
export type SupervisorLogger = {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
};

export type ProcessEvents = {
  /** A line (or `cont` piece) from a pipe. `off`: a kept CLI's capture offset after the piece (launch `survive`). */
  line(stream: OutputStream, text: string, cont: boolean, off?: number): void;
  /** A chunk from a pty, decoded as UTF-8. `off`: a kept CLI's capture offset after it (launch `survive`). */
  chunk(text: string, off?: number): void;
  /** The process exited and its output has been fully delivered; called once. */
  exit(code: number | null, signal: string | null): void;
};

export type ProcessOptions = {
  maxLineBytes: number;
  exitDrainMs: number;
  /** Start with output reading paused (the supervisor is paused). */
  paused: boolean;
  log: SupervisorLogger;
  /** The CLI's own uid/gid (docs/security.md#uid); absent: the bridge's. */
  credentials?: { uid: number; gid: number };
  /** How signals reach the CLI when it is not the spawned process's group (a jailed CLI: jail/jail-signals.ts). */
  signal?: (pid: number, signal: NodeJS.Signals) => boolean;
};

export interface SupervisedProcess {
  readonly pid: number;
  readonly pty: boolean;
  readonly launch: LaunchSpec;
  /** Whether text can be written to its stdin (a pipe, or the pty). */
  readonly hasStdin: boolean;
  /** True once `exit` has been delivered. */
  readonly exited: boolean;
  /** Resolves after `exit` has been delivered. */
  readonly done: Promise<void>;
  /** `journaled`: the text its `stdin` record carries, when it differs (placeholders not substituted; a kept CLI's keeper keeps it). */
  write(text: string, journaled?: string): boolean;
  /** Close stdin (EOF for the CLI). */
  endStdin(): void;
  /** Signal the whole process group; false if it is already gone. */
  killGroup(signal: NodeJS.Signals): boolean;
  pause(): void;
  resume(): void;
}

/**
 * The base every CLI gets from the bridge's own environment (docs/security.md#cli-env): what locates
 * programs and describes the user and terminal, and the caller's own malloc tuning (the bridge's own is
 * removed at its start), never a credential. Everything else comes by name (`launch.passEnv`, the
 * adapter's credential variables) or by value (`launch.env`).
 */
const BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'COLORTERM', 'TZ', 'TMPDIR', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'GLIBC_TUNABLES', 'HARNESS_BRIDGE_PROCESS_MARK'];
/** Variables of the bridge's own environment that a CLI must never get, even by name (docs/design.md#d8: the token is never passed on). */
const PRIVATE_ENV = ['HARNESS_BRIDGE_TOKEN'];

export function childEnv(launch: LaunchSpec): Record<string, string> {
  const env: Record<string, string> = {};
  const passed = new Set(launch.passEnv ?? []);
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || PRIVATE_ENV.includes(k)) continue;
    if (BASE_ENV.includes(k) || k.startsWith('LC_') || passed.has(k)) env[k] = v;
  }
  return launch.env ? Object.assign(env, launch.env) : env;
}

/** What the CLI's env was made of, by name only (never values): for the spawn's log line. */
export function childEnvNames(launch: LaunchSpec): { base: string[]; passed: string[]; missing: string[]; launch: string[] } {
  const base = Object.keys(process.env).filter((k) => process.env[k] !== undefined && !PRIVATE_ENV.includes(k) && (BASE_ENV.includes(k) || k.startsWith('LC_')));
  const wanted = launch.passEnv ?? [];
  return {
    base: base.sort(),
    passed: wanted.filter((k) => process.env[k] !== undefined && !PRIVATE_ENV.includes(k)),
    missing: wanted.filter((k) => process.env[k] === undefined),
    launch: Object.keys(launch.env ?? {}).sort(),
  };
}

/** Signals a CLI's whole process group; false when it is gone already (logged at debug). */
export function killGroup(pid: number, signal: NodeJS.Signals, log: SupervisorLogger): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (err) {
    // ESRCH: the group is already gone, which is what a kill wants anyway.
    log.debug({ pid, signal, code: (err as NodeJS.ErrnoException).code }, 'kill process group failed');
    return false;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export type SpawnOutcome = { ok: true; proc: SupervisedProcess } | { ok: false; message: Promise<string> };

/** Spawns with pipes. A failed spawn (ENOENT, EACCES, bad cwd …) is known synchronously; its message arrives a tick later. */
export function spawnPipes(launch: LaunchSpec, options: ProcessOptions, events: ProcessEvents): SpawnOutcome {
  const [file, ...args] = launch.argv as [string, ...string[]];
  const child = spawnCapped(() =>
    spawn(file, args, {
      cwd: launch.cwd,
      env: childEnv(launch),
      stdio: [launch.stdin === 'null' ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
      ...options.credentials,
    }),
  );
  if (child.pid === undefined) {
    const message = new Promise<string>((resolve) => {
      child.once('error', (err: NodeJS.ErrnoException) => resolve(spawnErrorMessage(launch, err)));
    });
    return { ok: false, message };
  }
  const pid = child.pid;
  const log = options.log;
  const { promise: done, resolve: markDone } = deferred();
  let exited = false;
  let paused = options.paused;
  let exitInfo: { code: number | null; signal: string | null } | null = null;
  let drainTimer: NodeJS.Timeout | null = null;

  const streams: Array<[OutputStream, Readable]> = [
    ['stdout', child.stdout!],
    ['stderr', child.stderr!],
  ];
  const splitters = streams.map(([name, stream]) => {
    const splitter = new LineSplitter(options.maxLineBytes, (text, cont) => events.line(name, text, cont));
    const stage = new ChunkStage(SUPERVISOR_LIMITS.stagedOutputBytes, (bytes) => splitter.push(bytes));
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      stage.flush();
      splitter.end();
    };
    stream.on('data', (buf: Buffer) => stage.push(buf));
    stream.on('end', end);
    stream.on('error', (err) => log.debug({ pid, stream: name, err: err.message }, 'child output stream error'));
    if (paused) stream.pause();
    return end;
  });
  child.stdin?.on('error', (err) => {
    // EPIPE/ECONNRESET: the CLI closed its stdin or died; the exit path reports that.
    log.debug({ pid, err: err.message }, 'child stdin error');
  });
  child.on('error', (err) => log.warn({ pid, err: err.message }, 'child process error'));

  const armDrain = () => {
    if (exitInfo === null || exited || paused || drainTimer) return;
    drainTimer = setTimeout(() => {
      drainTimer = null;
      if (paused || exited) return;
      // The leader is gone but something (a leftover grandchild) holds the pipes open.
      log.warn({ pid, exitDrainMs: options.exitDrainMs }, 'output still open after exit; killing the group and closing pipes');
      killGroup(pid, 'SIGKILL', log);
      for (const [, stream] of streams) stream.destroy();
    }, options.exitDrainMs);
    drainTimer.unref();
  };
  child.on('exit', (code, signal) => {
    exitInfo = { code, signal };
    armDrain();
  });
  child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
    if (drainTimer) clearTimeout(drainTimer);
    drainTimer = null;
    for (const end of splitters) end();
    exited = true;
    const info = exitInfo ?? { code, signal };
    events.exit(info.code, info.signal);
    markDone();
  });

  return {
    ok: true,
    proc: {
      pid,
      pty: false,
      launch,
      hasStdin: child.stdin !== null,
      get exited() {
        return exited;
      },
      done,
      write(text) {
        const stdin = child.stdin;
        if (!stdin || stdin.destroyed || stdin.writableEnded) return false;
        stdin.write(text);
        return true;
      },
      endStdin() {
        if (child.stdin && !child.stdin.writableEnded) child.stdin.end();
      },
      killGroup: (signal) => (options.signal ? options.signal(pid, signal) : killGroup(pid, signal, log)),
      pause() {
        paused = true;
        if (drainTimer) clearTimeout(drainTimer);
        drainTimer = null;
        for (const [, stream] of streams) stream.pause();
      },
      resume() {
        paused = false;
        for (const [, stream] of streams) stream.resume();
        armDrain();
      },
    },
  };
}

function spawnErrorMessage(launch: LaunchSpec, err: NodeJS.ErrnoException): string {
  const file = launch.argv[0];
  if (err.code === 'ENOENT') {
    return launch.cwd
      ? `cannot spawn '${file}': not found (ENOENT), or cwd '${launch.cwd}' does not exist`
      : `cannot spawn '${file}': not found on PATH (ENOENT)`;
  }
  if (err.code === 'EACCES') return `cannot spawn '${file}': permission denied (EACCES)${launch.cwd ? `, on it or on cwd '${launch.cwd}'` : ''}`;
  return `cannot spawn '${file}': ${err.message}`;
}

const SIGNAL_NAMES = new Map<number, string>(Object.entries(osConstants.signals).map(([name, n]) => [n, name]));

/** What a paused pty is read on into before the pty itself is paused (UTF-16 units: ~1-3 MiB). */
const pausedPtyChars = 1024 * 1024;

/**
 * Spawns in a pty (node-pty makes the child a session leader, so its pid is its
 * process group). An exec failure inside node-pty shows up as output and exit
 * code 1, not as a spawn failure; a throw from spawn (bad cwd, …) is one.
 */
export function spawnPty(
  pty: PtyModule,
  launch: LaunchSpec,
  options: ProcessOptions,
  events: ProcessEvents,
): { ok: true; proc: SupervisedProcess } | { ok: false; message: string } {
  const io = launch.io.mode === 'pty' ? launch.io : { cols: 80, rows: 24 };
  const [file, ...args] = launch.argv as [string, ...string[]];
  let term: ReturnType<PtyModule['spawn']>;
  try {
    term = spawnCapped(() => pty.spawn(file, args, { name: 'xterm-256color', cols: io.cols, rows: io.rows, cwd: launch.cwd, env: childEnv(launch), ...options.credentials }));
  } catch (err) {
    return { ok: false, message: `cannot spawn '${file}' in a pty: ${(err as Error).message}` };
  }
  const pid = term.pid;
  const log = options.log;
  const { promise: done, resolve: markDone } = deferred();
  let exited = false;
  let stdinOpen = true;
  // Paused (journal backpressure), a pty is read on into `held`, and the pty itself is paused
  // only past pausedPtyChars. What a paused pty still holds when its CLI exits is read just
  // before node-pty drops it (pty-drain.ts). Its exit, like a pipe CLI's, waits until the
  // output before it is out. node-pty reports the exit only after the last data.
  let paused = options.paused;
  const held: string[] = [];
  let heldChars = 0;
  let termPaused = false;
  let exit: { code: number | null; signal: string | null } | null = null;
  let flushing = false;
  const flush = (): void => {
    if (flushing) return; // resumed from inside a chunk's record: the loop below goes on
    flushing = true;
    let i = 0;
    try {
      while (!paused && i < held.length) {
        const text = held[i++]!; // a chunk's record can pause output again
        heldChars -= text.length;
        events.chunk(text);
      }
    } finally {
      held.splice(0, i);
      flushing = false;
    }
    if (paused) return;
    if (termPaused) {
      termPaused = false;
      term.resume();
    }
    if (exit !== null && !exited) {
      exited = true;
      events.exit(exit.code, exit.signal);
      markDone();
    }
  };
  const onData = (text: string): void => {
    if (!paused) return events.chunk(text);
    held.push(text);
    heldChars += text.length;
    if (heldChars >= pausedPtyChars && !termPaused) {
      termPaused = true;
      term.pause();
    }
  };
  term.onData(onData);
  drainBeforeDestroy(term, 'utf8', (data) => onData(String(data)));
  term.onExit(({ exitCode, signal }) => {
    const name = signal ? (SIGNAL_NAMES.get(signal) ?? String(signal)) : null;
    exit = { code: name ? null : exitCode, signal: name };
    flush();
  });
  return {
    ok: true,
    proc: {
      pid,
      pty: true,
      launch,
      hasStdin: true,
      get exited() {
        return exited;
      },
      done,
      write(text) {
        if (exit !== null || !stdinOpen) return false;
        term.write(text);
        return true;
      },
      endStdin() {
        // A pty has no EOF of its own; send ^D, which a line-mode terminal reads as EOF.
        if (exit === null && stdinOpen) term.write('\x04');
        stdinOpen = false;
      },
      killGroup: (signal) => (options.signal ? options.signal(pid, signal) : killGroup(pid, signal, log)),
      pause: () => {
        paused = true;
      },
      resume: () => {
        paused = false;
        flush();
      },
    },
  };
}

/**
 * Copies pipe chunks into one reused buffer and splits them on the next
 * setImmediate, so each chunk (a fresh 64 KiB ArrayBuffer from every pipe
 * read) is garbage as soon as its 'data' handler returns. Split inside the
 * handler, a chunk stayed reachable (from the read callback's frame) while
 * its ~1000 lines were journaled and sent, which took a scavenge or two of
 * a 1 MiB semi-space: nearly every chunk was promoted and its memory waited
 * for a full GC (a 1M-record run's bridge: ~15 MiB of dead chunks and
 * ~10 MiB of old space, test/chaos/memory.test.ts). Order is unchanged:
 * bytes are split in arrival order, and flush() runs before the stream's end.
 */
class ChunkStage {
  readonly #capacity: number;
  readonly #sink: (bytes: Buffer) => void;
  /** Allocated on the first chunk (a stream that stays silent costs nothing). */
  #buffer: Buffer | null = null;
  #bytes = 0;
  #scheduled = false;

  constructor(capacity: number, sink: (bytes: Buffer) => void) {
    this.#capacity = capacity;
    this.#sink = sink;
  }

  push(chunk: Buffer): void {
    if (this.#bytes + chunk.length > this.#capacity) {
      this.flush();
      if (chunk.length > this.#capacity) return this.#sink(chunk);
    }
    this.#buffer ??= Buffer.allocUnsafeSlow(this.#capacity);
    chunk.copy(this.#buffer, this.#bytes);
    this.#bytes += chunk.length;
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flushLater);
    }
  }

  /** Splits what is staged now (the splitter copies whatever it keeps, so the buffer is free again). */
  flush(): void {
    const bytes = this.#bytes;
    if (bytes === 0) return;
    this.#bytes = 0;
    this.#sink(this.#buffer!.subarray(0, bytes));
  }

  readonly #flushLater = (): void => {
    this.#scheduled = false;
    this.flush();
  };
}
