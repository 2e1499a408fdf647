// A kept CLI's MCP URL names its keeper's relay (mcp-relay.ts), not the bridge: the bridge picks
// the relay's loopback port before the launch is jailed (the jail forwards exactly the URL's port),
// and the keeper listens on it. The bridge's own endpoint port becomes the relay's first upstream.
import { createServer } from 'node:net';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { MCP_LIMITS } from '../limits.ts';
import type { RelaySpec } from './mcp-relay.ts';

/** A free loopback port now (the keeper binds it a moment later; taken meanwhile, the keeper fails to start and says so). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** The launch with its MCP URL pointed at a relay port, and the relay's spec; `launch` unchanged when it has no MCP URL. */
export async function relayLaunch(launch: LaunchSpec, idPrefix: string): Promise<{ launch: LaunchSpec; relay?: RelaySpec }> {
  const url = launch.env?.[MCP_ENV_V1.urlEnvVar];
  if (url === undefined) return { launch };
  const upstream = new URL(url);
  const upstreamPort = Number(upstream.port);
  if (!Number.isSafeInteger(upstreamPort) || upstreamPort <= 0) return { launch };
  const listenPort = await freePort();
  const relayed = new URL(url);
  relayed.port = String(listenPort);
  return {
    launch: { ...launch, env: { ...launch.env, [MCP_ENV_V1.urlEnvVar]: relayed.toString() } },
    relay: {
      listenPort,
      upstreamPort,
      idPrefix,
      maxBodyBytes: MCP_LIMITS.maxMcpBodyBytes,
      maxPending: MCP_LIMITS.maxPendingCalls,
      keepaliveIntervalMs: MCP_LIMITS.keepaliveIntervalMs,
    },
  };
}

/**
 * What a CLI is jailed with: a kept one (launch `survive`, pipes) gets its MCP URL pointed at its keeper's relay,
 * so a call in flight outlives the bridge. Not in a network namespace: there its only way out is the bridge's
 * egress proxy, which dies with the bridge (docs/bridge-internals.md#survive-mcp-relay).
 */
export async function keptLaunch(launch: LaunchSpec, keeperId: string, namespaced: boolean): Promise<{ launch: LaunchSpec; relay?: RelaySpec }> {
  if (launch.survive !== true || launch.io.mode === 'pty' || namespaced) return { launch };
  return relayLaunch(launch, keeperId);
}
