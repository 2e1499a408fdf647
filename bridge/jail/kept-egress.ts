// The egress proxy of a kept CLI in a network namespace (launch `survive`;
// docs/security.md#survive-namespace). Such a CLI's srt relays lead to its keeper, not to the
// bridge, so its model stream and its MCP requests (to the keeper's relay) outlive a SIGKILLed
// bridge. The keeper enforces what a bridge's proxy does (egress-proxy.ts): the sandbox's network
// policy (read from the policy file, watched, and acknowledged like a bridge's, so a
// setNetworkPolicy() waits for the keeper too), its MCP relay always, and the bridges' host sockets
// never: the spawning bridge's port, and the one the state dir's bridge.json names at each decision
// (an adopting bridge listens on a port of its own). Runs in keeper mode, from a bundle of its own
// embedded in the bridge file (kept-egress-loader.ts), so neither the bridge's cold start nor a
// keeper carries the rest of stage 2.
import type { Socket } from 'node:net';
import { MEMORY_RELEASE_LIMITS } from '../limits.ts';
import { appendingLog } from '../log-file.ts';
import { MemoryRelease } from '../memory-release.ts';
import { relayPort } from '../relay/relay.ts';
import { EgressProxy } from './egress-proxy.ts';
import { PolicySource } from './policy.ts';

/** What the spawning bridge writes into the keeper's spec.json. */
export type KeptEgressSpec = {
  /**
   * Where the CLI's srt relay connects: a unix socket (bound into the jail in place of the jail helper's
   * relay), or a port (of an srt process of the CLI's own); chosen by the bridge.
   */
  socket?: string;
  port?: number;
  /** The keeper's MCP relay port: always reachable. */
  mcpPort?: number;
  /** The sandbox's network policy file; none: allow-all, as for the bridge. */
  policyFile?: string;
  /** Host-socket ports never to reach (the spawning bridge's). */
  bridgePorts: number[];
  /** This machine's endpoints the CLI's launches named (`host:port`): reachable under allow-all (named-endpoints.ts). */
  namedLocal?: string[];
  /** The bridge state dir: its bridge.json names the current bridge's port. */
  stateDir: string;
};

/** `accept`: one connection the keeper's listener took (keeper.ts listens itself, before this loads). */
export type KeptEgress = { accept(socket: Socket): void; close(): Promise<void> };

/** The proxy for the connections the keeper accepts on `spec.socket` or `spec.port` (it listens there itself, in stage 1). */
export async function startKeptEgress(spec: KeptEgressSpec, keeperId: string): Promise<KeptEgress> {
  // Its refusals and policy changes go to the bridge's log, beside the bridge's own proxy's (a kept CLI's model call refused is seen there).
  const log = appendingLog(spec.stateDir, `keeper-${keeperId}-egress`);
  const egress = new EgressProxy(log);
  for (const port of spec.bridgePorts) egress.addBridgePort(port);
  egress.nameLocal(spec.namedLocal ?? []);
  egress.watchBridgePort(() => {
    const found = relayPort(spec.stateDir);
    return found.ok ? found.port : undefined;
  });
  if (spec.mcpPort !== undefined) egress.setMcpPort(spec.mcpPort);
  const policy = new PolicySource({ file: spec.policyFile, bridgeId: `keeper-${keeperId}`, log });
  egress.setPolicy(policy.current.policy);
  policy.onChange((state) => egress.setPolicy(state.policy));
  policy.start(true, 'keeper');
  // Loading this bundle left its garbage in the keeper's heap, which lives as long as the CLI: give it back once.
  const memory = new MemoryRelease(MEMORY_RELEASE_LIMITS);
  memory.touch();
  return {
    accept: (socket) => egress.accept(socket),
    close: async () => {
      memory.stop();
      policy.stop();
      await egress.close();
    },
  };
}
