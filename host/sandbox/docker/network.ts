// The network of a Docker session (`--network none`): the egress tunnel (host/reach/egress-tunnel.ts,
// docs/remote-providers.md#egress-tunnel). The container has no network at all; its CLI's proxy is
// the bridge file's `--egress-tunnel` mode on the container's 127.0.0.1, which carries every
// connection over a `docker exec` stream to this host, where an egress proxy decides it under the
// session's policy — the same proxy and policy code as the local provider's jailed CLIs. The policy
// starts as deny-all (the container reaches nothing until one is set). It is kept in the container
// (root's, beside the bridge copy) with the proxy's port, so a session resumed by another host
// process gets both back (resumeSession of a running container starts the tunnel again). The tunnel
// starts with the first setNetworkPolicy or egressProxy() and ends with stop/destroy.
import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { defaultBridgeFile } from '../../../bootstrap/recipe.ts';
import type { HarnessV1NetworkPolicy } from '../../../protocol/harness-v1/index.ts';
import { networkPolicySchema, type NetworkPolicy } from '../../../protocol/v1/network-policy.ts';
import { EgressTunnel, type EgressTunnelOptions, type EgressTunnelSpawn } from '../../reach/egress-tunnel.ts';
import { DockerSandboxError } from './errors.ts';

export type DockerEgressOptions = {
  /** The bridge bundle on this host, copied into the container for its proxy. Default: this package's dist/bridge.mjs. */
  readonly bridgeFile?: string;
  /** The Node binary inside the container. Default: the host's own path (the base image puts this Node there). */
  readonly nodeCommand?: string;
  /** The proxy's port inside the container (each container has its own loopback). Default 0: any free one. */
  readonly port?: number;
  /** Where the tunnel says what it refused (host, port, the policy's reason) and when its stream ended or restarted. Default: nowhere. */
  readonly log?: EgressTunnelOptions['log'];
};

/** Where the container's copy of the bridge file lives (root's; the CLI only connects to the port). */
export const dockerEgressBridgeFile = '/var/lib/harness-bridge/egress/bridge.mjs';
/** The session's policy and the proxy's port, for a resume: `{ policy, port }`. */
export const dockerEgressPolicyFile = '/var/lib/harness-bridge/egress/policy.json';

export type DockerNetwork = {
  setNetworkPolicy(policy: HarnessV1NetworkPolicy): Promise<void>;
  getNetworkPolicy(): Promise<NetworkPolicy>;
  /** Starts the tunnel if it is not running; the proxy URL for the CLI's HTTP(S)_PROXY inside the container. */
  egressProxy(): Promise<{ port: number; url: string }>;
  /** A resumed session: the kept policy and port back, and the tunnel started when one was kept. */
  restore(): Promise<void>;
  /** The running tunnel, if any (its decisions: `counts`). */
  readonly tunnel: EgressTunnel | undefined;
  close(): Promise<void>;
};

export function createDockerNetwork(options: {
  spawn: EgressTunnelSpawn;
  writeBinaryFile: (options: { path: string; content: Uint8Array }) => Promise<void>;
  readTextFile: (options: { path: string }) => Promise<string | null>;
  egress: DockerEgressOptions | false;
}): DockerNetwork {
  let policy: NetworkPolicy = { mode: 'deny-all' };
  let loaded = false;
  /** The kept policy, once per session object (none kept: deny-all; one that does not validate: deny-all, fail closed). */
  const load = async (): Promise<boolean> => {
    if (loaded) return false;
    loaded = true;
    const text = await options.readTextFile({ path: dockerEgressPolicyFile });
    if (text === null) return false;
    let kept: { policy?: unknown; port?: unknown } = {};
    try {
      kept = JSON.parse(text) as typeof kept;
    } catch {
      // a torn file keeps deny-all
    }
    const parsed = networkPolicySchema.safeParse(kept.policy);
    policy = parsed.success ? parsed.data : { mode: 'deny-all' };
    if (port === 0 && typeof kept.port === 'number' && Number.isInteger(kept.port) && kept.port > 0 && kept.port < 65_536) port = kept.port;
    return true;
  };
  const keep = (): Promise<void> => options.writeBinaryFile({ path: dockerEgressPolicyFile, content: new TextEncoder().encode(JSON.stringify({ policy, port })) });
  let tunnel: EgressTunnel | undefined;
  let starting: Promise<EgressTunnel> | undefined;
  let port = options.egress === false ? 0 : (options.egress.port ?? 0);
  const start = (): Promise<EgressTunnel> => {
    const egress = options.egress;
    if (egress === false) return Promise.reject(new DockerSandboxError('invalid-option', 'this Docker provider was created with egressTunnel: false: its containers have no network and no proxy'));
    starting ??= (async () => {
      await options.writeBinaryFile({ path: dockerEgressBridgeFile, content: await readFile(egress.bridgeFile ?? defaultBridgeFile()) });
      const started = await EgressTunnel.start({ spawn: options.spawn, nodeCommand: egress.nodeCommand ?? process.execPath, bridgeFile: dockerEgressBridgeFile, pidDir: posix.dirname(dockerEgressBridgeFile), port, policy, ...(egress.log ? { log: egress.log } : {}) });
      port = started.port;
      tunnel = started;
      await keep();
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
      await load(); // a resumed session's kept port
      policy = parsed.data;
      const running = await start();
      running.setPolicy(policy);
      await keep();
    },
    async getNetworkPolicy() {
      if (options.egress !== false) await load();
      return policy;
    },
    async restore() {
      if (options.egress !== false && (await load())) await start();
    },
    async egressProxy() {
      await load();
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
