// Starting a bridge inside the sandbox and finding one that is already there.
// The token is minted here, written to the state dir with mode 0600 (umask 077)
// and read back from the sandbox on resume, so resume payloads carry no secret.
// After the ready line the bridge's stdout/stderr are drained (it prints
// nothing more by design) and a bounded stderr tail is kept for errors.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { bridgeShellCommand } from '../../bootstrap/bridge-command.mjs';
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import { BridgeSessionError } from '../session/errors.ts';

export const bridgeReadySchema = z.object({
  type: z.literal('bridge-ready'),
  port: z.number().int().min(1).max(65535),
  bridgeId: z.string().min(1),
  journalId: z.string().min(1),
  version: z.string(),
  pid: z.number().int().optional(),
});
export type BridgeReady = z.infer<typeof bridgeReadySchema>;

/** Bytes of bridge stderr kept for a startup error. */
const maxStderrTailBytes = 4096;

export type SpawnBridgeOptions = {
  readonly sandbox: SandboxSession;
  readonly nodeCommand: string;
  readonly bridgeFile: string;
  readonly stateDir: string;
  /** 0 = any free port (local sandboxes); a provider with pre-declared ports passes one. */
  readonly port: number;
  readonly host?: string;
  readonly recipeIdentity?: string;
  readonly readyTimeoutMs: number;
  readonly abortSignal?: AbortSignal;
};

export async function spawnBridge(options: SpawnBridgeOptions): Promise<{ ready: BridgeReady; token: string }> {
  const token = randomBytes(32).toString('hex');
  const process = await options.sandbox.spawn({
    // The bridge's one command line (node flags included), shared with the benchmark.
    command: bridgeShellCommand({ host: Boolean(options.host), recipeIdentity: Boolean(options.recipeIdentity) }),
    env: {
      HB_NODE: options.nodeCommand,
      HB_FILE: options.bridgeFile,
      HB_STATE: options.stateDir,
      HB_PORT: String(options.port),
      HB_HOST: options.host ?? '',
      HB_RECIPE: options.recipeIdentity ?? '',
      // The token travels in the bridge's environment (never argv); the bridge strips it from the CLI's.
      HARNESS_BRIDGE_TOKEN: token,
    },
    ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
  });
  const stderr = drainTail(process.stderr);
  let ready: BridgeReady | undefined;
  try {
    ready = await readReadyLine(process.stdout, options.readyTimeoutMs, process.wait());
    // The bridge outlives this host process by design (cross-process resume); providers that
    // can detach the handle from our event loop (the local one) expose unref().
    (process as { unref?: () => void }).unref?.();
    // Persisted only once this bridge is up: a bridge refused because a live one still holds the
    // state dir must not rotate the token the live one checks (a resuming host reads it from here).
    await writeToken(options.sandbox, options.stateDir, token);
    return { ready, token };
  } catch (error) {
    if (ready !== undefined) throw error; // the token write failed; the bridge itself is fine but unreachable by resume
    await process.kill();
    const tail = (await Promise.race([stderr.done, delay(200)]), stderr.tail()).trim();
    const reason = error instanceof Error ? error.message : String(error);
    const failure = new BridgeSessionError(
      'bridge-start-failed',
      `bridge did not become ready (${reason})${tail ? `; stderr tail:\n${tail}` : ''}`,
      error,
    );
    throw Object.assign(failure, { exitCode: (error as { exitCode?: number }).exitCode });
  }
}

/** Reads the bridge's token back from its state dir (resume). */
export async function readToken(sandbox: SandboxSession, stateDir: string): Promise<string | null> {
  const token = await sandbox.readTextFile({ path: `${stateDir}/token` });
  return token === null ? null : token.trim();
}

/** The ready line the last bridge on this state dir wrote, if any. */
export async function readBridgeState(sandbox: SandboxSession, stateDir: string): Promise<BridgeReady | null> {
  const text = await sandbox.readTextFile({ path: `${stateDir}/bridge.json` });
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null; // a torn bridge.json (bridge killed while writing) just means "no known bridge"
  }
  const parsed = bridgeReadySchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/** Exit code of a bridge refused because a live bridge holds the state dir (bridge/journal/state-lock.ts). */
export const EXIT_STATE_DIR_LOCKED = 75;

async function writeToken(sandbox: SandboxSession, stateDir: string, token: string): Promise<void> {
  const result = await sandbox.run({
    command: 'umask 077 && mkdir -p "$HB_STATE" && chmod 700 "$HB_STATE" && printf %s "$HB_TOKEN" > "$HB_STATE/token.tmp" && mv "$HB_STATE/token.tmp" "$HB_STATE/token"',
    env: { HB_STATE: stateDir, HB_TOKEN: token },
  });
  if (result.exitCode !== 0) {
    throw new BridgeSessionError('bridge-start-failed', `could not write the bridge token into ${stateDir}: ${result.stderr.trim()}`);
  }
}

async function readReadyLine(
  stdout: ReadableStream<Uint8Array>,
  timeoutMs: number,
  exited: PromiseLike<{ exitCode: number }>,
): Promise<BridgeReady> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ready line within ${timeoutMs} ms`)), timeoutMs);
  });
  const exit = Promise.resolve(exited).then(({ exitCode }) => {
    throw Object.assign(new Error(`bridge exited with code ${exitCode} before its ready line`), { exitCode });
  });
  try {
    for (;;) {
      const { value, done } = await Promise.race([reader.read(), timeout, exit]);
      if (done) {
        // Usually the bridge exited: wait briefly for its code (75 means "a live bridge holds the state dir").
        const code = await Promise.race([Promise.resolve(exited).then(({ exitCode }) => exitCode), delay(1_000).then(() => undefined)]);
        throw Object.assign(new Error(`bridge closed stdout before its ready line${code === undefined ? '' : ` (exit code ${code})`}`), {
          exitCode: code,
        });
      }
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith('{')) continue;
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch {
          continue; // not the ready line
        }
        const parsed = bridgeReadySchema.safeParse(json);
        if (parsed.success) {
          void drain(reader);
          return parsed.data;
        }
      }
    }
  } finally {
    clearTimeout(timer);
    exit.catch(() => undefined); // settled later when the bridge exits; nobody waits on it then
  }
}

/** Keeps reading so the bridge never blocks on a full pipe; ends when the pipe closes. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    for (;;) if ((await reader.read()).done) return;
  } catch {
    return; // the bridge exited or the sandbox dropped the stream: nothing left to drain
  }
}

function drainTail(stream: ReadableStream<Uint8Array>): { tail(): string; done: Promise<void> } {
  let tail = '';
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  const done = (async () => {
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        tail = (tail + decoder.decode(value, { stream: true })).slice(-maxStderrTailBytes);
      }
    } catch {
      return; // stream torn down with the process: the tail so far is what we have
    }
  })();
  return { tail: () => tail, done };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
