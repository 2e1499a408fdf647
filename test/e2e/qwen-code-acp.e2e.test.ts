// End to end: Qwen Code 0.24.4 in ACP mode (`qwen --acp`, pinned in host/adapters/acp/agents.ts), an agent the
// ACP adapter was never tuned to, through the generic ACP adapter (its qwenCodeAdapter preset) on the local sandbox
// provider, against the scripted model server's Chat Completions flavour inside its loopback-only namespace
// (test/e2e/support.ts). The conformance list, host tools included: Qwen Code keeps MCP tools out of its tool list
// until its tool_search describes them, and calls them through its tool_call tool (docs/acp.md#qwen-code), so the
// host-tool prompt names the tool (TOOL:echo_upper) for the scripted model's search. What it cannot do is skipped
// by name with the reason.
import { describe, it } from 'vitest';
import { qwenCodeAdapter, qwenCodeCli } from '../../host/adapters/acp/agents.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { adapterConformance } from '../../host/testing/conformance/adapter-conformance.ts';
import { useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'qwen-code-acp',
  install: () => ensureCli(qwenCodeCli),
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(qwenCodeAdapter({ binPath: bin, modelId: 'scripted-model', extraEnv: { OPENAI_BASE_URL: `${modelUrl}/v1`, OPENAI_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/chat/completions',
});

const hostTools = [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' as const } }, required: ['text'] } }];
const skip: Record<string, string> = {};

describe('conformance: qwen-code through the ACP adapter (real CLI)', () => {
  for (const testCase of adapterConformance) {
    const reason = skip[testCase.name];
    if (reason) {
      it.skip(`${testCase.name} (skipped: ${reason})`, () => undefined);
      continue;
    }
    it(
      testCase.name,
      async (context) => {
        const cleanups: Array<() => unknown> = [];
        const stops: Array<() => unknown> = [];
        const ctx = env.conformance(
          {
            text: 'SCENARIO:text conformance',
            long: 'SCENARIO:slow CHUNKS:30 INTERVAL:60 conformance slices',
            minParts: 30,
            hostTool: { prompt: 'SCENARIO:mcp TOOL:echo_upper call the host tool', tools: hostTools, output: 'HOST SAYS HI' },
            approval: { prompt: 'SCENARIO:shell', permissionMode: 'allow-reads' },
          },
          (cleanup) => void cleanups.push(cleanup),
          (stop) => void stops.push(stop),
        );
        try {
          const outcome = await testCase.run({ ...ctx, modelId: 'scripted-model' });
          if (outcome.status === 'skip') context.skip(outcome.reason);
        } finally {
          for (const cleanup of cleanups.reverse()) await cleanup();
          for (const stop of stops.reverse()) await stop();
        }
      },
      180_000,
    );
  }
});
