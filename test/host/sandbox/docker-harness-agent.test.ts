// The real HarnessAgent driving the real Claude Code in a `--network none` Docker session: the bridge
// reached through the exec stream, the CLI's model (the scripted model on this host) reached only
// through the egress tunnel under the session's policy (docs/remote-providers.md#egress-tunnel), and a
// host tool called over the bridge's MCP endpoint on the container's own loopback. Skips without docker.
import { realpathSync } from 'node:fs';
import type { HarnessV1NetworkSandboxSession as SdkNetworkSandboxSession, HarnessV1SandboxProvider as SdkSandboxProvider } from '@ai-sdk/harness';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claudeCodeAdapter } from '../../../host/adapters/claude-code/claude-code.ts';
import { withHostInstalledCli } from '../../../host/adapters/registry.ts';
import { ensureCli } from '../../../host/cli/install-clis.mjs';
import { createBridgeHarness } from '../../../host/harness.ts';
import { createDockerSandboxProvider, dockerUnavailable, type DockerSandboxProvider } from '../../../host/sandbox/docker/provider.ts';
import type { DockerSandboxSession } from '../../../host/sandbox/docker/session.ts';
import { startModelServer, type ModelServer } from '../../../host/testing/scripted-model/server.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] docker HarnessAgent tests: ${unavailable}`);

const proxyPort = 3128;
const proxy = `http://127.0.0.1:${proxyPort}`;
let model: ModelServer;
let bin: string;
let docker: DockerSandboxProvider;
const sessions: DockerSandboxSession[] = [];

beforeAll(async () => {
  if (unavailable) return;
  const cli = await ensureCli('claude-code');
  bin = realpathSync(cli.binPath);
  model = await startModelServer();
  docker = createDockerSandboxProvider({ namePrefix: `hbha${process.pid}`, readOnlyMounts: [cli.dir], librariesOf: [bin], egressTunnel: { port: proxyPort } });
}, 600_000);

afterAll(async () => {
  for (const session of sessions) await session.destroy();
  await model?.close();
});

// Each session: the model's name allowed, nothing else, before the CLI runs.
// The SDK's session type names port methods as required; a Docker session has none (the kit reaches its bridge over the exec stream).
const sandbox: SdkSandboxProvider = {
  specificationVersion: 'harness-sandbox-v1',
  providerId: 'docker-egress',
  createSession: async (options?: { sessionId?: string }) => {
    const session = await docker.createSession(options);
    sessions.push(session);
    await session.setNetworkPolicy({ mode: 'custom', allowedHosts: ['localhost'] });
    await session.egressProxy();
    return session as unknown as SdkNetworkSandboxSession;
  },
};

const adapter = () =>
  withHostInstalledCli(
    claudeCodeAdapter({
      binPath: bin,
      extraEnv: {
        // The model by name, through the container's proxy; the bridge's MCP endpoint (127.0.0.1 inside) directly.
        ANTHROPIC_BASE_URL: model.url.replace('127.0.0.1', 'localhost'),
        ANTHROPIC_API_KEY: 'sk-test',
        HTTPS_PROXY: proxy,
        HTTP_PROXY: proxy,
        NO_PROXY: '127.0.0.1',
        no_proxy: '127.0.0.1',
      },
    }),
  );

describe.skipIf(unavailable !== undefined)('HarnessAgent + Claude Code in a docker session', () => {
  it('a text turn and a host tool call, the model reached only through the host policy', { timeout: 300_000 }, async () => {
    const agent = new HarnessAgent({
      harness: createBridgeHarness(adapter(), { probeTimeoutMs: 20_000 }),
      sandbox,
      permissionMode: 'allow-all',
      tools: { echo_upper: tool({ description: 'Echo in upper case', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => `HOST SAYS HI ${text.toUpperCase()}` }) },
    });
    const session = await agent.createSession();
    const text = await agent.generate({ session, prompt: 'SCENARIO:text hello from docker' });
    expect(text.text).toContain('hello from docker');
    const called = await agent.generate({ session, prompt: 'SCENARIO:mcp call the host tool' });
    console.log(`[figures] docker harness-agent tool turn: ${JSON.stringify(called.text).slice(0, 300)} toolResults=${called.toolResults.length}`);
    expect(called.toolResults.map((result) => result.output)).toEqual([expect.stringContaining('HOST SAYS HI')]);
    const tunnel = sessions[0]!;
    expect(await tunnel.getNetworkPolicy()).toEqual({ mode: 'custom', allowedHosts: ['localhost'] });
    expect(model.requests().filter((request) => request.path === '/v1/messages').length).toBeGreaterThanOrEqual(2);
    await session.destroy?.();
  });
});
