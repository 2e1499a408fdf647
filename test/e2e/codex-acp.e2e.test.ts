// End to end: Zed's Codex ACP agent (@zed-industries/codex-acp, a native binary, pinned in
// host/adapters/acp/agents.ts) through the generic ACP adapter, on the local sandbox provider,
// against the scripted model server's Responses flavour inside its loopback-only namespace
// (test/e2e/support.ts). The shared cases and the conformance list; what ACP cannot do is skipped
// by name with the reason (docs/acp.md#cases).
import { codexAcpAdapter, codexAcpCli } from '../../host/adapters/acp/agents.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { useE2eEnv } from './support.ts';

const abortOnlyReject =
  "codex-acp's only reject option is 'abort' ('No, and tell Codex what to do differently'): it cancels the whole turn (stopReason cancelled) instead of declining the one command, so no error result reaches the model";
const noMidTurn = 'ACP has no mid-turn user message: a turn is one session/prompt request, and the adapter offers no submitUserMessage';

const env = useE2eEnv({
  name: 'codex-acp',
  install: () => ensureCli(codexAcpCli),
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(codexAcpAdapter({ binPath: bin, modelId: 'gpt-5.5', extraEnv: { OPENAI_BASE_URL: `${modelUrl}/v1`, OPENAI_API_KEY: 'sk-test' }, ...variant })),
  requestPath: '/v1/responses',
});

sharedE2eCases(env, {
  name: 'codex-acp',
  modelId: 'gpt-5.5',
  deniedResult: 'declined',
  compactionSummary: /^$/,
  translatorSnapshots: true,
  skip: {
    'approval round trip (deny) with allow-reads': abortOnlyReject,
    'an approval denial reaches the CLI: the tool does not run, its result is an error, the turn finishes stop': abortOnlyReject,
    'mid-turn user message reaches the model within the running turn': noMidTurn,
    'mid-turn user message during a text-only turn: the answer to it is part of that turn; the next turn is normal': noMidTurn,
    'doCompact between turns from a re-attached host: the next turn carries the compaction part; the model gets the summary': 'ACP has no compaction request (doCompact is refused with HarnessCapabilityUnsupportedError)',
  },
});
