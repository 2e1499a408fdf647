// Running the docker CLI from the host: one command, its output collected
// (bounded), stdin bytes fed in. Every other file of the provider talks to
// Docker through here; nothing reaches the daemon's socket directly.
import { spawn } from 'node:child_process';
import { DockerSandboxError } from './errors.ts';

/** docker's own output we keep per stream; image tars and file contents pass through stdin, not here. */
const maxOutputBytes = 64 * 1024 * 1024;

export type DockerResult = { code: number; stdout: Buffer; stderr: string };

/** Runs `docker ...args`; resolves with its exit code and output (never rejects on a non-zero exit). */
export function docker(command: string, args: readonly string[], options: { input?: Uint8Array; abortSignal?: AbortSignal } = {}): Promise<DockerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'], signal: options.abortSignal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes <= maxOutputBytes) out.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', (error) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') reject(new DockerSandboxError('docker-unavailable', `no ${command} executable on PATH`, { cause: error }));
      else reject(error);
    });
    child.once('close', (code, signal) => resolve({ code: code ?? 128, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') + (signal ? `(killed by ${signal})` : '') }));
    if (options.input) {
      child.stdin!.on('error', () => undefined); // docker exited early: its exit code says why
      child.stdin!.end(options.input);
    }
  });
}

/** Like docker(), but a non-zero exit rejects with docker-failed carrying stderr. */
export async function dockerOk(command: string, args: readonly string[], options: { input?: Uint8Array; abortSignal?: AbortSignal } = {}): Promise<string> {
  const result = await docker(command, args, options);
  if (result.code !== 0) {
    throw new DockerSandboxError('docker-failed', `docker ${args.slice(0, 2).join(' ')} exited ${result.code}: ${result.stderr.trim().slice(-2000)}`);
  }
  return result.stdout.toString('utf8');
}

/** Whether this machine can run containers: undefined when it can, else the reason. */
export async function dockerUnavailable(command = 'docker'): Promise<string | undefined> {
  try {
    const result = await docker(command, ['version', '--format', '{{.Server.Version}}']);
    return result.code === 0 ? undefined : `docker daemon does not answer: ${result.stderr.trim().split('\n').at(-1)}`;
  } catch (error) {
    return (error as Error).message;
  }
}
