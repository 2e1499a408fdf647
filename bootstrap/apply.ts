// Applies a recipe inside a sandbox through the SandboxSession surface only,
// idempotently: a marker named by the identity, directly under bootstrapDir,
// means "done" (its content is the identity, so a torn write never counts).
//
// Concurrency: a lock dir (`mkdir` is atomic in every POSIX sandbox) under
// bootstrapDir, one per bootstrapDir, so two applies — from two calls or two
// host processes — never write files or run commands at once; the loser
// waits and then finds the marker. Not temp-dir + rename: commands install
// things outside bootstrapDir, which no rename can make atomic. The holder
// rewrites a heartbeat token every `heartbeatMs`; a waiter that sees the
// token unchanged for `maxLockStaleMs` (its own clock, so sandbox and host
// clocks need not agree) breaks the lock — only if the token is still the
// one it saw — and retries. A failing command leaves no marker, so a rerun
// starts over.
//
// @ai-sdk/harness 1.0.x's HarnessAgent applies recipes itself and marks them
// `<bootstrapDir>/.bootstrap-<its identity>.ok` (identity.ts, sdkRecipeIdentity).
// Either marker counts as applied, and an apply here writes both, so a recipe
// is applied once whoever gets there first.
import { posix } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { HarnessV1Bootstrap, SandboxSession } from '../protocol/harness-v1/index.ts';
import { BootstrapError } from './errors.ts';
import { recipeIdentity, sdkRecipeIdentity } from './identity.ts';

/** How long a waiter tolerates a lock whose heartbeat does not move before breaking it. */
export const defaultMaxLockStaleMs = 30_000;
/** How long a waiter waits for another apply in total (installs can take minutes). */
export const defaultMaxLockWaitMs = 30 * 60_000;
/** How often the lock holder proves it is alive. */
const heartbeatMs = 1_000;
/** How often a waiter looks at the marker and the lock. */
const lockPollMs = 50;
/** How often a running command reports progress. */
export const defaultProgressIntervalMs = 1_000;
/** How much of a failing command's stderr the error carries. */
export const maxStderrTailBytes = 4_096;
/**
 * How long one command may run before the apply gives up on it (kills it and throws 'command-timeout').
 * An npm install takes seconds to a minute; one that cannot reach its registry can wait on the network
 * for many minutes without a word.
 */
export const defaultCommandTimeoutMs = 10 * 60_000;

export const bootstrapLogFileName = 'bootstrap.log';

export interface BootstrapProgress {
  phase: 'waiting-for-lock' | 'writing-files' | 'command' | 'done';
  /** Milliseconds since applyBootstrap was called. */
  elapsedMs: number;
  commandCount: number;
  /** 0-based index of the command, for phase 'command'. */
  commandIndex?: number;
  command?: string;
  /** Milliseconds the current command has been running. */
  commandElapsedMs?: number;
}

export interface ApplyBootstrapOptions {
  onProgress?: (progress: BootstrapProgress) => void;
  abortSignal?: AbortSignal;
  maxLockStaleMs?: number;
  maxLockWaitMs?: number;
  progressIntervalMs?: number;
  /** Per command (default defaultCommandTimeoutMs): a command still running then is killed and reported with its output. */
  commandTimeoutMs?: number;
}

export interface ApplyBootstrapResult {
  /** False when the marker was already there (this call ran nothing). */
  applied: boolean;
  identity: string;
  elapsedMs: number;
}

export function bootstrapMarkerPath(recipe: HarnessV1Bootstrap, identity = recipeIdentity(recipe)): string {
  return posix.join(recipe.bootstrapDir, `.applied-${identity}`);
}

/** Where @ai-sdk/harness 1.0.x's HarnessAgent marks this recipe applied (any content). */
export function sdkBootstrapMarkerPath(recipe: HarnessV1Bootstrap): string {
  return posix.join(recipe.bootstrapDir, `.bootstrap-${sdkRecipeIdentity(recipe)}.ok`);
}

function positive(value: number | undefined, fallback: number, name: string): number {
  const resolved = value ?? fallback;
  if (!Number.isFinite(resolved) || resolved <= 0) throw new RangeError(`${name} must be a positive number of ms, got ${value}`);
  return resolved;
}

async function sh(session: SandboxSession, command: string, env: Record<string, string>, abortSignal?: AbortSignal) {
  return session.run({ command, env, ...(abortSignal ? { abortSignal } : {}) });
}

