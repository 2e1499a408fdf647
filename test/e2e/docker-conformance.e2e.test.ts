// The kit's conformance list (host/testing/conformance/adapter-conformance.ts) on real CLIs (Claude Code, Codex) in
// `--network none` Docker sessions: the bridge reached through the exec stream, the CLI's model (the scripted model
// on this host) reached only through the egress tunnel under a policy naming `localhost`
// (docs/remote-providers.md#egress-tunnel), host tools over the bridge's MCP endpoint on the container's own
// loopback, suspend and continue, stop and resume in a new bridge, abort, a denial. Each CLI comes from the host's
// pinned install, bound read-only into the container. Skips without docker.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createBridgeHarness } from '../../host/harness.ts';
import { createDockerSandboxProvider, dockerUnavailable, type DockerSandboxProvider } from '../../host/sandbox/docker/provider.ts';
import { adapterConformance, cliThatCannotStart, type AdapterConformanceContext } from '../../host/testing/conformance/adapter-conformance.ts';
import { startModelServer, type ModelServer } from '../../host/testing/scripted-model/server.ts';
import { dockerClis, proxyPort, type DockerCli } from '../host/sandbox/docker-clis.ts';
import { runConformanceCase } from './support.ts';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] docker conformance: ${unavailable}`);

const hostTools = [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' as const } }, required: ['text'] } }];

let model: ModelServer;

// What the sessions' egress tunnels refused, and their streams' ends and restarts (the tunnel logs nowhere by default):
// a failed case's message leads with those since it began, so a model call refused or cut once in a loaded run says why.
const egressEvents: string[] = [];
const noteEgress = (obj: object, msg?: string) => void egressEvents.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
const egressLog = { info: noteEgress, warn: noteEgress };
const leadWithEgressEvents = (error: unknown, from: number): void => {
  const events = egressEvents.slice(from);
  if (error instanceof Error && events.length > 0) error.message = `[egress tunnels since the case began: ${events.slice(-8).join('; ')}] ${error.message}`;
};

beforeAll(async () => {
  if (unavailable) return;
  model = await startModelServer();
}, 60_000);

afterAll(async () => {
  await model?.close();
});

for (const cli of dockerClis) {
  describe.skipIf(unavailable !== undefined)(`conformance: ${cli.name} in a docker session (real CLI, model through the egress tunnel)`, () => {
    let docker: DockerSandboxProvider;
    let adapter: () => ReturnType<DockerCli['adapter']>;

    beforeAll(async () => {
      const install = await cli.install();
      const bin = cli.bin(install);
      docker = createDockerSandboxProvider({ namePrefix: `hbconf${process.pid}`, readOnlyMounts: [install.dir], librariesOf: [bin], egressTunnel: { port: proxyPort, log: egressLog } });
      const modelUrl = model.url.replace('127.0.0.1', 'localhost');
      adapter = () => cli.adapter(bin, modelUrl);
    }, 600_000);

    for (const testCase of adapterConformance) {
      it(testCase.name, { timeout: 300_000 }, async (context) => {
        const from = egressEvents.length;
        await runConformanceCase(
          (ctx: AdapterConformanceContext) => testCase.run(ctx),
          (defer, deferStop) => {
            // Container names carry the provider's prefix (this process's pid): two runs on one machine never meet.
            const sandbox = async (sessionId: string, resume: boolean) => {
              const session = resume ? await docker.resumeSession({ sessionId }) : await docker.createSession({ sessionId });
              if (!resume) {
                deferStop(() => session.destroy());
                await session.setNetworkPolicy({ mode: 'custom', allowedHosts: ['localhost'] });
                await session.egressProxy();
              }
              return { sandbox: session as unknown as HarnessV1NetworkSandboxSession, workDir: session.defaultWorkingDirectory };
            };
            return {
              harness: () => createBridgeHarness(adapter(), { probeTimeoutMs: 20_000 }),
              harnessWithFailingStart: () => createBridgeHarness(cliThatCannotStart(adapter()), { probeTimeoutMs: 20_000 }),
              createSandbox: (id) => sandbox(id, false),
              resumeSandbox: (id) => sandbox(id, true),
              prompts: {
                text: 'SCENARIO:text conformance',
                textReply: /^Scripted reply \d+ \(text\): you said "conformance"\.$/,
                long: 'SCENARIO:slow CHUNKS:30 INTERVAL:60 conformance slices',
                minParts: 30,
                hostTool: { prompt: 'SCENARIO:mcp call the host tool', tools: hostTools, output: 'HOST SAYS HI', reply: /Last tool result was: [\s\S]*HOST SAYS HI/ },
                approval: { prompt: 'SCENARIO:shell', permissionMode: 'allow-reads' as const },
              },
              ...(cli.modelId ? { modelId: cli.modelId } : {}),
              defer,
            };
          },
          context,
          (error) => leadWithEgressEvents(error, from),
        );
      });
    }
  });
}
