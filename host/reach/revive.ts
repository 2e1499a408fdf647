// Bringing a dead bridge back for a running session (docs/guarantees.md#bridge-crash):
// the channel saw its port refuse (or its relay fail) and asks here before any
// backoff. The ladder's first two rungs, for a session that is still running:
//   attach — the state dir names another bridge than the one that died (a host
//            or an earlier revival started it): use it if it answers;
//   replay — start a bridge on the same state dir: it continues the journal,
//            marks a turn whose CLI died interrupted (the session reruns it) and
//            adopts a CLI its keeper kept (launch `survive`: nothing recomputed).
// The state-dir lock decides "dead": while the old bridge lives (slow, stopped,
// partitioned) it refuses the new one, and this says `null` — keep reconnecting.
// A journal that is gone comes back as another journal id, which the channel
// refuses (journal-mismatch) and the session reports; it is not healed here.
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { SpawnBridgeOptions } from './bridge-process.ts';
import { readBridgeState, readToken } from './bridge-process.ts';
import { startUnlessLocked, type BridgeLink, type PortResolver } from './ladder.ts';
import { probeBridge } from './probe.ts';

export type ReviveOptions = {
  readonly endpoint: PortResolver;
  readonly sandbox: SandboxSession;
  readonly spawn: Omit<SpawnBridgeOptions, 'sandbox'>;
  readonly probeTimeoutMs: number;
};

export type Revived = { readonly link: BridgeLink; readonly rung: 'attach' | 'replay' };

/** A bridge for the session whose bridge `deadBridgeId` died, or null when a live bridge holds its state dir. */
export async function reviveBridge(options: ReviveOptions, deadBridgeId: string, signal: AbortSignal): Promise<Revived | null> {
  const { sandbox } = options;
  const stateDir = options.spawn.stateDir;
  // The provider saying the sandbox is gone surfaces here: reading its files throws, and the revival fails with that.
  const [ready, token] = await Promise.all([readBridgeState(sandbox, stateDir), readToken(sandbox, stateDir)]);
  signal.throwIfAborted();
  if (ready && token && ready.bridgeId !== deadBridgeId) {
    const { url, headers = {}, createConnection } = await options.endpoint(ready.port);
    const probe = await probeBridge(url, token, options.probeTimeoutMs, headers, createConnection);
    signal.throwIfAborted();
    if (probe.ok && probe.hello.state !== 'stopping') {
      return { link: { url, headers, token, port: ready.port, hello: probe.hello, ...(createConnection ? { createConnection } : {}) }, rung: 'attach' };
    }
  }
  const link = await startUnlessLocked({ ...options, spawn: { ...options.spawn, abortSignal: signal } });
  signal.throwIfAborted();
  return link ? { link, rung: 'replay' } : null;
}
