// Processes of a local sandbox session: spawn (web streams, optional stdin),
// run, wait and kill. Every process is a detached group leader, so kill() and
// stop() reach everything it started, and it outlives the host process.
// The pid record comes from pids.ts (isolating the CLI is the bridge's: bridge/jail/).
import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { stat } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';
import type { SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { holdOpen } from '../../session/hold-open.ts';
import { maxKillGraceMs, recordPid, signalGroup } from './pids.ts';

type SandboxProcess = Awaited<ReturnType<SandboxSession['spawn']>>;
type RunResult = Awaited<ReturnType<SandboxSession['run']>>;

/**
 * A local process handle: the contract's, plus two local extensions. `stdin`
 * (only with `stdin: true`; @ai-sdk/provider-utils 5.0.46 has no stdin) and
 * `unref()`: stop this process and its pipes from keeping the host's event loop
 * alive, so a host can exit (detach, suspend) while the process keeps running.
 */
export type LocalSandboxProcess = SandboxProcess & {
  readonly stdin?: WritableStream<Uint8Array>;
  unref(): void;
};

/** spawn with the local `stdin: true` extension. */
export type LocalSpawn = (options: Parameters<SandboxSession['spawn']>[0] & { stdin?: boolean }) => Promise<LocalSandboxProcess>;

/** After exit, how long run() waits for output still in the pipes (a background grandchild may hold them open). */
export const maxRunDrainMs = 500;
/** run() keeps at most this much of each stream; beyond it the text is cut and marked. */
export const maxRunOutputBytes = 32 * 1024 * 1024;

export interface ProcessHost {
  /** Resolves a working directory the caller gave (relative → session dir). */
  resolveCwd(path: string | undefined): string;
  /** The executable and argv for a shell command in this session. */
  launcher(command: string, cwd: string): { file: string; args: string[] };
  pidFile: string;
  /** Live processes of this provider instance, for stop(). */
  live: Set<LiveProcess>;
}

export interface LiveProcess {
  pid: number;
  kill(): Promise<void>;
}

interface SpawnOptions {
  command: string;
  workingDirectory?: string;
  env?: Record<string, string>;
  abortSignal?: AbortSignal;
  stdin?: boolean;
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const signo = signal === null ? 0 : (constants.signals[signal] ?? 0);
  return 128 + signo;
}

async function start<W>(host: ProcessHost, options: SpawnOptions, wire: (child: ChildProcess) => W) {
  options.abortSignal?.throwIfAborted();
  const cwd = host.resolveCwd(options.workingDirectory);
  const info = await stat(cwd).catch(() => null);
  if (info === null || !info.isDirectory()) {
    throw Object.assign(new Error(`working directory does not exist: ${cwd}`), { code: 'ENOENT' });
  }
  const { file, args } = host.launcher(options.command, cwd);
  const child = spawnChild(file, args, {
    cwd,
    env: { ...process.env, ...options.env },
    detached: true,
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  // Wire everything before any await: a fast command can exit while we record
  // its pid, and Node drops (resumes) output of pipes nobody listens to at exit.
  const wired = wire(child);
  let exited = false;
  const exit = new Promise<number>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      resolve(exitCodeOf(code, signal));
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  const pid = child.pid as number;
  await recordPid(host.pidFile, pid);

  let killing: Promise<void> | undefined;
  // Held open: an unref'd process's exit and the grace timer would not keep the host alive until it is gone.
  const kill = (): Promise<void> => {
    killing ??= holdOpen(async () => {
      if (!exited) {
        signalGroup(pid, 'SIGTERM');
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, maxKillGraceMs).unref())]);
      }
      // The leader may be gone while group members linger: finish the group.
      signalGroup(pid, 'SIGKILL');
      await exit;
    });
    return killing;
  };

  const entry: LiveProcess = { pid, kill };
  host.live.add(entry);
  void exit.then(() => host.live.delete(entry));

  const onAbort = () => void kill();
  options.abortSignal?.addEventListener('abort', onAbort, { once: true });
  void exit.then(() => options.abortSignal?.removeEventListener('abort', onAbort));
  // Aborted while the process was being started (the stat, the spawn, its pid recorded): a listener added
  // after the abort never fires, so that abort is acted on here.
  if (options.abortSignal?.aborted) onAbort();

  return { child, pid, exit, kill, wired };
}

export async function spawnProcess(host: ProcessHost, options: SpawnOptions): Promise<LocalSandboxProcess> {
  const { child, pid, exit, kill, wired } = await start(host, options, (c) => ({
    stdout: Readable.toWeb(c.stdout!) as unknown as ReadableStream<Uint8Array>,
    stderr: Readable.toWeb(c.stderr!) as unknown as ReadableStream<Uint8Array>,
  }));
  const signal = options.abortSignal;
  const handle: LocalSandboxProcess = {
    pid,
    ...wired,
    wait: async () => {
      const exitCode = await exit;
      if (signal?.aborted) throw signal.reason;
      return { exitCode };
    },
    kill,
    /** Reads still work while the host stays up for other reasons (LocalSandboxProcess). */
    unref: () => {
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
    },
  };
  if (!options.stdin) return handle;
  // EPIPE after the child exits surfaces through the web stream's writer; the
  // listener only keeps Node from treating it as an uncaught error.
  child.stdin!.on('error', () => undefined);
  return { ...handle, stdin: Writable.toWeb(child.stdin!) as unknown as WritableStream<Uint8Array> };
}

function collect(stream: NodeJS.ReadableStream): { text: () => string } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let cut = false;
  stream.on('data', (chunk: Buffer) => {
    if (bytes + chunk.length > maxRunOutputBytes) {
      cut = true;
      return;
    }
    bytes += chunk.length;
    chunks.push(chunk);
  });
  return { text: () => Buffer.concat(chunks).toString('utf8') + (cut ? `\n[output cut at ${maxRunOutputBytes} bytes]\n` : '') };
}

export async function runProcess(host: ProcessHost, options: SpawnOptions): Promise<RunResult> {
  const { child, exit, wired } = await start(host, { ...options, stdin: false }, (c) => ({
    stdout: collect(c.stdout!),
    stderr: collect(c.stderr!),
    closed: new Promise<void>((resolve) => c.once('close', () => resolve())),
  }));
  const { stdout, stderr, closed } = wired;
  const exitCode = await exit;
  const drained = await Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), maxRunDrainMs).unref()),
  ]);
  if (!drained) {
    // A background process still holds the pipes; stop reading so run() returns.
    child.stdout!.destroy();
    child.stderr!.destroy();
  }
  if (options.abortSignal?.aborted) throw options.abortSignal.reason;
  return { exitCode, stdout: stdout.text(), stderr: stderr.text() };
}
