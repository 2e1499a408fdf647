// The recovery ladder, cheapest rung first (docs/design.md#d5):
//   attach — the bridge named in the resume state still answers, same journal;
//   replay — it is gone but its journal is on the sandbox disk: a new bridge on
//            the same state dir continues the seq numbering;
//   rerun  — the journal is gone (or the turn's producer died unfinished, which
//            the session finds out while replaying): re-drive the CLI thread.
// This module only reaches a bridge and says which rung that was; the session
// decides whether the in-flight turn needs the rerun on top.
import type { HarnessV1PortEndpoint, SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HelloFrame } from '../../protocol/v1/index.ts';
import type { CreateConnection, OpenSocket } from '../channel/index.ts';
import { EXIT_STATE_DIR_LOCKED, readBridgeState, readToken, spawnBridge, type BridgeReady, type SpawnBridgeOptions } from './bridge-process.ts';
import { HOST_SESSION_LIMITS } from '../limits.ts';
import { probeBridge, type ProbeResult } from './probe.ts';
import { spareSocket } from './spare-socket.ts';
import { BridgeSessionError } from '../session/errors.ts';
import { markPhase } from '../phase-marks.ts';

export type Rung = 'fresh' | 'attach' | 'replay' | 'rerun';

export type BridgeLink = {
  readonly url: string;
  /** Headers the sandbox's port endpoint requires on the connection (never the bridge token). */
  readonly headers: Readonly<Record<string, string>>;
  readonly token: string;
  readonly port: number;
  readonly hello: HelloFrame;
  /** Set when the bridge is reached through the sandbox's exec stream, not a port (reach/exec-relay.ts). */
  readonly createConnection?: CreateConnection;
  /** The probe's socket, for the first channel (spare-socket.ts); undefined once taken or expired. */
  readonly adoptSocket?: () => OpenSocket | undefined;
};

/** How the host reaches a bridge port: a URL (+ headers), and the byte stream to use when it is not TCP (the exec transport). */
export type ReachEndpoint = HarnessV1PortEndpoint & { readonly createConnection?: CreateConnection };

/** A sandbox port as the host reaches it, for a WebSocket (the sandbox session's getPortEndpoint or getPortUrl, or the exec relay). */
export type PortResolver = (port: number) => Promise<ReachEndpoint>;

export type ReachOptions = {
  readonly endpoint: PortResolver;
  readonly sandbox: SandboxSession;
  readonly spawn: Omit<SpawnBridgeOptions, 'sandbox'>;
  /** The journal the resume state was cut from. */
  readonly journalId: string;
  readonly probeTimeoutMs: number;
};

/** What startBridge's error begins with when the bridge started (it holds the state dir) but its probe failed. */
export const STARTED_BUT_SILENT = 'bridge printed its ready line but its socket failed';

export async function startBridge(options: Omit<ReachOptions, 'journalId'>): Promise<BridgeLink> {
  const { ready, token } = await spawnBridge({ ...options.spawn, sandbox: options.sandbox });
  markPhase('spawned');
  const { url, headers = {}, createConnection } = await options.endpoint(ready.port);
  // This bridge is ours and printed its ready line: a slow hello is a loaded machine, not a dead bridge
  // (a dead one refuses at once), so it gets the start's budget, not the quick look's.
  const timeoutMs = Math.max(options.probeTimeoutMs, options.spawn.readyTimeoutMs);
  const probe = await probeBridge(url, token, timeoutMs, headers, createConnection, true);
  if (!probe.ok) {
    throw new BridgeSessionError('bridge-start-failed', `${STARTED_BUT_SILENT}: ${probe.detail}`);
  }
  return { url, headers, token, port: ready.port, hello: probe.hello, ...(createConnection ? { createConnection } : {}), ...spare(probe) };
}

/** Reaches the bridge for a resume: the live one (attach) or a new one on the same state dir. */
export async function reachBridge(options: ReachOptions): Promise<{ link: BridgeLink; rung: Exclude<Rung, 'fresh'> }> {
  const { sandbox } = options;
  const stateDir = options.spawn.stateDir;
  const [prior, token] = await Promise.all([readBridgeState(sandbox, stateDir), readToken(sandbox, stateDir)]);
  markPhase('state-read');
  if (prior && token) {
    const { url, headers = {}, createConnection } = await options.endpoint(prior.port);
    let probe = await probeLiveBridge(url, token, options.probeTimeoutMs, headers, createConnection);
    markPhase('probed');
    if (probe.ok && probe.hello.state === 'stopping') probe.open?.socket.terminate();
    // A bridge that is stopping (SIGTERM, stop, destroy) is about to exit: attaching would leave the
    // channel retrying a dead port. A fresh connection gets 503 on upgrade (handled below, as a
    // bridge that does not answer); one whose upgrade won the race gets a hello with state
    // 'stopping'. Wait for it to go, then replace it.
    if (probe.ok && probe.hello.state === 'stopping') probe = await untilGone(url, token, options.probeTimeoutMs, headers, createConnection);
    // Still stopping past stoppingBridgeWaitMs: replace it, which the state-dir lock refuses while it lives.
    if (probe.ok && probe.hello.state !== 'stopping') {
      const link = { url, headers, token, port: prior.port, hello: probe.hello, ...(createConnection ? { createConnection } : {}), ...spare(probe) };
      return { link, rung: probe.hello.journalId === options.journalId ? 'attach' : 'rerun' };
    }
  }
  let link: BridgeLink;
  try {
    link = await startBridge(options);
  } catch (error) {
    // The new bridge was refused: a live bridge still holds the state dir (it did not answer the
    // probe — a port proxy's long 502 spell, a stalled process, a stopping bridge's 503). Replacing
    // it is never right; keep probing it within the lock wait, then attach — or, once it has
    // exited and released the lock, start the new bridge after all.
    if ((error as { exitCode?: number }).exitCode !== EXIT_STATE_DIR_LOCKED || !prior || !token) throw error;
    const waited = await awaitLockedBridge(options, prior, token, error);
    if (waited.replaced) return { link: waited.link, rung: waited.link.hello.journalId === options.journalId ? 'replay' : 'rerun' };
    return { link: waited.link, rung: waited.link.hello.journalId === options.journalId ? 'attach' : 'rerun' };
  }
  return { link, rung: link.hello.journalId === options.journalId ? 'replay' : 'rerun' };
}

