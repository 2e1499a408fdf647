// The Docker sandbox provider: every conformance case against real containers
// (`--network none`, started from the base image this machine builds offline),
// then sessions whose bridge the host reaches only through the exec stream.
// Skips with the reason when docker cannot run here (scripts/test-setup.sh
// installs docker.io and starts dockerd).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBootstrap, prewarmHarness } from '../../../bootstrap/index.ts';
import { createBridgeHarness } from '../../../host/harness.ts';
import { createDockerSandboxProvider, dockerUnavailable, type DockerSandboxProvider } from '../../../host/sandbox/docker/provider.ts';
import { createConformanceContext, sandboxProviderConformance } from '../../../host/testing/conformance/sandbox-provider-conformance.ts';
import { fixtureAdapter, fixtureCliPath } from '../../fixtures/fixture-adapter.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] docker sandbox tests: ${unavailable}`);
const prefix = `hbt${process.pid}`;

let provider: DockerSandboxProvider;
beforeAll(() => {
  provider = createDockerSandboxProvider({ namePrefix: prefix });
});
afterAll(async () => {
  if (unavailable) return;
  // Anything a failed case left behind: this run's containers only (by name prefix).
  const { docker } = await import('../../../host/sandbox/docker/docker-cli.ts');
  const listed = await docker('docker', ['ps', '-aq', '--filter', `name=^${prefix}-`]);
  const ids = listed.stdout.toString().split('\n').filter(Boolean);
  if (ids.length > 0) await docker('docker', ['rm', '-f', ...ids]);
  // And the snapshots its conformance identities committed (labelled with the provider's name prefix).
  const images = (await docker('docker', ['images', '-q', '--filter', `label=harness-bridge.provider=${prefix}`])).stdout.toString().split('\n').filter(Boolean);
  if (images.length > 0) await docker('docker', ['rmi', '-f', ...new Set(images)]);
});

describe.skipIf(unavailable !== undefined)('docker provider conformance', () => {
  for (const testCase of sandboxProviderConformance) {
    it(testCase.name, { timeout: 120_000 }, async (t) => {
      const { ctx, cleanup } = createConformanceContext(provider);
      try {
        const outcome = await testCase.run(ctx);
        if (outcome.status === 'skip') t.skip(outcome.reason);
      } finally {
        await cleanup();
      }
    });
  }
});

describe.skipIf(unavailable !== undefined)('docker session lifecycle', () => {
  it('stop after destroy, and a second stop, resolve (nothing runs); a command after destroy fails', { timeout: 120_000 }, async () => {
    const session = await provider.createSession({ sessionId: 'stop-after-destroy' });
    expect((await session.run({ command: 'echo up' })).stdout).toBe('up\n');
    await session.destroy();
    await session.stop();
    await session.stop();
    await expect(Promise.resolve(session.run({ command: 'echo again' }))).rejects.toThrow();
  });
});

/** The host's processes whose command line holds `secret`. */
function hostCommandLinesHolding(secret: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(secret)) found.push(`${entry}: ${cmdline.replace(/\0/g, ' ').slice(0, 120)}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe.skipIf(unavailable !== undefined)('a spawn\'s environment in a docker sandbox', () => {
  it('reaches the process exactly (line breaks, blanks, `#`, `=`, a trailing CR) and never the docker client\'s command line', { timeout: 120_000 }, async () => {
    const sandbox = await provider.createSession({ sessionId: `env-${Date.now()}` });
    try {
      const secret = randomBytes(16).toString('hex');
      const env: Record<string, string> = {
        HB_SECRET: secret,
        MULTI: `first ${secret}\nsecond\n`,
        CR: `cr ${secret}\r`,
        SPACES: `  both ${secret}  `,
        HASH: `#${secret}`,
        EQUALS: `a=${secret}=b`,
        UNICODE: `ünï ☃ ${secret}`,
        EMPTY: '',
        DOCKER_HOST: `single line ${secret}`, // a name the client reads: through the env file, not the client's environment
      };
      const names = Object.keys(env);
      const script = `process.stdout.write(JSON.stringify(Object.fromEntries(${JSON.stringify(names)}.map((k) => [k, process.env[k]]))) + '\\n'); setTimeout(() => {}, 60_000)`;
      const proc = await sandbox.spawn({ command: `exec node -e "${script.replace(/"/g, '\\"')}"`, env });
      const reader = proc.stdout.getReader();
      let printed = '';
      while (!printed.includes('\n')) {
        const { value, done } = await reader.read();
        if (done) break;
        printed += new TextDecoder().decode(value);
      }
      expect(JSON.parse(printed)).toEqual(env);
      // While it runs (its docker client alive): no host process shows a value, and no env file is left on disk.
      expect(hostCommandLinesHolding(secret)).toEqual([]);
      expect(readdirSync(tmpdir()).filter((name) => name.startsWith('hb-docker-env-'))).toEqual([]);
      await proc.kill();
      await proc.wait();
      // A value with a line break goes by name through the client's own environment: a name the client reads is refused.
      await expect(Promise.resolve(sandbox.run({ command: 'true', env: { DOCKER_CONFIG: 'a\nb' } }))).rejects.toMatchObject({ code: 'invalid-option', message: expect.stringContaining('DOCKER_CONFIG') });
      for (const bad of [{ 'A=B': 'c' }, { A: 'nul\0' }] as Record<string, string>[]) {
        await expect(Promise.resolve(sandbox.run({ command: 'true', env: bad }))).rejects.toMatchObject({ code: 'invalid-option', message: expect.stringContaining('not an environment variable') });
      }
      // The env file cannot be written (the temp dir is gone): one typed error naming it, and nothing runs.
      const tmp = process.env.TMPDIR;
      process.env.TMPDIR = '/nonexistent-hb-tmp';
      try {
        await expect(Promise.resolve(sandbox.run({ command: 'true', env: { A: 'b' } }))).rejects.toMatchObject({ code: 'docker-failed', message: expect.stringContaining('could not write the env file') });
      } finally {
        if (tmp === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = tmp;
      }
    } finally {
      await sandbox.destroy();
    }
  });
});

