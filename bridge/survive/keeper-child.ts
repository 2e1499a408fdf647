// The CLI a keeper runs (keeper.ts), on pipes or on a pty, behind one small interface: its output
// as raw bytes per stream (a pty has one: stdout), stdin bytes and EOF, and its end. A pty CLI is a
// session leader (node-pty's setsid), so its pid is its process group, as a piped CLI's is (detached).
// docs/bridge-internals.md#surviving-clis.
import type { SpawnOptions } from 'node:child_process';
import { loadPty } from '../supervisor/pty.ts';
import { drainBeforeDestroy } from '../supervisor/pty-drain.ts';

/** What of a keeper's spec.json (keeper.ts KeeperSpec) spawning its CLI takes. `pty`: run it on a pty of this size. */
export type ChildSpec = {
  argv: string[];
  cwd?: string;
  stdin: 'pipe' | 'null';
  uid?: number;
  gid?: number;
  pty?: { cols: number; rows: number };
};

export type KeeperChild = {
  pid: number;
  /** Output bytes, in order, per stream. */
  onOutput(take: (stream: 'stdout' | 'stderr', bytes: Buffer) => void): void;
  /** The process exited (output may still be arriving). */
  onExit(take: (code: number | null, signal: string | null) => void): void;
  /** The process exited and all of its output was delivered. */
  onClose(take: (code: number | null, signal: string | null) => void): void;
  /** False once stdin is closed (or there is none). */
  write(bytes: Buffer): boolean;
  /** EOF: the pipe closed, or ^D on a pty (a line-mode terminal reads it as EOF). */
  end(): void;
  /** Stops waiting for output (a leftover grandchild holding the pipes open). */
  dropOutput(): void;
  /** Stops (or resumes) reading a stream: the CLI blocks once its pipe buffer is full. A pty is read on (below). */
  hold(stream: 'stdout' | 'stderr', held: boolean): void;
};

/** Spawns the spec's CLI with `env`, or says why it could not. */
export async function spawnKeeperChild(spec: ChildSpec, env: NodeJS.ProcessEnv): Promise<KeeperChild | { error: string }> {
  const [file, ...args] = spec.argv as [string, ...string[]];
  const credentials = spec.uid !== undefined && spec.gid !== undefined ? { uid: spec.uid, gid: spec.gid } : {}; // the jail's CLI uid (docs/security.md)
  return spec.pty ? spawnOnPty(spec.pty, file, args, spec.cwd, env, credentials) : spawnOnPipes(spec, file, args, env, credentials);
}

async function spawnOnPipes(spec: ChildSpec, file: string, args: string[], env: NodeJS.ProcessEnv, credentials: SpawnOptions): Promise<KeeperChild | { error: string }> {
  const { spawn } = await import('node:child_process');
  const child = spawn(file, args, {
    cwd: spec.cwd,
    env,
    stdio: [spec.stdin === 'null' ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: true, // the CLI's own process group: the bridge signals -pid, never the keeper
    ...credentials,
  });
  if (child.pid === undefined) {
    const err = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
    return { error: err.code === 'ENOENT' ? `cannot spawn '${file}': not found (ENOENT), or cwd '${spec.cwd}' does not exist` : `cannot spawn '${file}': ${err.message}` };
  }
  child.on('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  for (const stream of [child.stdout!, child.stderr!]) stream.on('error', () => undefined);
  // Kept from the spawn on: a child started ahead (jail-ahead.ts) may end before the keeper listens.
  let exit: [code: number | null, signal: string | null] | undefined;
  let closed: [code: number | null, signal: string | null] | undefined;
  child.once('exit', (code, signal) => (exit = [code, signal]));
  child.once('close', (code, signal) => (closed = [code, signal]));
  const when = (event: 'exit' | 'close', happened: () => [number | null, string | null] | undefined, take: (code: number | null, signal: string | null) => void): void => {
    const already = happened();
    if (already === undefined) child.once(event, take);
    else setImmediate(() => take(...already));
  };
  return {
    pid: child.pid,
    onOutput: (take) => {
      child.stdout!.on('data', (bytes: Buffer) => take('stdout', bytes));
      child.stderr!.on('data', (bytes: Buffer) => take('stderr', bytes));
    },
    onExit: (take) => when('exit', () => exit, take),
    onClose: (take) => when('close', () => closed, take),
    write: (bytes) => {
      if (!child.stdin || child.stdin.writableEnded) return false;
      child.stdin.write(bytes);
      return true;
    },
    end: () => {
      if (child.stdin && !child.stdin.writableEnded) child.stdin.end();
    },
    dropOutput: () => {
      child.stdout?.destroy();
      child.stderr?.destroy();
    },
    hold: (stream, held) => {
      const readable = child[stream];
      if (held) readable?.pause();
      else readable?.resume();
    },
  };
}

async function spawnOnPty(
  io: { cols: number; rows: number },
  file: string,
  args: string[],
  cwd: string | undefined,
  env: NodeJS.ProcessEnv,
  credentials: { uid?: number; gid?: number },
): Promise<KeeperChild | { error: string }> {
  const load = await loadPty();
  if (!load.ok) return { error: load.message };
  const { constants } = await import('node:os'); // keeper mode only: stage 1 of the bridge file does not load node:os
  const signalNames = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]));
  let term: ReturnType<typeof load.pty.spawn>;
  try {
    // encoding null: the bytes as the CLI wrote them, so capture offsets are byte offsets.
    term = load.pty.spawn(file, args, { name: 'xterm-256color', cols: io.cols, rows: io.rows, cwd, env: env as Record<string, string>, encoding: null, ...credentials });
  } catch (err) {
    return { error: `cannot spawn '${file}' in a pty: ${(err as Error).message}` };
  }
  let open = true;
  // node-pty reports the exit only after the last data, so the exit is also the close.
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    term.onExit(({ exitCode, signal }) => {
      const name = signal ? (signalNames.get(signal) ?? String(signal)) : null;
      resolve({ code: name ? null : exitCode, signal: name });
    }),
  );
  return {
    pid: term.pid,
    onOutput: (take) => {
      term.onData((data) => take('stdout', data as unknown as Buffer));
      drainBeforeDestroy(term, null, (data) => take('stdout', data as Buffer));
    },
    onExit: (take) => void exited.then(({ code, signal }) => take(code, signal)),
    onClose: (take) => void exited.then(({ code, signal }) => setImmediate(() => take(code, signal))),
    write: (bytes) => {
      if (open) term.write(bytes);
      return open;
    },
    end: () => {
      if (open) term.write('\x04');
      open = false;
    },
    dropOutput: () => undefined,
    // A pty is never held. What its CLI wrote into a held pty is lost when the CLI exits: the kernel drops
    // the pty's pending output and a read after the exit yields only what the line discipline already took
    // (measured: ~12 of ~20 KiB pending lost, also when reading resumed at once after the exit).
    hold: () => undefined,
  };
}
