// One Docker sandbox session: a container (`--network none`, tini as init)
// plus the processes `docker exec` starts in it. It has no port methods on
// purpose: nothing inside is reachable over a network, and the host reaches
// its bridge through the exec stream (host/reach/exec-relay.ts,
// docs/remote-providers.md). stop() stops the container (every process ends,
// the filesystem stays: resumeSession starts it again); destroy() removes it.
import { posix } from 'node:path';
import type { HarnessV1NetworkSandboxSession, SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { holdOpen } from '../../session/hold-open.ts';
import { docker, dockerOk } from './docker-cli.ts';
import { DockerSandboxError } from './errors.ts';
import { createFileMethods } from './files.ts';
import { createDockerNetwork, type DockerEgressOptions } from './network.ts';
import type { NetworkPolicy } from '../../../protocol/v1/network-policy.ts';
import type { HarnessV1NetworkPolicy } from '../../../protocol/harness-v1/index.ts';
import { runProcess, spawnProcess, type ContainerHost, type DockerSpawnOptions, type DockerSandboxProcess } from './process.ts';

/** How the session came to be: from the identity's snapshot image, or from the base image. */
export interface DockerSessionOrigin {
  readonly image: string;
  readonly identity?: string;
  readonly fromSnapshot: boolean;
  /** This createSession call built the snapshot (ran onFirstCreate and committed it). */
  readonly builtSnapshot?: boolean;
}

export type DockerSpawn = (options: DockerSpawnOptions) => Promise<DockerSandboxProcess>;

/** The restricted view: the contract's SandboxSession, whose spawn also takes `stdin: true` (what the exec transport needs). */
export type DockerRestrictedSession = SandboxSession & { readonly spawn: DockerSpawn };

export interface DockerSandboxSession extends HarnessV1NetworkSandboxSession {
  readonly container: string;
  readonly origin: DockerSessionOrigin;
  readonly spawn: DockerSpawn;
  /** Stops the container: every process ends, the filesystem stays. Idempotent. */
  readonly stop: () => Promise<void>;
  /** Removes the container and everything in it. */
  readonly destroy: () => Promise<void>;
  readonly restricted: () => DockerRestrictedSession;
  /**
   * The policy for the container's outbound connections, all of which go through the egress tunnel's
   * proxy and are decided on this host (network.ts; docs/security.md#network-policy). Starts the
   * tunnel; a change applies to every connection from then on.
   */
  readonly setNetworkPolicy: (policy: HarnessV1NetworkPolicy) => Promise<void>;
  /** The policy in force (deny-all until one is set). */
  readonly getNetworkPolicy: () => Promise<NetworkPolicy>;
  /** The proxy inside the container (`http://127.0.0.1:<port>`, also SOCKS5 on the same port), starting the tunnel if needed. */
  readonly egressProxy: () => Promise<{ port: number; url: string }>;
  /** Gets the policy and proxy port a session kept back and starts its tunnel (resumeSession does this for a running container). */
  readonly restoreNetwork: () => Promise<void>;
}

export const dockerWorkDir = '/work';

export function createDockerSession(options: {
  id: string;
  container: string;
  docker: string;
  origin: DockerSessionOrigin;
  running: boolean;
  egress?: DockerEgressOptions | false;
}): DockerSandboxSession {
  const { id, container, origin } = options;
  let running = options.running;
  let starting: Promise<void> | undefined;
  const host: ContainerHost = {
    docker: options.docker,
    container,
    resolveCwd: (path) => posix.resolve(dockerWorkDir, path ?? '.'),
    ensureRunning: () => {
      if (running) return Promise.resolve();
      starting ??= dockerOk(options.docker, ['start', container]).then(
        () => {
          running = true;
          starting = undefined;
        },
        (error: unknown) => {
          starting = undefined;
          throw error;
        },
      );
      return starting;
    },
    live: new Set(),
  };
  const description =
    `Docker sandbox ${id}: container ${container}, working directory ${dockerWorkDir}, no network (--network none); ` +
    'the host reaches servers inside only through the exec stream, and outbound connections go only through the egress proxy the host polices.';
  const restrictedView: DockerRestrictedSession = Object.freeze({
    description,
    ...createFileMethods(host),
    spawn: (spawnOptions: DockerSpawnOptions) => spawnProcess(host, spawnOptions),
    run: (runOptions: Parameters<SandboxSession['run']>[0]) => runProcess(host, runOptions),
  });
  const network = createDockerNetwork({
    spawn: (spawnOptions) => spawnProcess(host, spawnOptions),
    writeBinaryFile: async (file) => void (await restrictedView.writeBinaryFile(file)),
    readTextFile: async (file) => (await restrictedView.readTextFile(file)) ?? null,
    egress: options.egress ?? {},
  });
  let stopping: Promise<void> | undefined;
  let destroyed = false;
  const stop = (): Promise<void> =>
    holdOpen(() => {
      stopping ??= (async () => {
        running = false;
        await network.close();
        // Stopping what is gone (destroyed, here or by another host) leaves it as stop promises: nothing runs.
        const stopped = destroyed ? undefined : await docker(options.docker, ['stop', '--time', '1', container]);
        if (stopped && stopped.code !== 0 && !/No such container/.test(stopped.stderr)) {
          throw new DockerSandboxError('docker-failed', `docker stop exited ${stopped.code}: ${stopped.stderr.trim().slice(-2000)}`);
        }
        await Promise.all([...host.live].map((entry) => entry.kill()));
      })().finally(() => {
        stopping = undefined;
      });
      return stopping;
    });
  return {
    ...restrictedView,
    id,
    container,
    origin,
    defaultWorkingDirectory: dockerWorkDir,
    ports: [],
    stop,
    destroy: () =>
      holdOpen(async () => {
        running = false;
        destroyed = true;
        await network.close();
        await dockerOk(options.docker, ['rm', '--force', '--volumes', container]);
        await Promise.all([...host.live].map((entry) => entry.kill()));
      }),
    restricted: () => restrictedView,
    setNetworkPolicy: (policy) => holdOpen(() => network.setNetworkPolicy(policy)),
    getNetworkPolicy: () => network.getNetworkPolicy(),
    egressProxy: () => holdOpen(() => network.egressProxy()),
    restoreNetwork: () => holdOpen(() => network.restore()),
  };
}
