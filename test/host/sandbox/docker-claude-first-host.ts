// The first host process for docker-harness-agent.test.ts's suspend case: the real HarnessAgent
// runs Claude Code in a Docker session (model through the egress tunnel), suspends the turn while
// the host tool runs, writes the continue state to a file, prints `{"sessionId":…,"head":…}` and
// exits without stopping anything. Usage:
//   node --import tsx test/host/sandbox/docker-claude-first-host.ts <name prefix> <model url> <state file>
import { writeFileSync } from 'node:fs';
import type { HarnessV1NetworkSandboxSession as SdkNetworkSandboxSession, HarnessV1SandboxProvider as SdkSandboxProvider } from '@ai-sdk/harness';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { tool } from 'ai';
import { z } from 'zod';
import { createBridgeHarness } from '../../../host/harness.ts';
import { createDockerSandboxProvider } from '../../../host/sandbox/docker/provider.ts';
import { claudeCodeInDocker, proxyPort } from './docker-clis.ts';

const [namePrefix, modelUrl, stateFile] = process.argv.slice(2) as [string, string, string];
const install = await claudeCodeInDocker.install();
const bin = claudeCodeInDocker.bin(install);
const docker = createDockerSandboxProvider({ namePrefix, readOnlyMounts: [install.dir], librariesOf: [bin], egressTunnel: { port: proxyPort } });
const sandbox: SdkSandboxProvider = {
  specificationVersion: 'harness-sandbox-v1',
  providerId: 'docker-egress',
  createSession: async (options) => {
    const session = await docker.createSession(options);
    await session.setNetworkPolicy({ mode: 'custom', allowedHosts: ['localhost'] });
    await session.egressProxy();
    return session as unknown as SdkNetworkSandboxSession;
  },
};
let entered!: () => void;
const inTool = new Promise<void>((resolve) => (entered = resolve));
let open!: () => void;
const opened = new Promise<void>((resolve) => (open = resolve));
const agent = new HarnessAgent({
  harness: createBridgeHarness(claudeCodeInDocker.adapter(bin, modelUrl), { probeTimeoutMs: 20_000 }),
  sandbox,
  permissionMode: 'allow-all',
  tools: { echo_upper: tool({ description: 'Echo in upper case', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => (entered(), await opened, `HOST SAYS HI ${text.toUpperCase()}`) }) },
});
const session = await agent.createSession();
const result = await agent.stream({ session, prompt: 'SCENARIO:mcp call the host tool' });
const reading = (async () => {
  let text = '';
  for await (const delta of result.textStream) text += delta;
  return text;
})();
await inTool;
const suspending = session.suspendTurn();
open();
const state = await suspending;
const head = await reading;
writeFileSync(stateFile, JSON.stringify({ sessionId: session.sessionId, state }));
process.stdout.write(`${JSON.stringify({ sessionId: session.sessionId, head, type: state.type })}\n`);
process.exit(0);
