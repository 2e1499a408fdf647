// The Docker sandbox provider: each session is a container started from an
// image this machine builds itself (base-image.ts: its own Node and a shell,
// no registry), with `--network none` — the host reaches the bridge through
// the exec stream. A session created with an `identity` starts from that
// identity's snapshot: onFirstCreate runs once in a builder container, which
// is `docker commit`ted as harness-bridge-snapshot:<hash of the identity>;
// every later session with the identity starts from that image
// (docs/remote-providers.md#docker).
import { createHash, randomUUID } from 'node:crypto';
import type { HarnessV1SandboxProvider, SandboxSession } from '../../../protocol/harness-v1/index.ts';
import { ensureBaseImage } from './base-image.ts';
import { docker, dockerOk, dockerUnavailable } from './docker-cli.ts';
import { DockerSandboxError } from './errors.ts';
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
}

export interface DockerSandboxProvider extends HarnessV1SandboxProvider {
  readonly providerId: 'docker';
  readonly createSession: (options?: { sessionId?: string; abortSignal?: AbortSignal; identity?: string; onFirstCreate?: OnFirstCreate }) => Promise<DockerSandboxSession>;
  readonly resumeSession: (options: { sessionId: string; abortSignal?: AbortSignal }) => Promise<DockerSandboxSession>;
  /** The snapshot image an identity maps to (it may not exist yet). */
  snapshotImage(identity: string): string;
  /** Removes an identity's snapshot image, so the next session with it builds a new one. */
  dropSnapshot(identity: string): Promise<void>;
}

const label = 'harness-bridge.session';

export function createDockerSandboxProvider(options: DockerSandboxProviderOptions = {}): DockerSandboxProvider {
  const command = options.docker ?? 'docker';
  const prefix = options.namePrefix ?? 'hb';
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,30}$/.test(prefix)) throw new DockerSandboxError('invalid-option', `namePrefix must be a docker name prefix, got ${JSON.stringify(prefix)}`);
  const baseImage = async (): Promise<string> => {
    const reason = await dockerUnavailable(command);
    if (reason !== undefined) throw new DockerSandboxError('docker-unavailable', reason);
    return options.image ?? ensureBaseImage(command);
  };
  const containerName = (id: string) => `${prefix}-${id.replace(/[^a-zA-Z0-9_.-]/g, '_').slice(0, 60)}-${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
  const snapshotImage = (identity: string) => `${snapshotRepository}:${createHash('sha256').update(identity).digest('hex').slice(0, 40)}`;

  /** `docker run` of a session container; resolves once it runs. */
  const runContainer = async (name: string, id: string, image: string): Promise<void> => {
    await dockerOk(command, ['run', '--detach', '--init', '--network', 'none', '--name', name, '--label', `${label}=${id}`, '--workdir', dockerWorkDir, image]);
  };

  /** The identity's snapshot: built once per identity (in this host process; a racing process commits the same content). */
  const snapshots = new Map<string, Promise<{ image: string; built: boolean }>>();
  const ensureSnapshot = (identity: string, base: string, onFirstCreate: OnFirstCreate | undefined, abortSignal: AbortSignal | undefined) => {
    const image = snapshotImage(identity);
    let pending = snapshots.get(image);
    if (!pending) {
      pending = (async () => {
        if ((await docker(command, ['image', 'inspect', '--format', '{{.Id}}', image])).code === 0) return { image, built: false };
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
        return { image, built: true };
      })();
      snapshots.set(image, pending);
      // A failed onFirstCreate leaves no snapshot: the next create runs it again. A built one is asked of docker again next time.
      pending.then(
        () => snapshots.delete(image),
        () => snapshots.delete(image),
      );
      return pending;
    }
    return pending.then(({ image: built }) => ({ image: built, built: false }));
  };

  return {
    specificationVersion: 'harness-sandbox-v1',
    providerId: 'docker',
    snapshotImage,
    dropSnapshot: async (identity) => {
      await docker(command, ['image', 'rm', '--force', snapshotImage(identity)]);
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
      const session = createDockerSession({ id, container: name, docker: command, origin, running: true });
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
      return createDockerSession({ id: sessionId, container: name, docker: command, origin: { image, fromSnapshot: image.startsWith(`${snapshotRepository}:`) }, running: running === 'true' });
    },
  };
}
