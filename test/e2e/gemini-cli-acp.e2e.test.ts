// End to end: Gemini CLI 0.61.0 in ACP mode (`gemini --acp`, pinned in host/adapters/acp/agents.ts), an agent the
// ACP adapter was never tuned to, through the generic ACP adapter (its geminiCliAdapter preset) on the local sandbox
// provider, against the scripted model server's Google GenAI flavour inside its loopback-only namespace
// (test/e2e/support.ts). The kit's conformance list and its part cases, host tools included: Gemini CLI names MCP
// tools `mcp_<server>_<tool>`, so the host-tool prompt names the tool (TOOL:echo_upper) for the scripted model.
import { fileURLToPath } from 'node:url';
import { geminiCliAdapter, geminiCliCli } from '../../host/adapters/acp/agents.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { conformanceE2eCases } from './cases.ts';
import { partConformanceE2eCases } from './part-cases.ts';
import { useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'gemini-cli-acp',
  install: () => ensureCli(geminiCliCli),
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(geminiCliAdapter({ binPath: bin, modelId: 'scripted-model', extraEnv: { GOOGLE_GEMINI_BASE_URL: modelUrl, GEMINI_API_KEY: 'test-key' }, ...variant })),
  requestPath: '/v1beta/models/scripted-model:streamGenerateContent',
  profiles: [fileURLToPath(new URL('./acp-profiles.ts', import.meta.url))],
});

const hostToolPrompt = 'SCENARIO:mcp TOOL:echo_upper call the host tool';
conformanceE2eCases(env, { name: 'gemini-cli', modelId: 'scripted-model', hostToolPrompt });
partConformanceE2eCases(env, {
  name: 'gemini-cli',
  hostToolPrompt,
  notApplicable: { 'steps-usage': "ACP reports no model steps and one usage for the whole prompt: the turn's one finish-step and its finish carry the turn's counts" },
});
