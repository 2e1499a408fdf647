// End to end: Qwen Code 0.24.4 in ACP mode (`qwen --acp`, pinned in host/adapters/acp/agents.ts), an agent the
// ACP adapter was never tuned to, through the generic ACP adapter (its qwenCodeAdapter preset) on the local sandbox
// provider, against the scripted model server's Chat Completions flavour inside its loopback-only namespace
// (test/e2e/support.ts). The kit's conformance list, host tools included: Qwen Code keeps MCP tools out of its tool
// list until its tool_search describes them and calls them through its tool_call tool (docs/acp.md#qwen-code), so
// the host-tool prompt names the tool (TOOL:echo_upper) for the scripted model's search.
import { qwenCodeAdapter, qwenCodeCli } from '../../host/adapters/acp/agents.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { conformanceE2eCases } from './cases.ts';
import { useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'qwen-code-acp',
  install: () => ensureCli(qwenCodeCli),
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(qwenCodeAdapter({ binPath: bin, modelId: 'scripted-model', extraEnv: { OPENAI_BASE_URL: `${modelUrl}/v1`, OPENAI_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/chat/completions',
});

conformanceE2eCases(env, { name: 'qwen-code', modelId: 'scripted-model', hostToolPrompt: 'SCENARIO:mcp TOOL:echo_upper call the host tool' });
