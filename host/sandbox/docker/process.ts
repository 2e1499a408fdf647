// Processes of a Docker sandbox session, all through `docker exec` (their
// environment off its command line: exec-env.ts): spawn (web
// streams, optional stdin with `-i`), run, wait and kill. Killing the docker
// client would leave the process running inside the container, so each process
// starts as the leader of its own session (`setsid`) and records its pid in the
// container (/run/hb-procs/<id>); kill() signals that group from inside:
// SIGTERM, a grace period, SIGKILL — the whole tree, as the contract asks.
import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import type { SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { holdOpen } from '../../session/hold-open.ts';
import { docker } from './docker-cli.ts';
import { execEnv } from './exec-env.ts';

type SandboxProcess = Awaited<ReturnType<SandboxSession['spawn']>>;
type RunResult = Awaited<ReturnType<SandboxSession['run']>>;

/** A process handle: the contract's plus `stdin` (with `stdin: true`) and `unref()`, as the local provider has them. */
export type DockerSandboxProcess = SandboxProcess & { readonly stdin?: WritableStream<Uint8Array>; unref(): void };

export type DockerSpawnOptions = Parameters<SandboxSession['spawn']>[0] & { stdin?: boolean };

/** Between SIGTERM and SIGKILL of a process group. */
const killGraceMs = 2_000;

export interface ContainerHost {
  readonly docker: string;
  readonly container: string;
  /** Absolute working directory for a caller's (maybe relative) one. */
  resolveCwd(path: string | undefined): string;
  /** Starts the container again when stop() stopped it. */
  ensureRunning(): Promise<void>;
  /** Live processes, for stop(). */
  readonly live: Set<{ kill(): Promise<void> }>;
}

/** Records its pid (the leader of a new session: its group id too), then becomes the command. */
const leaderScript = 'mkdir -p /run/hb-procs && echo $$ > "/run/hb-procs/$0" && exec /bin/sh -c "$1"';

function execArgs(host: ContainerHost, options: DockerSpawnOptions, procId: string, env: readonly string[]): string[] {
  return ['exec', ...(options.stdin ? ['-i'] : []), '-w', host.resolveCwd(options.workingDirectory), ...env, host.container, 'setsid', '-w', '/bin/sh', '-c', leaderScript, procId, options.command];
}

/** Signals the process group recorded under `procId` inside the container. */
async function signalGroup(host: ContainerHost, procId: string, signal: 'TERM' | 'KILL'): Promise<void> {
  // `env kill`: the kill executable (dash's builtin takes no process group).
  const script = `p=$(cat "/run/hb-procs/$0" 2>/dev/null) && env kill -${signal} -- "-$p" 2>/dev/null; true`;
  await docker(host.docker, ['exec', host.container, '/bin/sh', '-c', script, procId]).catch(() => undefined);
}

async function start(host: ContainerHost, options: DockerSpawnOptions) {
  options.abortSignal?.throwIfAborted();
  await host.ensureRunning();
  const procId = randomUUID();
  const env = execEnv(options.env);
  let child: ChildProcess;
  try {
    child = spawnChild(host.docker, execArgs(host, options, procId, env.args), {
      detached: true,
      env: env.clientEnv,
      stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe', ...(env.fd === undefined ? [] : [env.fd])],
    });
  } finally {
    env.release(); // the client holds its own copy of the descriptor from the fork on
  }
  let exited = false;
  const exit = new Promise<number>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      resolve(code ?? (signal ? 128 + 15 : 1));
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  let killing: Promise<void> | undefined;
  const kill = (): Promise<void> => {
    killing ??= holdOpen(async () => {
      if (!exited) {
        await signalGroup(host, procId, 'TERM');
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, killGraceMs).unref())]);
      }
      if (!exited) await signalGroup(host, procId, 'KILL');
      await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, killGraceMs).unref())]);
      if (!exited) child.kill('SIGKILL'); // the container is gone or stopped: the client is all that is left
      await exit;
    });
    return killing;
  };
  const entry = { kill };
  host.live.add(entry);
  void exit.then(() => host.live.delete(entry));
  const onAbort = () => void kill();
  options.abortSignal?.addEventListener('abort', onAbort, { once: true });
  void exit.then(() => options.abortSignal?.removeEventListener('abort', onAbort));
  // Aborted while the exec was being started (the container's check, the spawn): a listener added after the
  // abort never fires, so that abort is acted on here.
  if (options.abortSignal?.aborted) onAbort();
  return { child, exit, kill };
}

export async function spawnProcess(host: ContainerHost, options: DockerSpawnOptions): Promise<DockerSandboxProcess> {
  const { child, exit, kill } = await start(host, options);
  const signal = options.abortSignal;
  const handle: DockerSandboxProcess = {
    stdout: Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>,
    stderr: Readable.toWeb(child.stderr!) as unknown as ReadableStream<Uint8Array>,
    wait: async () => {
      const exitCode = await exit;
      if (signal?.aborted) throw signal.reason;
      return { exitCode };
    },
    kill,
    unref: () => {
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as { unref?: () => void } | null)?.unref?.();
    },
  };
  if (!options.stdin) return handle;
  child.stdin!.on('error', () => undefined); // EPIPE after exit surfaces through the web stream's writer
  return { ...handle, stdin: Writable.toWeb(child.stdin!) as unknown as WritableStream<Uint8Array> };
}

export async function runProcess(host: ContainerHost, options: DockerSpawnOptions): Promise<RunResult> {
  const { child, exit } = await start(host, { ...options, stdin: false });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exitCode = await exit;
  // A background process may still hold the pipes: what it printed so far is the output.
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 500).unref())]);
  if (options.abortSignal?.aborted) throw options.abortSignal.reason;
  return { exitCode, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