function tail(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= maxBytes ? text : `…${bytes.subarray(bytes.length - maxBytes).toString('utf8')}`;
}

/** How often buffered log text is appended to the log while an apply runs. */
const logFlushMs = 1_000;

/** A command run after the log's last append, in the same shell (the lock's removal): one process, not two. */
type Then = { command: string; env: Record<string, string> };

/**
 * Appends to the log. SandboxSession has no append and (in @ai-sdk/provider-utils
 * 5.0.46) no process stdin, so text is buffered and each flush writes it to a
 * part file beside the log, then `cat part >> log; rm part`. Flushes are
 * chained: the log keeps the order of writes. `close(then)` runs `then` in the
 * last flush's shell, or alone when that shell never ran.
 */
function openLog(session: SandboxSession, logPath: string) {
  let buffered = '';
  let chain: Promise<void> = Promise.resolve();
  let failure: unknown;
  const flush = (then?: Then): Promise<void> => {
    if (buffered === '' && then === undefined) return chain;
    const text = buffered;
    buffered = '';
    const part = `${logPath}.part-${randomUUID()}`;
    chain = chain.then(async () => {
      let ran = false;
      try {
        if (text !== '') {
          await session.writeTextFile({ path: part, content: text });
          ran = true;
          const command = `cat "$HB_PART" >> "$HB_LOG"; s=$?; rm -f "$HB_PART"; ${then === undefined ? '' : `${then.command}; `}exit $s`;
          const appended = await session.run({ command, env: { ...then?.env, HB_PART: part, HB_LOG: logPath } });
          if (appended.exitCode !== 0) throw new Error(`cannot append to ${logPath}: ${appended.stderr.trim()}`);
        }
      } catch (error) {
        failure ??= error; // reported by close(); later flushes still try
      }
      if (then !== undefined && !ran) await session.run(then);
    });
    return chain;
  };
  const ticker = setInterval(() => void flush(), logFlushMs);
  return {
    write(text: string): void {
      buffered += text;
    },
    async close(then?: Then): Promise<void> {
      clearInterval(ticker);
      await flush(then);
      if (failure !== undefined) throw failure;
    },
  };
}

type Log = ReturnType<typeof openLog>;

async function runCommand(
  session: SandboxSession,
  recipe: HarnessV1Bootstrap,
  index: number,
  log: Log,
  report: (extra: Partial<BootstrapProgress>) => void,
  progressIntervalMs: number,
  commandTimeoutMs: number,
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  const { command, workingDirectory } = recipe.commands[index]!;
  const startedAt = performance.now();
  log.write(`[${new Date().toISOString()}] command ${index + 1}/${recipe.commands.length}: ${command}\n`);
  report({ phase: 'command', commandIndex: index, command, commandElapsedMs: 0 });
  // Killing a command that outlives its budget: the caller's abort or ours.
  const kill = new AbortController();
  const onAbort = () => kill.abort(abortSignal?.reason);
  abortSignal?.addEventListener('abort', onAbort, { once: true });
  const proc = await session.spawn({ command, workingDirectory: workingDirectory ?? recipe.bootstrapDir, abortSignal: kill.signal });
  const ticker = setInterval(() => report({ phase: 'command', commandIndex: index, command, commandElapsedMs: performance.now() - startedAt }), progressIntervalMs);
  let stderr = '';
  // Both streams interleaved, for a command that hangs (npm may say where it waits on stdout or stderr).
  let output = '';
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>, keep: boolean) => {
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
      log.write(decoder.decode(chunk, { stream: true }));
      const text = new TextDecoder().decode(chunk);
      output = tail(output + text, maxStderrTailBytes * 2);
      if (keep) stderr = tail(stderr + text, maxStderrTailBytes * 2);
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), commandTimeoutMs);
  });
  try {
    const finished = Promise.all([pump(proc.stdout, false), pump(proc.stderr, true)]).then(() => proc.wait());
    const outcome = await Promise.race([finished, timedOut]);
    const ms = performance.now() - startedAt;
    if (outcome === 'timeout') {
      kill.abort(new Error('bootstrap command timed out'));
      finished.catch(() => undefined); // its streams end (or not) after the kill; nothing waits for them
      const outputTail = tail(output, maxStderrTailBytes);
      log.write(`\n[${new Date().toISOString()}] command ${index + 1} still running after ${ms.toFixed(0)} ms: killed\n`);
      throw new BootstrapError(
        'command-timeout',
        `bootstrap command ${index + 1}/${recipe.commands.length} of ${recipe.harnessId} was still running after ${commandTimeoutMs} ms and was killed: ${command}\n--- output (tail) ---\n${outputTail === '' ? '(none)' : outputTail}`,
        { command, commandIndex: index, stderrTail: outputTail },
      );
    }
    const { exitCode } = outcome;
    log.write(`[${new Date().toISOString()}] command ${index + 1} exited ${exitCode} after ${ms.toFixed(0)} ms\n`);
    if (exitCode !== 0) {
      const stderrTail = tail(stderr, maxStderrTailBytes);
      throw new BootstrapError(
        'command-failed',
        `bootstrap command ${index + 1}/${recipe.commands.length} of ${recipe.harnessId} failed with exit code ${exitCode}: ${command}\n--- stderr (tail) ---\n${stderrTail}`,
        { command, commandIndex: index, exitCode, stderrTail },
      );
    }
  } finally {
    clearInterval(ticker);
    clearTimeout(timer);
    abortSignal?.removeEventListener('abort', onAbort);
  }
}

