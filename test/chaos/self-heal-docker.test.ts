// Self-healing in a Docker sandbox (exec transport: the host reaches the bridge only through
// `docker exec`), with no application-side recovery code: the bridge SIGKILLed inside the container
// mid-turn is revived by the session and the same stream goes on (the kept CLI adopted); the whole
// container killed mid-turn ends the turn in a typed error (channel-lost, cause bridge-gone) naming the
// provider's words, instead of 300 s of retries. Figures: time from each kill to the recovery or the error.
// Skips with the reason when docker cannot run here (scripts/ensure-docker.sh starts dockerd).
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createBridgeHarness } from '../../host/harness.ts';
import { docker } from '../../host/sandbox/docker/docker-cli.ts';
import { createDockerSandboxProvider, dockerUnavailable, type DockerSandboxSession } from '../../host/sandbox/docker/provider.ts';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import type { HarnessV1Session } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter, fixtureCliPath } from '../fixtures/fixture-adapter.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] self-heal docker: ${unavailable}`);
const prefix = `hbh${process.pid}`;
const provider = createDockerSandboxProvider({ namePrefix: prefix });
const figures = { bridgeKillRecoverMs: -1, containerKillErrorMs: -1, errorCode: '', errorMessage: '' };
const diagnostics: HarnessV1Diagnostic[] = [];

afterAll(async () => {
  if (unavailable) return;
  console.log(
    `[figures] self-heal-docker bridge-kill-recovered-in-stream-ms=${figures.bridgeKillRecoverMs} container-kill-typed-error-ms=${figures.containerKillErrorMs} error=${figures.errorCode} message=${JSON.stringify(figures.errorMessage)}`,
  );
  const listed = await docker('docker', ['ps', '-aq', '--filter', `name=^${prefix}-`]);
  const ids = listed.stdout.toString().split('\n').filter(Boolean);
  if (ids.length > 0) await docker('docker', ['rm', '-f', ...ids]);
});

async function sessionIn(name: string): Promise<{ sandbox: DockerSandboxSession; session: HarnessV1Session }> {
  const sandbox = await provider.createSession({ sessionId: `${name}-${Date.now()}` });
  await sandbox.writeTextFile({ path: fixtureCliPath, content: await readFile(fixtureCliPath, 'utf8') });
  expect((await sandbox.run({ command: 'mkdir -p /work/project' })).exitCode).toBe(0);
  const harness = createBridgeHarness(fixtureAdapter({ survive: true }), { probeTimeoutMs: 10_000 });
  const session = await harness.doStart({ sessionId: name, sandboxSession: sandbox, sessionWorkDir: '/work/project', observability: { report: (d) => diagnostics.push(d) } });
  return { sandbox, session };
}

describe.skipIf(unavailable !== undefined)('self-heal in a docker sandbox (exec transport)', () => {
  it('the bridge SIGKILLed inside the container mid-turn: revived by the session, the same stream goes on, nothing recomputed', { timeout: 180_000 }, async () => {
    const { sandbox, session } = await sessionIn('heal-bridge');
    try {
      const prompt = 'in a container LINES:40 INTERVAL:20';
      const parts: HarnessV1StreamPart[] = [];
      let killedAt = 0;
      let kill: Promise<unknown> | null = null;
      const control = await session.doPromptTurn({
        prompt,
        emit: (part) => {
          parts.push(part);
          if (parts.length !== 8 || kill !== null) return;
          const stateDir = '/work/.harness-bridge/sessions/fixture-heal-bridge';
          kill = Promise.resolve(sandbox.run({ command: `kill -9 "$(sed -n 's/.*"pid":\\([0-9]*\\).*/\\1/p' ${stateDir}/bridge.json)"` })).then((result) => {
            killedAt = Date.now();
            expect(result.exitCode, result.stderr).toBe(0);
          });
        },
      });
      await control.done;
      await kill;
      const revived = diagnostics.find((d) => d.sessionId === 'heal-bridge' && typeof d.attrs?.deadBridgeId === 'string');
      expect(revived, 'the session revived its bridge').toBeDefined();
      figures.bridgeKillRecoverMs = revived!.timestamp! - killedAt;
      const deltas = parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta);
      expect(deltas).toEqual(Array.from({ length: 40 }, (_, i) => `${prompt} #${i}\n`));
      expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
      expect((session as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
      await session.doDestroy();
    } finally {
      await sandbox.destroy();
    }
  });

  it('the container killed mid-turn: the turn ends in a typed error naming the provider, not 300 s of retries', { timeout: 180_000 }, async () => {
    const { sandbox, session } = await sessionIn('heal-container');
    try {
      const parts: HarnessV1StreamPart[] = [];
      let killedAt = 0;
      let kill: Promise<unknown> | null = null;
      const control = await session.doPromptTurn({
        prompt: 'doomed LINES:400 INTERVAL:20',
        emit: (part) => {
          parts.push(part);
          if (parts.length !== 8 || kill !== null) return;
          kill = docker('docker', ['kill', sandbox.container]).then((result) => {
            killedAt = Date.now();
            expect(result.code, result.stderr).toBe(0);
          });
        },
      });
      const error = (await Promise.resolve(control.done).then(() => null, (reason: unknown) => reason)) as { code?: string; message?: string; cause?: { code?: string } } | null;
      await kill;
      figures.containerKillErrorMs = Date.now() - killedAt;
      figures.errorCode = `${error?.code}/${error?.cause?.code}`;
      figures.errorMessage = error?.message ?? '';
      expect(error?.code).toBe('channel-lost');
      expect(error?.cause?.code).toBe('bridge-gone');
      expect(error?.message).toMatch(/is not running/i);
    } finally {
      await sandbox.destroy();
    }
  });
});
