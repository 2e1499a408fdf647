// Bringing a dead bridge back for a running session (docs/guarantees.md#bridge-crash):
// the channel saw its port refuse (or its relay fail) and asks here before any
// backoff. The ladder's replay rung, for a session that is still running: start
// a bridge on the same state dir. It continues the journal, marks a turn whose
// CLI died interrupted (the session reruns it) and adopts a CLI its keeper kept
// (launch `survive`: nothing recomputed). The state-dir lock decides "dead":
// while a bridge lives there (the old one, slow or partitioned, or one another
// host started since) it refuses the new one, and this says `null` — keep
// reconnecting. It never attaches to a bridge it did not start: a bridge another
// host started belongs to that host (a stale instance attaching there would
// displace it; fencing, docs/design.md#d3).
// A journal that is gone comes back as another journal id, which the channel
// refuses (journal-mismatch) and the session reports; it is not healed here.
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import { readBridgeState, readToken, type SpawnBridgeOptions } from './bridge-process.ts';
import { STARTED_BUT_SILENT, startUnlessLocked, type BridgeLink, type PortResolver } from './ladder.ts';
import { probeBridge } from './probe.ts';

export type ReviveOptions = {
  readonly endpoint: PortResolver;
  readonly sandbox: SandboxSession;
  readonly spawn: Omit<SpawnBridgeOptions, 'sandbox'>;
  readonly probeTimeoutMs: number;
};

export type Revived = { readonly link: BridgeLink; readonly rung: 'replay' };

/** A new bridge on the session's state dir, or null when a live bridge holds it. */
export async function reviveBridge(options: ReviveOptions, signal: AbortSignal): Promise<Revived | null> {
  let link: BridgeLink | undefined;
  try {
    link = await startUnlessLocked({ ...options, spawn: { ...options.spawn, abortSignal: signal } });
  } catch (error) {
    // It started (ready line, state dir locked) but did not answer within probeTimeoutMs: a loaded machine. It is
    // this session's bridge now; look again, longer, rather than leave it running and give up on the session.
    if (!(error instanceof Error) || !error.message.startsWith(STARTED_BUT_SILENT)) throw error;
    link = await reachStarted(options, signal, error);
  }
  signal.throwIfAborted();
  return link ? { link, rung: 'replay' } : null;
}

/** The bridge the state dir names now (the one just started), probed for up to 3 × probeTimeoutMs. */
async function reachStarted(options: ReviveOptions, signal: AbortSignal, cause: Error): Promise<BridgeLink> {
  const stateDir = options.spawn.stateDir;
  const [ready, token] = await Promise.all([readBridgeState(options.sandbox, stateDir), readToken(options.sandbox, stateDir)]);
  signal.throwIfAborted();
  if (!ready || !token) throw cause;
  const { url, headers = {}, createConnection } = await options.endpoint(ready.port);
  const probe = await probeBridge(url, token, options.probeTimeoutMs * 3, headers, createConnection);
  if (!probe.ok) throw new Error(`${cause.message}; and again within ${options.probeTimeoutMs * 3} ms: ${probe.detail}`, { cause });
  return { url, headers, token, port: ready.port, hello: probe.hello, ...(createConnection ? { createConnection } : {}) };
}
