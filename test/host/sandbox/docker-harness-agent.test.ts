// The real HarnessAgent driving real CLIs (Claude Code, Codex) in `--network none` Docker sessions:
// the bridge reached through the exec stream, the CLI's model (the scripted model on this host)
// reached only through the egress tunnel under the session's policy
// (docs/remote-providers.md#egress-tunnel), and a host tool called over the bridge's MCP endpoint on
// the container's own loopback. The CLI comes from the host's pinned install, bound read-only into
// the container (readOnlyMounts; librariesOf puts Claude Code's shared libraries in the base image).
// Skips without docker.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HarnessV1NetworkSandboxSession as SdkNetworkSandboxSession, HarnessV1SandboxProvider as SdkSandboxProvider } from '@ai-sdk/harness';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBridgeHarness } from '../../../host/harness.ts';
import { createDockerSandboxProvider, dockerUnavailable } from '../../../host/sandbox/docker/provider.ts';
import type { DockerSandboxSession } from '../../../host/sandbox/docker/session.ts';
import { startModelServer, type ModelServer } from '../../../host/testing/scripted-model/server.ts';
import { claudeCodeInDocker, dockerClis, proxyPort } from './docker-clis.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] docker HarnessAgent tests: ${unavailable}`);

let model: ModelServer;
const sessions: DockerSandboxSession[] = [];

beforeAll(async () => {
  if (unavailable) return;
  model = await startModelServer();
}, 60_000);

afterAll(async () => {
  for (const session of sessions) await session.destroy();
  await model?.close();
});

describe.skipIf(unavailable !== undefined)('HarnessAgent + a real CLI in a docker session, through the egress tunnel', () => {
  for (const cli of dockerClis) {
    it(`${cli.name}: a text turn and a host tool call, the model reached only through the host policy`, { timeout: 600_000 }, async () => {
      const install = await cli.install();
      const bin = cli.bin(install);
      const docker = createDockerSandboxProvider({ namePrefix: `hbha${process.pid}`, readOnlyMounts: [install.dir], librariesOf: [bin], egressTunnel: { port: proxyPort } });
      // The SDK's session type names port methods as required; a Docker session has none (the kit reaches its bridge over the exec stream).
      const sandbox: SdkSandboxProvider = {
        specificationVersion: 'harness-sandbox-v1',
        providerId: 'docker-egress',
        createSession: async (options) => {
          const session = await docker.createSession(options);
          sessions.push(session);
          await session.setNetworkPolicy({ mode: 'custom', allowedHosts: ['localhost'] });
          await session.egressProxy();
          return session as unknown as SdkNetworkSandboxSession;
        },
      };
      const agent = new HarnessAgent({
        harness: createBridgeHarness(cli.adapter(bin, model.url.replace('127.0.0.1', 'localhost')), { probeTimeoutMs: 20_000 }),
        sandbox,
        permissionMode: 'allow-all',
        tools: { echo_upper: tool({ description: 'Echo in upper case', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => `HOST SAYS HI ${text.toUpperCase()}` }) },
      });
      const before = model.requests().filter((request) => request.path === cli.modelPath).length;
      const session = await agent.createSession();
      expect((await agent.generate({ session, prompt: 'SCENARIO:text hello from docker' })).text).toContain('hello from docker');
      const called = await agent.generate({ session, prompt: 'SCENARIO:mcp call the host tool' });
      console.log(`[figures] docker harness-agent ${cli.name} tool turn: ${JSON.stringify(called.text).slice(0, 200)}`);
      expect(called.toolResults.map((result) => result.output)).toEqual([expect.stringContaining('HOST SAYS HI')]);
      expect(model.requests().filter((request) => request.path === cli.modelPath).length - before).toBeGreaterThanOrEqual(2);
      await session.destroy?.();
    });
  }

  it('claude-code: suspendTurn at the host tool call in one host process, continueFrom in another: the tool result reaches Claude once', { timeout: 600_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hb-docker-suspend-'));
    const prefix = `hbhs${process.pid}`;
    try {
      const stateFile = join(dir, 'state.json');
      const modelUrl = model.url.replace('127.0.0.1', 'localhost');
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'docker-claude-first-host.ts'), prefix, modelUrl, stateFile], { cwd: join(import.meta.dirname, '../../..') });
      const first = JSON.parse(stdout.trim().split('\n').at(-1)!) as { sessionId: string; head: string; type: string };
      expect(first.type).toBe('continue-turn');
      const { sessionId, state } = JSON.parse(readFileSync(stateFile, 'utf8'));
      // This process is the second host: the session is resumed, its kept policy and tunnel with it.
      const install = await claudeCodeInDocker.install();
      const bin = claudeCodeInDocker.bin(install);
      const docker = createDockerSandboxProvider({ namePrefix: prefix, readOnlyMounts: [install.dir], librariesOf: [bin], egressTunnel: { port: proxyPort } });
      const sandbox: SdkSandboxProvider = {
        specificationVersion: 'harness-sandbox-v1',
        providerId: 'docker-egress',
        createSession: async () => {
          throw new Error('the second host only resumes');
        },
        resumeSession: async (options) => {
          const session = await docker.resumeSession(options);
          sessions.push(session);
          return session as unknown as SdkNetworkSandboxSession;
        },
      };
      const agent = new HarnessAgent({
        harness: createBridgeHarness(claudeCodeInDocker.adapter(bin, modelUrl), { probeTimeoutMs: 20_000 }),
        sandbox,
        permissionMode: 'allow-all',
        tools: { echo_upper: tool({ description: 'Echo in upper case', inputSchema: z.object({ text: z.string() }), execute: async () => 'SHOULD NOT RUN AGAIN' }) },
      });
      const continued = await agent.createSession({ sessionId, continueFrom: state });
      const rest = await agent.continueStream({ session: continued });
      let tail = '';
      for await (const delta of rest.textStream) tail += delta;
      expect(await rest.finishReason).toBe('stop');
      console.log(`[figures] docker suspend/continue: head=${JSON.stringify(first.head.slice(0, 80))} tail=${JSON.stringify(tail.slice(0, 120))}`);
      expect(first.head + tail).toMatch(/Last tool result was: .*HOST SAYS HI/);
      expect(first.head + tail).not.toContain('SHOULD NOT RUN AGAIN');
      await continued.destroy?.();
    } finally {
      rmSync(dir, { recursive: true, force: true });
      const { docker: run } = await import('../../../host/sandbox/docker/docker-cli.ts');
      const ids = (await run('docker', ['ps', '-aq', '--filter', `name=^${prefix}-`])).stdout.toString().split('\n').filter(Boolean);
      if (ids.length > 0) await run('docker', ['rm', '-f', ...ids]);
    }
  });
});
