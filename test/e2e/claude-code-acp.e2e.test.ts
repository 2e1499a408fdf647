// End to end: Zed's Claude Code ACP agent (@zed-industries/claude-code-acp, pinned in
// host/adapters/acp/agents.ts) through the generic ACP adapter, on the local sandbox provider,
// against the scripted model server's Anthropic flavour inside its loopback-only namespace
// (test/e2e/support.ts). The shared cases and the conformance list; what ACP cannot do is skipped
// by name with the reason (docs/acp.md#cases).
import { fileURLToPath } from 'node:url';
import { claudeCodeAcpAdapter, claudeCodeAcpCli } from '../../host/adapters/acp/agents.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'claude-code-acp',
  install: () => ensureCli(claudeCodeAcpCli),
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(claudeCodeAcpAdapter({ binPath: bin, modelId: 'claude-opus-5-5', extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/messages',
  profiles: [fileURLToPath(new URL('./acp-profiles.ts', import.meta.url))],
});

sharedE2eCases(env, {
  name: 'claude-code-acp',
  deniedResult: 'User refused permission to run tool',
  compactionSummary: /Scripted summary/,
  translatorSnapshots: false,
  skip: {},
});