const encodedFiles = new WeakMap<HarnessV1Bootstrap['files'][number], Uint8Array>();

/**
 * A recipe file's UTF-8 bytes, encoded once for a frozen file (defineBootstrapRecipe's): a host starting many
 * sessions would otherwise make a fresh copy of the bridge bundle (~220 KiB) per session, each living until a GC,
 * and those copies fragment the native heap (docs/bridge-internals.md#host-memory).
 */
function fileBytes(file: HarnessV1Bootstrap['files'][number]): Uint8Array {
  const known = encodedFiles.get(file);
  if (known !== undefined) return known;
  const bytes = new TextEncoder().encode(file.content);
  if (Object.isFrozen(file)) encodedFiles.set(file, bytes);
  return bytes;
}

/** Writes files and runs commands into `log`; the caller holds the lock and closes the log. */
async function applyLocked(
  session: SandboxSession,
  recipe: HarnessV1Bootstrap,
  identity: string,
  log: Log,
  report: (extra: Partial<BootstrapProgress>) => void,
  progressIntervalMs: number,
  commandTimeoutMs: number,
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  const signal = abortSignal ? { abortSignal } : {};
  report({ phase: 'writing-files' });
  for (const file of recipe.files) await session.writeBinaryFile({ path: file.path, content: fileBytes(file), ...signal });
  try {
    log.write(`[${new Date().toISOString()}] apply ${identity}: ${recipe.files.length} files written\n`);
    for (let i = 0; i < recipe.commands.length; i++) {
      abortSignal?.throwIfAborted();
      await runCommand(session, recipe, i, log, report, progressIntervalMs, commandTimeoutMs, abortSignal);
    }
    await session.writeTextFile({ path: bootstrapMarkerPath(recipe, identity), content: `${identity}\n`, ...signal });
    await session.writeTextFile({ path: sdkBootstrapMarkerPath(recipe), content: '', ...signal });
    log.write(`[${new Date().toISOString()}] apply ${identity}: done\n`);
  } catch (error) {
    log.write(`[${new Date().toISOString()}] apply ${identity}: failed: ${error instanceof Error ? error.message : String(error)}\n`);
    throw error;
  }
}

/** Ours (its content is the identity, so a torn write never counts), or the SDK's (it writes an empty file last). */
async function markerPresent(session: SandboxSession, recipe: HarnessV1Bootstrap, identity: string, abortSignal?: AbortSignal): Promise<boolean> {
  const signal = abortSignal ? { abortSignal } : {};
  const content = await session.readTextFile({ path: bootstrapMarkerPath(recipe, identity), ...signal });
  if (content === `${identity}\n`) return true;
  return (await session.readTextFile({ path: sdkBootstrapMarkerPath(recipe), ...signal })) !== null;
}

