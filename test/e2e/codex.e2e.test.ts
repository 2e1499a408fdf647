// End to end: the real Codex CLI 0.169.0 (`codex app-server`) driven through
// createBridgeHarness(codexAdapter) on the local sandbox provider, against the scripted model
// server's Responses flavour, everything inside its loopback-only network namespace
// (test/e2e/support.ts). The cases are the shared list every real-CLI adapter runs (cases.ts).
import { codexAdapter } from '../../host/adapters/codex/codex.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { insiderE2eCase } from './insider-case.ts';
import { useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'codex',
  install: () => ensureCli('codex'),
  // The CLI is installed on this machine (no npm inside the namespace); OPENAI_BASE_URL selects the adapter's custom provider.
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(codexAdapter({ binPath: bin, modelId: 'gpt-5.5', extraEnv: { OPENAI_BASE_URL: `${modelUrl}/v1`, OPENAI_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/responses',
});

sharedE2eCases(env, {
  name: 'codex',
  modelId: 'gpt-5.5',
  // A declined command completes with status "declined" and no output; Codex tells the model "rejected by user".
  deniedResult: 'declined',
  // thread/compact/start: Codex summarises the thread itself and shows no summary text.
  compactionSummary: /^$/,
  translatorSnapshots: true,
});
insiderE2eCase(env, 'codex');