/** Probes a stopping bridge until it no longer answers (or stops stopping); returns the last probe. */
async function untilGone(
  url: string,
  token: string,
  timeoutMs: number,
  headers: Readonly<Record<string, string>>,
  createConnection: CreateConnection | undefined,
): Promise<ProbeResult> {
  const deadline = Date.now() + HOST_SESSION_LIMITS.stoppingBridgeWaitMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const probe = await probeBridge(url, token, timeoutMs, headers, createConnection);
    if (!probe.ok || probe.hello.state !== 'stopping' || Date.now() > deadline) return probe;
  }
}

async function awaitLockedBridge(
  options: ReachOptions,
  prior: BridgeReady,
  priorToken: string,
  refusal: unknown,
): Promise<{ link: BridgeLink; replaced: boolean }> {
  const deadline = Date.now() + HOST_SESSION_LIMITS.lockedBridgeWaitMs;
  let delayMs = 250;
  let last = 'not probed';
  while (Date.now() < deadline) {
    // The holder may be a bridge another host started a moment ago (two hosts resuming one session
    // against a dead bridge): its address and token are in the state dir, not in what we read first.
    const current = await currentBridge(options, prior, priorToken);
    const { port, token } = current;
    const { url, headers = {}, createConnection } = await options.endpoint(port);
    let probe = await probeBridge(url, token, options.probeTimeoutMs, headers, createConnection);
    // The holder is on its way out: once it exits (and releases the lock) a new bridge can start.
    if (probe.ok && probe.hello.state === 'stopping') probe = await untilGone(url, token, options.probeTimeoutMs, headers, createConnection);
    if (probe.ok && probe.hello.state !== 'stopping') {
      const link = { url, headers, token, port, hello: probe.hello, ...(createConnection ? { createConnection } : {}) };
      return { link, replaced: current.bridgeId !== prior.bridgeId };
    }
    last = probe.ok ? 'the bridge holding the state dir is still stopping' : probe.detail;
    // It did not answer, or is still stopping: it may have exited meanwhile (a stopping bridge answers
    // 503 until it exits, then nothing answers at all), so try again to start one; the lock decides.
    const started = await startUnlessLocked(options);
    if (started) return { link: started, replaced: true };
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, 5_000);
  }
  throw new BridgeSessionError(
    'bridge-start-failed',
    `a live bridge holds ${options.spawn.stateDir} and neither answered nor exited within ${HOST_SESSION_LIMITS.lockedBridgeWaitMs} ms (last: ${last})`,
    refusal,
  );
}

/** The bridge the state dir names now (bridge.json and token, re-read), else the one named before. */
async function currentBridge(options: ReachOptions, prior: BridgeReady, priorToken: string): Promise<{ port: number; token: string; bridgeId: string }> {
  const stateDir = options.spawn.stateDir;
  const [ready, token] = await Promise.all([readBridgeState(options.sandbox, stateDir), readToken(options.sandbox, stateDir)]);
  if (ready && token && ready.bridgeId !== prior.bridgeId) return { port: ready.port, token, bridgeId: ready.bridgeId };
  return { port: prior.port, token: priorToken, bridgeId: prior.bridgeId };
}

/** A new bridge on the state dir, or undefined when a live bridge still holds it (exit 75). */
export async function startUnlessLocked(options: Omit<ReachOptions, 'journalId'>): Promise<BridgeLink | undefined> {
  try {
    return await startBridge(options);
  } catch (error) {
    if ((error as { exitCode?: number }).exitCode === EXIT_STATE_DIR_LOCKED) return undefined;
    throw error;
  }
}

/**
 * Waits between resume probes that failed fast (a port proxy's 502/503, a
 * reset): one transient failure must not pass for "the bridge is gone" — the
 * next rung spawns a second bridge on the same state dir while the first one
 * still runs and writes the journal. Slow failures (timeout) are not retried:
 * they already waited probeTimeoutMs. ~1 s in all for a bridge that is really gone.
 */
const probeRetryDelaysMs = [100, 300, 600] as const;

async function probeLiveBridge(
  url: string,
  token: string,
  timeoutMs: number,
  headers: Readonly<Record<string, string>>,
  createConnection: CreateConnection | undefined,
): Promise<ProbeResult> {
  let probe = await probeBridge(url, token, timeoutMs, headers, createConnection, true);
  for (const delayMs of probeRetryDelaysMs) {
    if (probe.ok || (probe.reason !== 'http-error' && probe.reason !== 'refused')) return probe;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    probe = await probeBridge(url, token, timeoutMs, headers, createConnection, true);
  }
  return probe;
}

/** A kept probe socket as the link's adoptSocket. */
function spare(probe: ProbeResult): Pick<BridgeLink, 'adoptSocket'> {
  return probe.ok && probe.open ? { adoptSocket: spareSocket(probe.open) } : {};
}
