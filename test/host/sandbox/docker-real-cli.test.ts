// A real CLI in a `--network none` Docker container, its model reached only through the egress
// tunnel and the host's policy (docs/remote-providers.md#egress-tunnel). Claude Code (the pinned
// install, bound read-only into the container, its shared libraries in the base image) runs a
// one-shot text turn against the scripted model on this host's 127.0.0.1: allowed, the scripted
// reply comes back and the model saw the request; under deny-all the CLI fails on the proxy's 403
// and the model sees nothing more. Skips, saying why, without docker.
import { realpathSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCli } from '../../../host/cli/install-clis.mjs';
import { createDockerSandboxProvider, dockerUnavailable } from '../../../host/sandbox/docker/provider.ts';
import type { DockerSandboxSession } from '../../../host/sandbox/docker/session.ts';
import { startModelServer, type ModelServer } from '../../../host/testing/scripted-model/server.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] docker real-CLI tests: ${unavailable}`);

let model: ModelServer;
let session: DockerSandboxSession;
let bin: string;

beforeAll(async () => {
  if (unavailable) return;
  const cli = await ensureCli('claude-code');
  bin = realpathSync(cli.binPath);
  model = await startModelServer();
  const provider = createDockerSandboxProvider({ namePrefix: `hbrc${process.pid}`, readOnlyMounts: [cli.dir], librariesOf: [bin] });
  session = await provider.createSession({ sessionId: 'real-cli' });
  await session.run({ command: 'mkdir -p /tmp/home/.claude /work/proj' });
}, 600_000);

afterAll(async () => {
  await session?.destroy();
  await model?.close();
});

async function claudeTurn(prompt: string) {
  const { url: proxy } = await session.egressProxy();
  return session.run({
    command: `cd /work/proj && exec ${JSON.stringify(bin)} -p ${JSON.stringify(prompt)} --output-format json --max-turns 1`,
    env: {
      HOME: '/tmp/home',
      CLAUDE_CONFIG_DIR: '/tmp/home/.claude',
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: 'sk-test',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      // Every connection through the container's proxy, loopback names included (the model's URL names the host's 127.0.0.1).
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      NO_PROXY: '',
      no_proxy: '',
    },
  });
}

const messages = () => model.requests().filter((request) => request.path === '/v1/messages').length;

describe.skipIf(unavailable !== undefined)('a real CLI in a docker session, through the egress tunnel', () => {
  it('Claude Code gets the scripted reply through the host policy, and fails on the 403 under deny-all', { timeout: 300_000 }, async () => {
    // The container alone reaches nothing: the model's port is not on its loopback.
    await session.setNetworkPolicy({ mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] });
    const allowed = await claudeTurn('SCENARIO:text through the tunnel');
    expect(allowed.exitCode, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout)).toMatchObject({ type: 'result', is_error: false, result: 'Scripted reply 1 (text): you said "through the tunnel".' });
    const seen = messages();
    expect(seen).toBeGreaterThanOrEqual(1);

    await session.setNetworkPolicy({ mode: 'deny-all' });
    const denied = await claudeTurn('SCENARIO:text refused');
    const deniedResult = JSON.parse(denied.stdout) as { is_error?: boolean; result?: string };
    console.log(`[figures] docker real-cli deny-all: exit=${denied.exitCode} result=${JSON.stringify(deniedResult.result)}`);
    expect(denied.exitCode).not.toBe(0);
    expect(deniedResult.is_error).toBe(true);
    expect(deniedResult.result).toMatch(/403/);
    expect(messages()).toBe(seen);
  });
});