export async function applyBootstrap(
  session: SandboxSession,
  recipe: HarnessV1Bootstrap,
  options: ApplyBootstrapOptions = {},
): Promise<ApplyBootstrapResult> {
  const startedAt = performance.now();
  const { abortSignal, onProgress } = options;
  const maxLockStaleMs = positive(options.maxLockStaleMs, defaultMaxLockStaleMs, 'maxLockStaleMs');
  const maxLockWaitMs = positive(options.maxLockWaitMs, defaultMaxLockWaitMs, 'maxLockWaitMs');
  const progressIntervalMs = positive(options.progressIntervalMs, defaultProgressIntervalMs, 'progressIntervalMs');
  const commandTimeoutMs = positive(options.commandTimeoutMs, defaultCommandTimeoutMs, 'commandTimeoutMs');
  const identity = recipeIdentity(recipe);
  const done = (applied: boolean): ApplyBootstrapResult => {
    const elapsedMs = performance.now() - startedAt;
    onProgress?.({ phase: 'done', elapsedMs, commandCount: recipe.commands.length });
    return { applied, identity, elapsedMs };
  };
  const report = (extra: Partial<BootstrapProgress>) =>
    onProgress?.({ phase: 'command', ...extra, elapsedMs: performance.now() - startedAt, commandCount: recipe.commands.length });

  if (await markerPresent(session, recipe, identity, abortSignal)) return done(false);

  const lockDir = posix.join(recipe.bootstrapDir, '.apply.lock');
  const env = { HB_DIR: recipe.bootstrapDir, HB_LOCK: lockDir };
  const waitUntil = Date.now() + maxLockWaitMs;
  let seenToken: string | undefined;
  let seenSince = Date.now();
  let reportedWaiting = false;
  for (;;) {
    abortSignal?.throwIfAborted();
    const token = randomUUID();
    const acquire = await sh(
      session,
      'mkdir -p "$HB_DIR" || exit 3; mkdir "$HB_LOCK" 2>/dev/null || exit 4; printf %s "$HB_TOKEN" > "$HB_LOCK/heartbeat"',
      { ...env, HB_TOKEN: token },
      abortSignal,
    );
    if (acquire.exitCode === 0) {
      let beat = 0;
      let pendingBeat: Promise<void> = Promise.resolve();
      const heartbeat = setInterval(() => {
        beat += 1;
        pendingBeat = Promise.resolve(session.writeTextFile({ path: posix.join(lockDir, 'heartbeat'), content: `${token}:${beat}` })).catch(() => {
          // A missed beat only makes the lock look older; the next beat retries.
        });
      }, heartbeatMs);
      let log: Log | undefined;
      try {
        // Another apply may have finished between our marker check and our mkdir.
        if (!(await markerPresent(session, recipe, identity, abortSignal))) {
          log = openLog(session, posix.join(recipe.bootstrapDir, bootstrapLogFileName));
          await applyLocked(session, recipe, identity, log, report, progressIntervalMs, commandTimeoutMs, abortSignal);
        }
      } finally {
        clearInterval(heartbeat);
        // A beat still in flight would recreate the lock dir (writes create parents) after we remove it.
        await pendingBeat;
        const release = { command: 'rm -rf "$HB_LOCK"', env };
        // The log's last part and the lock's removal in one shell.
        if (log === undefined) await sh(session, release.command, release.env);
        else await log.close(release);
      }
      return done(log !== undefined);
    }
    if (acquire.exitCode !== 4) {
      throw new BootstrapError('sandbox-failed', `cannot create bootstrapDir ${recipe.bootstrapDir} (exit ${acquire.exitCode}): ${tail(acquire.stderr, maxStderrTailBytes)}`);
    }
    if (!reportedWaiting) {
      reportedWaiting = true;
      onProgress?.({ phase: 'waiting-for-lock', elapsedMs: performance.now() - startedAt, commandCount: recipe.commands.length });
    }
    await new Promise((resolve) => setTimeout(resolve, lockPollMs));
    if (await markerPresent(session, recipe, identity, abortSignal)) return done(false);
    const current = (await session.readTextFile({ path: posix.join(lockDir, 'heartbeat') })) ?? '';
    if (current !== seenToken) {
      seenToken = current;
      seenSince = Date.now();
    } else if (Date.now() - seenSince > maxLockStaleMs) {
      // Break only the lock we judged stale: a fresh holder has a different token.
      await sh(
        session,
        '[ "$(cat "$HB_LOCK/heartbeat" 2>/dev/null)" = "$HB_SEEN" ] && mv "$HB_LOCK" "$HB_LOCK.stale-$HB_NONCE" && rm -rf "$HB_LOCK.stale-$HB_NONCE"; true',
        { ...env, HB_SEEN: current, HB_NONCE: randomUUID() },
      );
      seenToken = undefined;
    }
    if (Date.now() > waitUntil) {
      throw new BootstrapError('lock-timeout', `another bootstrap of ${recipe.bootstrapDir} held the lock for more than ${maxLockWaitMs} ms`);
    }
  }
}
