// End to end: the real pi 0.73.1 (`pi --mode rpc` + the harness-bridge extension) through
// createBridgeHarness(piAdapter) on the local sandbox provider, against the scripted model server's
// Chat Completions flavour, inside its loopback-only network namespace. The shared case list and
// the conformance list are test/e2e/cases.ts; pi-only cases are below.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { piAdapter, piChatCompletionsProvider } from '../../host/adapters/pi.ts';
import { withHostInstalledCli } from '../../host/adapters/index.ts';
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import { ensureCli } from '../../scripts/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { textOf, turn, useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'pi',
  install: () => ensureCli('pi'),
  // The CLI is installed on this host (no npm inside the namespace); the extension file still comes with the recipe.
  adapter: (bin, modelUrl) =>
    withHostInstalledCli(piAdapter({ binPath: bin, provider: piChatCompletionsProvider({ id: 'fake', baseUrl: `${modelUrl}/v1`, apiKey: 'sk-test', models: ['fake-model'] }) })),
  requestPath: '/v1/chat/completions',
});

sharedE2eCases(env, {
  name: 'pi',
  modelId: 'fake-model',
  deniedResult: 'The host denied this tool use.',
  compactionSummary: /./,
  translatorSnapshots: true,
  skip: { 'doCompact between turns from a re-attached host: the next turn carries the compaction part; the model gets the summary': 'pi offers no doCompact (see "pi only")' },
});

describe('pi only', () => {
  it('skills are materialised where pi discovers them (.pi/skills)', async () => {
    const skills = [{ name: 'greet-politely', description: 'SKILL-MARKER greet the user politely', content: 'Say hello politely.' }];
    const { session, workDir } = await env.open('skills', 'allow-all', undefined, skills);
    expect(await readFile(join(workDir, '.pi/skills/greet-politely/SKILL.md'), 'utf8')).toContain('SKILL-MARKER');
    const before = env.requests().length;
    const { parts } = await turn(session, 'SCENARIO:text hello');
    expect(textOf(parts)).toContain('hello');
    expect(JSON.stringify(env.requests(before)[0]?.body), 'the model is told about the skill').toContain('SKILL-MARKER');
    await session.doDestroy();
  }, 120_000);

  it('doCompact is not offered: pi compacts on its own (auto), and that arrives as a compaction part', async () => {
    const { session } = await env.open('compact');
    await expect(session.doCompact()).rejects.toBeInstanceOf(HarnessCapabilityUnsupportedError);
    await session.doDestroy();
  }, 120_000);
});
