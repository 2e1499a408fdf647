// The part conformance cases (test/e2e/part-cases.ts) on the real Claude Code 2.1.328 against the scripted model
// server. Nothing is declared not applicable for Claude Code.
import { claudeCodeAdapter } from '../../host/adapters/claude-code/claude-code.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { partConformanceE2eCases } from './part-cases.ts';
import { useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'claude-code-parts',
  install: () => ensureCli('claude-code'),
  adapter: (bin, modelUrl, variant) => withHostInstalledCli(claudeCodeAdapter({ binPath: bin, extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/messages',
});

partConformanceE2eCases(env, { name: 'claude-code' });
