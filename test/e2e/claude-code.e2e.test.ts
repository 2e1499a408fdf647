// End to end: the real Claude Code 2.1.328 driven through createBridgeHarness(claudeCodeAdapter)
// on the local sandbox provider, against the scripted model server's Anthropic flavour, inside its
// loopback-only network namespace (test/e2e/support.ts). The cases are the shared list every
// real-CLI adapter runs, plus the conformance list (test/e2e/cases.ts); Claude-only cases below.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeAdapter } from '../../host/adapters/claude-code.ts';
import { withHostInstalledCli } from '../../host/adapters/index.ts';
import { ensureCli } from '../../scripts/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { textOf, turn, useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'claude-code',
  install: () => ensureCli('claude-code'),
  // The CLI is installed on this machine (no npm inside the namespace).
  adapter: (bin, modelUrl) => withHostInstalledCli(claudeCodeAdapter({ binPath: bin, extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test' } })),
  requestPath: '/v1/messages',
});

sharedE2eCases(env, { name: 'claude-code', modelId: 'claude-opus-5-5', deniedResult: 'host said no', compactionSummary: /Scripted summary/, translatorSnapshots: false });

describe('claude-code only', () => {
  it('skills are materialised where Claude discovers them', async () => {
    const skills = [{ name: 'greet-politely', description: 'SKILL-MARKER greet the user politely', content: 'Say hello politely.' }];
    const { session, workDir } = await env.open('skills', 'allow-all', undefined, skills);
    expect(await readFile(join(workDir, '.claude/skills/greet-politely/SKILL.md'), 'utf8')).toContain('SKILL-MARKER');
    const before = env.requests().length;
    await turn(session, 'SCENARIO:text hello');
    expect(JSON.stringify(env.requests(before)[0]?.body), 'the model is told about the skill').toContain('SKILL-MARKER');
    await session.doDestroy();
  }, 120_000);
});