describe.skipIf(unavailable !== undefined)('sessions in a docker sandbox (exec transport)', () => {
  it('a turn, a stop and a resume in a new host: the bridge is reached through docker exec only', { timeout: 180_000 }, async () => {
    const sandbox = await provider.createSession({ sessionId: `turns-${Date.now()}` });
    try {
      expect(sandbox.getPortEndpoint, 'no port methods: nothing inside is reachable over a network').toBeUndefined();
      // The fixture CLI at the path its adapter names, inside the container.
      await sandbox.writeTextFile({ path: fixtureCliPath, content: await readFile(fixtureCliPath, 'utf8') });
      expect((await sandbox.run({ command: 'mkdir -p /work/project' })).exitCode).toBe(0);
      const harness = () => createBridgeHarness(fixtureAdapter(), { probeTimeoutMs: 10_000 });
      const session = await harness().doStart({ sessionId: 'docker-turns', sandboxSession: sandbox, sessionWorkDir: '/work/project' });
      const parts = await runTurn(session, 'in a container LINES:5');
      expect(textOf(parts)).toBe(Array.from({ length: 5 }, (_, i) => `in a container LINES:5 #${i}\n`).join(''));
      // The token never rides on a host command line: the docker client of the bridge's exec lives as long as the
      // bridge, and `docker exec -e` puts a spawn's environment in its argv, which every host user's ps shows.
      const token = (await sandbox.run({ command: "cat $(find / -xdev -name token -path '*/.harness-bridge/*' 2>/dev/null | head -1)" })).stdout.trim();
      expect(token).toMatch(/^[0-9a-f]{64}$/);
      expect(hostCommandLinesHolding(token)).toEqual([]);
      const stopped = await session.doStop();
      await sandbox.stop();
      const again = await provider.resumeSession({ sessionId: sandbox.id });
      const resumed = await harness().doStart({ sessionId: 'docker-turns', sandboxSession: again, sessionWorkDir: '/work/project', resumeFrom: stopped });
      expect((resumed as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
      expect(textOf(await runTurn(resumed, 'after resume LINES:2'))).toBe('after resume LINES:2 #0\nafter resume LINES:2 #1\n');
      await resumed.doDestroy();
    } finally {
      await sandbox.destroy();
    }
  });
});

describe.skipIf(unavailable !== undefined)('snapshots: the bridge recipe baked into an image', () => {
  it('two providers (as two host processes would) creating one identity at once run onFirstCreate once: the snapshot lock', { timeout: 180_000 }, async () => {
    const identity = `lock-${process.pid}-${Date.now()}`;
    const other = createDockerSandboxProvider({ namePrefix: prefix });
    let calls = 0;
    const onFirstCreate = async (session: { writeTextFile(o: { path: string; content: string }): PromiseLike<void> }) => {
      calls++;
      await session.writeTextFile({ path: 'stamp.txt', content: `call ${calls}` });
    };
    const [a, b] = await Promise.all([provider, other].map((p, i) => p.createSession({ sessionId: `lock-${i}-${Date.now()}`, identity, onFirstCreate })));
    try {
      expect(calls, 'onFirstCreate calls across the two providers').toBe(1);
      expect(await a!.readTextFile({ path: 'stamp.txt' })).toBe('call 1');
      expect(await b!.readTextFile({ path: 'stamp.txt' })).toBe('call 1');
    } finally {
      await a!.destroy();
      await b!.destroy();
      await provider.dropSnapshot(identity);
    }
  });

  it('a provider on another base image builds its own snapshot of the same identity: the base\'s files are there', { timeout: 180_000 }, async () => {
    const { docker, dockerOk } = await import('../../../host/sandbox/docker/docker-cli.ts');
    const identity = `base-${process.pid}-${Date.now()}`;
    // Another base: the default one with one more file (as a new image option or a new Node binary would differ).
    const marker = `${prefix}-base-marker-${Date.now()}`;
    const otherBase = `${prefix}-other-base:${Date.now()}`;
    const seed = await provider.createSession({ sessionId: `base-seed-${Date.now()}` });
    let runs = 0;
    const onFirstCreate = async () => {
      runs++;
    };
    const sessions: Array<{ destroy(): Promise<void> }> = [seed];
    const other = createDockerSandboxProvider({ namePrefix: prefix, image: otherBase });
    try {
      await seed.writeTextFile({ path: '/base-marker', content: marker });
      await dockerOk('docker', ['commit', '--change', `LABEL harness-bridge.provider=${prefix}`, seed.container, otherBase]);
      const onDefault = await provider.createSession({ sessionId: `base-a-${Date.now()}`, identity, onFirstCreate });
      sessions.push(onDefault);
      const onOther = await other.createSession({ sessionId: `base-b-${Date.now()}`, identity, onFirstCreate });
      sessions.push(onOther);
      expect(runs, 'onFirstCreate ran once per base image').toBe(2);
      expect(await provider.snapshotImage(identity)).not.toBe(await other.snapshotImage(identity));
      expect(onOther.origin).toMatchObject({ image: await other.snapshotImage(identity), builtSnapshot: true });
      expect(await onOther.readTextFile({ path: '/base-marker' }), "the other base's file is in its snapshot's session").toBe(marker);
      expect((await onDefault.run({ command: 'test -e /base-marker' })).exitCode, 'the default base has no such file').not.toBe(0);
    } finally {
      for (const session of sessions) await session.destroy();
      await provider.dropSnapshot(identity);
      await other.dropSnapshot(identity).catch(() => {});
      await docker('docker', ['image', 'rm', '--force', otherBase]);
    }
  });

  it('prewarm applies the recipe once and commits it under the recipe identity; sessions start from it with the recipe applied', { timeout: 300_000 }, async () => {
    // A recipe of this run only (its own install command), so the snapshot is built here, not found from an earlier run.
    const stamp = `built-${process.pid}-${Date.now()}`;
    const harness = createBridgeHarness(
      { ...fixtureAdapter(), install: { commands: [{ command: `echo ${stamp} >> /work/applied.log` }] } },
      { probeTimeoutMs: 10_000 },
    );
    const identity = await harness.getRecipeIdentity();
    try {
      const prewarm = await prewarmHarness({ harness, sandboxProvider: provider, dispose: 'destroy' });
      expect(prewarm.identity).toBe(identity);
      const sessions = [];
      for (let i = 0; i < 2; i++) {
        const sandbox = await provider.createSession({ sessionId: `snap-${i}-${Date.now()}`, identity, onFirstCreate: async () => { throw new Error('the snapshot exists: onFirstCreate must not run'); } });
        sessions.push(sandbox);
        expect(sandbox.origin).toMatchObject({ image: await provider.snapshotImage(identity), fromSnapshot: true });
        expect(await sandbox.readTextFile({ path: '/work/applied.log' }), 'the install command ran once, in the snapshot').toBe(`${stamp}\n`);
        const again = await applyBootstrap(sandbox.restricted(), await harness.getBootstrap!());
        expect(again.applied, 'the recipe is already applied in a session from the snapshot').toBe(false);
      }
      const [first] = sessions;
      await first!.writeTextFile({ path: fixtureCliPath, content: await readFile(fixtureCliPath, 'utf8') });
      expect((await first!.run({ command: 'mkdir -p /work/project' })).exitCode).toBe(0);
      const session = await harness.doStart({ sessionId: 'docker-snap', sandboxSession: first!, sessionWorkDir: '/work/project' });
      expect(textOf(await runTurn(session, 'from snapshot LINES:2'))).toBe('from snapshot LINES:2 #0\nfrom snapshot LINES:2 #1\n');
      await session.doDestroy();
      for (const sandbox of sessions) await sandbox.destroy();
    } finally {
      await provider.dropSnapshot(identity);
    }
  });
});

async function runTurn(session: { doPromptTurn: (o: { prompt: string; emit: (p: HarnessV1StreamPart) => void }) => PromiseLike<{ done: PromiseLike<unknown> }> }, prompt: string) {
  const parts: HarnessV1StreamPart[] = [];
  const control = await session.doPromptTurn({ prompt, emit: (part) => parts.push(part) });
  await control.done;
  return parts;
}

function textOf(parts: HarnessV1StreamPart[]): string {
  return parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
}
