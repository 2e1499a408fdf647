// A kept CLI's MCP URL names its keeper's relay (mcp-relay.ts), not the bridge: the bridge picks
// the relay's loopback port before the launch is jailed (the jail forwards exactly the URL's port),
// and the keeper listens on it. The bridge's own endpoint port becomes the relay's first upstream.
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { freePort } from '../free-port.ts';
import { MCP_LIMITS } from '../limits.ts';
import type { RelaySpec } from './mcp-relay.ts';

/** The launch with its MCP URL pointed at a relay port (`port`, else a free one), and the relay's spec; `launch` unchanged when it has no MCP URL. */
export async function relayLaunch(launch: LaunchSpec, idPrefix: string, port?: number): Promise<{ launch: LaunchSpec; relay?: RelaySpec }> {
  const url = launch.env?.[MCP_ENV_V1.urlEnvVar];
  if (url === undefined) return { launch };
  const upstream = new URL(url);
  const upstreamPort = Number(upstream.port);
  if (!Number.isSafeInteger(upstreamPort) || upstreamPort <= 0) return { launch };
  const listenPort = port ?? (await freePort());
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
 * What a CLI is jailed with (`relayPort`: the one a jail made ahead was made with): a kept one (launch `survive`) gets its MCP URL pointed at its keeper's relay,
 * so a call in flight outlives the bridge (docs/bridge-internals.md#survive-mcp-relay). In a network namespace the
 * relay is reached through the keeper's own egress proxy (jail/kept-egress.ts), which outlives the bridge too.
 */
export async function keptLaunch(launch: LaunchSpec, keeperId: string, relayPort?: number): Promise<{ launch: LaunchSpec; relay?: RelaySpec }> {
  if (launch.survive !== true) return { launch };
  return relayLaunch(launch, keeperId, relayPort);
}
