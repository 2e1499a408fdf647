// Starting a bridge inside the sandbox and finding one that is already there.
// The token is minted here and handed over in a file of the state dir (0600,
// umask 077) that the bridge reads and renames to `token` once it holds the
// state lock — never in its environment, which /proc/<pid>/environ would show
// for the bridge's whole life (docs/security.md) — and read back from the
// sandbox on resume, so resume payloads carry no secret. After the ready line
// the bridge's stdout/stderr are drained (it prints nothing more by design)
// and a bounded stderr tail is kept for errors.
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { bridgeShellCommand } from '../../bootstrap/bridge-command.mjs';
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import { bridgeIsolationOf, mergeIsolation, type BridgeIsolation } from './bridge-isolation.ts';
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
  /** How the bridge isolates the CLI from itself (docs/security.md#settings); default: what the sandbox session carries, else the bridge's (auto). */
  readonly isolation?: BridgeIsolation;
  /** While no host owns it (bridge/server/owner-watch.ts): exit after this long idle; fail a host tool call waiting this long. */
  readonly idleExitMs?: number;
  readonly ownerlessToolTimeoutMs?: number;
  /** The journal caps and the disk-full wait (bridge/journal/journal-caps.ts, docs/bridge-internals.md#disk-full). */
  readonly journal?: JournalSettings;
};

/** Passed to the bridge in its environment at spawn (removed before CLIs inherit it). */
export type JournalSettings = { readonly maxTurnJournalBytes?: number; readonly maxSessionJournalBytes?: number; readonly diskFullExitMs?: number };

function journalEnv(journal: JournalSettings = {}): Record<string, string> {
  const env: Record<string, string> = {};
  if (journal.maxTurnJournalBytes !== undefined) env.HARNESS_BRIDGE_MAX_TURN_JOURNAL_BYTES = String(journal.maxTurnJournalBytes);
  if (journal.maxSessionJournalBytes !== undefined) env.HARNESS_BRIDGE_MAX_SESSION_JOURNAL_BYTES = String(journal.maxSessionJournalBytes);
  if (journal.diskFullExitMs !== undefined) env.HARNESS_BRIDGE_DISK_FULL_EXIT_MS = String(journal.diskFullExitMs);
  return env;
}

export async function spawnBridge(options: SpawnBridgeOptions): Promise<{ ready: BridgeReady; token: string }> {
  const token = randomBytes(32).toString('hex');
  const tokenFile = `token.new.${randomBytes(8).toString('hex')}`;
  // Handed over before the spawn, in a file only the bridge's uid can read; the bridge renames it
  // to `token` once it holds the state lock (a bridge refused by the lock removes it).
  await writeToken(options.sandbox, options.stateDir, token, tokenFile);
  const isolation = mergeIsolation(options.isolation, bridgeIsolationOf(options.sandbox)) ?? {};
  const process = await options.sandbox.spawn({
    // The bridge's one command line (node flags included), shared with the benchmark.
    command: bridgeShellCommand({
      host: Boolean(options.host),
      recipeIdentity: Boolean(options.recipeIdentity),
      tokenFile: true,
      isolation: isolation.mode !== undefined,
      requireIsolation: isolation.require === true,
      cliUser: isolation.cliUser !== undefined,
      networkPolicy: isolation.networkPolicyFile !== undefined,
      srt: isolation.srt !== undefined,
      sessionsRoot: isolation.sessionsRoot !== undefined,
    }),
    env: {
      HB_NODE: options.nodeCommand,
      HB_FILE: options.bridgeFile,
      HB_STATE: options.stateDir,
      HB_PORT: String(options.port),
      HB_HOST: options.host ?? '',
      HB_RECIPE: options.recipeIdentity ?? '',
      HB_TOKEN_FILE: tokenFile,
      HB_ISOLATION: isolation.mode ?? '',
      HB_CLI_USER: isolation.cliUser ?? '',
      HB_NETWORK_POLICY: isolation.networkPolicyFile ?? '',
      HB_SRT: isolation.srt ?? '',
      HB_SESSIONS_ROOT: isolation.sessionsRoot ?? '',
      ...(options.idleExitMs === undefined ? {} : { HARNESS_BRIDGE_IDLE_EXIT_MS: String(options.idleExitMs) }),
      ...(options.ownerlessToolTimeoutMs === undefined ? {} : { HARNESS_BRIDGE_OWNERLESS_TOOL_MS: String(options.ownerlessToolTimeoutMs) }),
      ...journalEnv(options.journal),
    },
    ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
  });
  const stderr = drainTail(process.stderr);
  try {
    const ready = await readReadyLine(process.stdout, options.readyTimeoutMs, process.wait());
    // The bridge outlives this host process by design (cross-process resume); providers that
    // can detach the handle from our event loop (the local one) expose unref().
    (process as { unref?: () => void }).unref?.();
    return { ready, token };
  } catch (error) {
    await process.kill();
    // A bridge that died before reading it leaves the handed-over file behind.
    await options.sandbox.run({ command: 'rm -f "$HB_STATE/$HB_TOKEN_FILE"', env: { HB_STATE: options.stateDir, HB_TOKEN_FILE: tokenFile } }).then(undefined, () => undefined);
    const tail = (await Promise.race([stderr.done, delay(200)]), stderr.tail()).trim();
    const reason = error instanceof Error ? error.message : String(error);
    // A full disk has its own code: the application frees space and resumes, nothing else is wrong.
    const diskFull = /ENOSPC/.test(tail) || /ENOSPC/.test(reason);
    const failure = new BridgeSessionError(
      diskFull ? 'disk-full' : 'bridge-start-failed',
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

/**
 * The token into `<stateDir>/<name>` (0600; written whole, then renamed). Dirs the path needs are
 * created 0711 (umask 066: a CLI of its own uid may pass through to its areas, never list them),
 * and the state dir loses any group/other read or write; the bridge opens it to 0711 when its CLI
 * has a uid of its own, which a later write here (a resume) leaves in place.
 */
async function writeToken(sandbox: SandboxSession, stateDir: string, token: string, name: string): Promise<void> {
  const result = await sandbox.run({
    command:
      'umask 066 && mkdir -p "$HB_STATE" && chmod u+rwx,go-rw "$HB_STATE" && umask 077 && ' +
      'printf %s "$HB_TOKEN" > "$HB_STATE/$HB_NAME.tmp" && mv "$HB_STATE/$HB_NAME.tmp" "$HB_STATE/$HB_NAME"',
    env: { HB_STATE: stateDir, HB_TOKEN: token, HB_NAME: name },
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
