// The network of a Docker session (`--network none`): the egress tunnel (host/reach/egress-tunnel.ts,
// docs/remote-providers.md#egress-tunnel). The container has no network at all; its CLI's proxy is
// the bridge file's `--egress-tunnel` mode on the container's 127.0.0.1, which carries every
// connection over a `docker exec` stream to this host, where an egress proxy decides it under the
// session's policy — the same proxy and policy code as the local provider's jailed CLIs. The policy
// starts as deny-all (the container reaches nothing until one is set) and lives with this session
// object; the tunnel starts with the first setNetworkPolicy or egressProxy() and ends with stop/destroy.
import { readFile } from 'node:fs/promises';
import { defaultBridgeFile } from '../../../bootstrap/recipe.ts';
import type { HarnessV1NetworkPolicy } from '../../../protocol/harness-v1/index.ts';
import { networkPolicySchema, type NetworkPolicy } from '../../../protocol/v1/network-policy.ts';
import { EgressTunnel, type EgressTunnelSpawn } from '../../reach/egress-tunnel.ts';
import { DockerSandboxError } from './errors.ts';

export type DockerEgressOptions = {
  /** The bridge bundle on this host, copied into the container for its proxy. Default: this package's dist/bridge.mjs. */
  readonly bridgeFile?: string;
  /** The Node binary inside the container. Default: the host's own path (the base image puts this Node there). */
  readonly nodeCommand?: string;
  /** The proxy's port inside the container (each container has its own loopback). Default 0: any free one. */
  readonly port?: number;
};

/** Where the container's copy of the bridge file lives (root's; the CLI only connects to the port). */
export const dockerEgressBridgeFile = '/var/lib/harness-bridge/egress/bridge.mjs';

export type DockerNetwork = {
  setNetworkPolicy(policy: HarnessV1NetworkPolicy): Promise<void>;
  getNetworkPolicy(): Promise<NetworkPolicy>;
  /** Starts the tunnel if it is not running; the proxy URL for the CLI's HTTP(S)_PROXY inside the container. */
  egressProxy(): Promise<{ port: number; url: string }>;
  /** The running tunnel, if any (its decisions: `counts`). */
  readonly tunnel: EgressTunnel | undefined;
  close(): Promise<void>;
};

export function createDockerNetwork(options: {
  spawn: EgressTunnelSpawn;
  writeBinaryFile: (options: { path: string; content: Uint8Array }) => Promise<void>;
  egress: DockerEgressOptions | false;
}): DockerNetwork {
  let policy: NetworkPolicy = { mode: 'deny-all' };
  let tunnel: EgressTunnel | undefined;
  let starting: Promise<EgressTunnel> | undefined;
  let port = options.egress === false ? 0 : (options.egress.port ?? 0);
  const start = (): Promise<EgressTunnel> => {
    const egress = options.egress;
    if (egress === false) return Promise.reject(new DockerSandboxError('invalid-option', 'this Docker provider was created with egressTunnel: false: its containers have no network and no proxy'));
    starting ??= (async () => {
      await options.writeBinaryFile({ path: dockerEgressBridgeFile, content: await readFile(egress.bridgeFile ?? defaultBridgeFile()) });
      const started = await EgressTunnel.start({ spawn: options.spawn, nodeCommand: egress.nodeCommand ?? process.execPath, bridgeFile: dockerEgressBridgeFile, port, policy });
      port = started.port;
      tunnel = started;
      return started;
    })().catch((error: unknown) => {
      starting = undefined;
      throw error;
    });
    return starting;
  };
  return {
    get tunnel() {
      return tunnel;
    },
    async setNetworkPolicy(next) {
      const parsed = networkPolicySchema.safeParse(next);
      if (!parsed.success) {
        throw new DockerSandboxError('invalid-option', `not a network policy: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'policy'}: ${i.message}`).join('; ')}`);
      }
      policy = parsed.data;
      (await start()).setPolicy(policy);
    },
    getNetworkPolicy: () => Promise.resolve(policy),
    async egressProxy() {
      const running = await start();
      await running.ready();
      return { port: running.port, url: `http://127.0.0.1:${running.port}` };
    },
    async close() {
      const running = starting;
      starting = undefined;
      tunnel = undefined;
      await (await running?.catch(() => undefined))?.close();
    },
  };
}
