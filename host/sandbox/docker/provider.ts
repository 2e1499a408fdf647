// The Docker sandbox provider: each session is a container started from an
// image this machine builds itself (base-image.ts: its own Node and a shell,
// no registry), with `--network none` — the host reaches the bridge through
// the exec stream. A session created with an `identity` starts from that
// identity's snapshot: onFirstCreate runs once in a builder container, which
// is `docker commit`ted as harness-bridge-snapshot:<hash of the identity and
// the base image id>;
// every later session with the identity starts from that image
// (docs/remote-providers.md#docker).
import { createHash, randomUUID } from 'node:crypto';
import type { HarnessV1SandboxProvider, SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { ensureBaseImage } from './base-image.ts';
import { docker, dockerOk, dockerUnavailable } from './docker-cli.ts';
import { DockerSandboxError } from './errors.ts';
import type { DockerEgressOptions } from './network.ts';
import { createDockerSession, dockerWorkDir, type DockerSandboxSession, type DockerSessionOrigin } from './session.ts';

export { DockerSandboxError } from './errors.ts';
export { dockerUnavailable } from './docker-cli.ts';
export type { DockerSandboxSession, DockerSessionOrigin, DockerRestrictedSession } from './session.ts';

export const snapshotRepository = 'harness-bridge-snapshot';

type OnFirstCreate = (session: SandboxSession, opts: { abortSignal?: AbortSignal }) => Promise<void>;

export interface DockerSandboxProviderOptions {
  /** The docker CLI. Default `docker`. */
  docker?: string;
  /** Image sessions start from when they have no identity. Default: the base image built from this machine's Node (base-image.ts). */
  image?: string;
  /** Container names are `<prefix>-<session id>-<hash>`. Default `hb`. */
  namePrefix?: string;
  /**
   * The egress tunnel (network.ts): where the bridge bundle and the container's Node are. On by default;
   * `false`: the containers have no network and no proxy, and setNetworkPolicy rejects.
   */
  egressTunnel?: DockerEgressOptions | false;
  /**
   * Host paths bound read-only into every session container at the same path (e.g. a cache of
   * installed CLIs, so a session runs one without copying it in). Absolute paths only.
   */
  readOnlyMounts?: readonly string[];
  /** Executables (e.g. a CLI under readOnlyMounts) whose shared libraries the built base image carries. */
  librariesOf?: readonly string[];
}

export interface DockerSandboxProvider extends HarnessV1SandboxProvider {
  readonly providerId: 'docker';
  readonly createSession: (options?: { sessionId?: string; abortSignal?: AbortSignal; identity?: string; onFirstCreate?: OnFirstCreate }) => Promise<DockerSandboxSession>;
  readonly resumeSession: (options: { sessionId: string; abortSignal?: AbortSignal }) => Promise<DockerSandboxSession>;
  /** The snapshot image an identity maps to on this provider's base image (it may not exist yet). */
  snapshotImage(identity: string): Promise<string>;
  /** Removes an identity's snapshot image (of this provider's base image), so the next session with it builds a new one. */
  dropSnapshot(identity: string): Promise<void>;
}

const label = 'harness-bridge.session';
/** A snapshot build lock this old belongs to a builder that died (an onFirstCreate that installs a CLI takes minutes, not this). */
const snapshotLockStaleMs = 30 * 60_000;

export function createDockerSandboxProvider(options: DockerSandboxProviderOptions = {}): DockerSandboxProvider {
  const command = options.docker ?? 'docker';
  const prefix = options.namePrefix ?? 'hb';
  const egress = options.egressTunnel ?? {};
  for (const path of options.readOnlyMounts ?? []) {
    if (!path.startsWith('/') || path.includes(',')) throw new DockerSandboxError('invalid-option', `readOnlyMounts takes absolute paths without commas, got ${JSON.stringify(path)}`);
  }
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,30}$/.test(prefix)) throw new DockerSandboxError('invalid-option', `namePrefix must be a docker name prefix, got ${JSON.stringify(prefix)}`);
  const baseImage = async (): Promise<string> => {
    const reason = await dockerUnavailable(command);
    if (reason !== undefined) throw new DockerSandboxError('docker-unavailable', reason);
    return options.image ?? ensureBaseImage(command, process.execPath, options.librariesOf);
  };
  const containerName = (id: string) => `${prefix}-${id.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 60)}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
  /**
   * A snapshot is the recipe applied ON a base image: its tag hashes the identity and the base's image id,
   * so another base (another image option, a new Node binary) never reuses a snapshot built on the old one.
   */
  const snapshotImage = async (identity: string, base?: string) => {
    const from = base ?? (await baseImage());
    const inspected = await docker(command, ['image', 'inspect', '--format', '{{.Id}}', from]);
    if (inspected.code !== 0) throw new DockerSandboxError('docker-failed', `base image ${from} not found: ${inspected.stderr.trim()}`);
    const baseId = inspected.stdout.toString('utf8').trim();
    return `${snapshotRepository}:${createHash('sha256').update(`${identity}\0${baseId}`).digest('hex').slice(0, 40)}`;
  };

  /** `docker run` of a session container; resolves once it runs. */
  const runContainer = async (name: string, id: string, image: string): Promise<void> => {
    const mounts = (options.readOnlyMounts ?? []).flatMap((path) => ['--mount', `type=bind,source=${path},target=${path},readonly`]);
    await dockerOk(command, ['run', '--detach', '--init', '--network', 'none', '--name', name, '--label', `${label}=${id}`, '--workdir', dockerWorkDir, ...mounts, image]);
  };

  const imageExists = async (image: string) => (await docker(command, ['image', 'inspect', '--format', '{{.Id}}', image])).code === 0;

  /** onFirstCreate in a builder container from the base image, committed as the identity's snapshot. */
  const buildSnapshot = async (identity: string, image: string, base: string, onFirstCreate: OnFirstCreate | undefined, abortSignal: AbortSignal | undefined) => {
    const builderId = `snapshot-${randomUUID()}`;
    const builderName = containerName(builderId);
    await runContainer(builderName, builderId, base);
    const builder = createDockerSession({ id: builderId, container: builderName, docker: command, origin: { image: base, identity, fromSnapshot: false }, running: true });
    try {
      await onFirstCreate?.(builder.restricted(), abortSignal ? { abortSignal } : {});
      const labels = ['--change', `LABEL harness-bridge.provider=${prefix}`];
      await dockerOk(command, ['commit', ...labels, '--message', `harness-bridge snapshot of ${identity.slice(0, 200)}`, builderName, image]);
    } finally {
      await docker(command, ['rm', '--force', '--volumes', builderName]);
    }
  };

  /**
   * The identity's snapshot, built once per identity across host processes: the builder holds a lock, a
   * container named for the image (a name docker grants once), and removes it when done; the others wait
   * for the image or the lock's end. A lock older than snapshotLockStaleMs is a dead builder's and is taken over.
   */
  const snapshotOnce = async (image: string, identity: string, base: string, onFirstCreate: OnFirstCreate | undefined, abortSignal: AbortSignal | undefined) => {
    const lock = `hb-snapshot-lock-${image.split(':')[1]!.slice(0, 24)}`;
    for (;;) {
      abortSignal?.throwIfAborted();
      if (await imageExists(image)) return { image, built: false };
      const taken = await docker(command, ['create', '--name', lock, '--label', `harness-bridge.lock-since=${Date.now()}`, base]);
      if (taken.code === 0) {
        try {
          if (await imageExists(image)) return { image, built: false }; // built between our look and the lock
          await buildSnapshot(identity, image, base, onFirstCreate, abortSignal);
          return { image, built: true };
        } finally {
          await docker(command, ['rm', '--force', lock]);
        }
      }
      const since = Number((await docker(command, ['container', 'inspect', '--format', '{{index .Config.Labels "harness-bridge.lock-since"}}', lock])).stdout.toString().trim());
      if (Number.isFinite(since) && since > 0 && Date.now() - since > snapshotLockStaleMs) await docker(command, ['rm', '--force', lock]);
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  /** Concurrent creates in this process share one snapshotOnce per identity. */
  const snapshots = new Map<string, Promise<{ image: string; built: boolean }>>();
  const ensureSnapshot = async (identity: string, base: string, onFirstCreate: OnFirstCreate | undefined, abortSignal: AbortSignal | undefined) => {
    const image = await snapshotImage(identity, base);
    const pending = snapshots.get(image);
    if (pending) return pending.then(({ image: built }) => ({ image: built, built: false }));
    const started = snapshotOnce(image, identity, base, onFirstCreate, abortSignal);
    snapshots.set(image, started);
    // A failed onFirstCreate leaves no snapshot: the next create runs it again. A built one is asked of docker again next time.
    started.then(
      () => snapshots.delete(image),
      () => snapshots.delete(image),
    );
    return started;
  };

  return {
    specificationVersion: 'harness-sandbox-v1',
    providerId: 'docker',
    snapshotImage,
    dropSnapshot: async (identity) => {
      await docker(command, ['image', 'rm', '--force', await snapshotImage(identity)]);
    },

    createSession: async ({ sessionId, abortSignal, identity, onFirstCreate } = {}) => {
      abortSignal?.throwIfAborted();
      const base = await baseImage();
      const id = sessionId ?? randomUUID();
      const name = containerName(id);
      if ((await docker(command, ['container', 'inspect', '--format', '{{.Id}}', name])).code === 0) {
        throw new DockerSandboxError('session-exists', `docker sandbox session ${JSON.stringify(id)} already exists (container ${name}); use resumeSession`);
      }
      let origin: DockerSessionOrigin = { image: base, fromSnapshot: false };
      if (identity !== undefined) {
        const snapshot = await ensureSnapshot(identity, base, onFirstCreate, abortSignal);
        origin = { image: snapshot.image, identity, fromSnapshot: !snapshot.built, builtSnapshot: snapshot.built };
      }
      await runContainer(name, id, origin.image);
      const session = createDockerSession({ id, container: name, docker: command, origin, running: true, egress });
      if (identity === undefined && onFirstCreate) {
        try {
          await onFirstCreate(session.restricted(), abortSignal ? { abortSignal } : {});
        } catch (error) {
          await session.destroy();
          throw error;
        }
      }
      return session;
    },

    resumeSession: async ({ sessionId, abortSignal }) => {
      abortSignal?.throwIfAborted();
      const name = containerName(sessionId);
      const inspected = await docker(command, ['container', 'inspect', '--format', '{{.State.Running}} {{.Config.Image}}', name]);
      if (inspected.code !== 0) throw new DockerSandboxError('session-not-found', `no docker sandbox session ${JSON.stringify(sessionId)} (container ${name})`);
      const [running, image = ''] = inspected.stdout.toString('utf8').trim().split(' ');
      const session = createDockerSession({ id: sessionId, container: name, docker: command, origin: { image, fromSnapshot: image.startsWith(`${snapshotRepository}:`) }, running: running === 'true', egress });
      // A running container's CLI may be using its proxy now: the tunnel goes on under the kept policy. A stopped one's starts with egressProxy().
      if (running === 'true') await session.restoreNetwork();
      return session;
    },
  };
}
