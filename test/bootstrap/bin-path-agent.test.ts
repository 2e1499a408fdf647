// A real ACP agent (claude-code-acp, from the host's CLI cache) given by binPath runs in a local sandbox
// with no network but loopback: the bootstrap writes the recipe's files and runs no command (an npm
// install there would fail the start: the sandbox's commands run inside the scripted model's
// loopback-only namespace). acpAdapter's HOME files, prelude and env reach the agent's process through
// the sh wrapper, with binPath still the exec'd agent: its own shell tool prints them back. Under
// allow-reads the agent's permission request becomes an approval whose tool-call holds the command.
import { claudeCodeAcpCli } from '../../host/adapters/acp/agents.ts';
import { acpAdapter } from '../../host/adapters/acp/acp.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { bootstrapLogFileName } from '../../bootstrap/index.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectValid, ofType, textOf, turn, useE2eEnv } from '../e2e/support.ts';

const homeFile = { path: '.wrapped-agent/note.txt', content: 'a file the recipe put in the agent HOME\n' };
// Shell arithmetic, so only a prelude that ran in a shell gives "prelude-42".
const prelude = 'export WRAPPED_MARK="prelude-$((6 * 7))"';
const command = 'cat "$HOME/.wrapped-agent/note.txt"; echo "$WRAPPED_MARK $WRAPPED_ENV"';

const env = useE2eEnv({
  name: 'bin-path-agent',
  install: () => ensureCli(claudeCodeAcpCli),
  adapter: (bin, modelUrl) =>
    acpAdapter({
      id: 'wrapped-claude-acp',
      command: [claudeCodeAcpCli.bin],
      cli: claudeCodeAcpCli, // declared, and never installed: binPath says the agent is already there
      binPath: bin,
      env: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test', WRAPPED_ENV: 'env-set' },
      modelId: 'claude-opus-5-5',
      modelEnvVar: 'ANTHROPIC_MODEL',
      homeFiles: [homeFile],
      prelude,
    }),
  requestPath: '/v1/messages',
  profiles: [fileURLToPath(new URL('../e2e/acp-profiles.ts', import.meta.url))],
});

// After the env's beforeAll (which may install the agent on the host): from here on npm has an empty cache and a
// registry nobody answers, and the sandbox's commands inherit this env, so any npm install there fails the start.
let npmCache = '';
const npmEnv = ['npm_config_cache', 'npm_config_registry'] as const;
const saved = Object.fromEntries(npmEnv.map((name) => [name, process.env[name]]));
beforeAll(() => {
  npmCache = mkdtempSync(join(tmpdir(), 'hb-empty-npm-cache-'));
  process.env.npm_config_cache = npmCache;
  process.env.npm_config_registry = 'http://127.0.0.1:9/';
});
afterAll(() => {
  for (const name of npmEnv) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  if (npmCache) rmSync(npmCache, { recursive: true, force: true });
});

describe('a binPath ACP agent with HOME files and a prelude, offline', () => {
  it('starts without an install; its shell tool sees the HOME file, the prelude and the env', async () => {
    const { session, sandbox } = await env.open('wrapped', 'allow-all');
    const { parts } = await turn(session, `SCENARIO:shell CMD:${Buffer.from(command).toString('base64url')}`);
    expectValid(parts, 'wrapped agent');
    const calls = ofType(parts, 'tool-call').filter((call) => call.providerExecuted === true);
    expect(calls.map((call) => call.toolName)).toEqual(['bash']);
    const [result] = ofType(parts, 'tool-result').filter((r) => r.toolCallId === calls[0]!.toolCallId);
    expect(result, 'the shell call has its result').toBeDefined();
    expect(String(result!.result).trim()).toBe(`${homeFile.content}prelude-42 env-set`);
    expect(ofType(parts, 'finish').at(-1)?.finishReason.unified).toBe('stop');
    expect(textOf(parts).length).toBeGreaterThan(0);

    // The bootstrap wrote its files (the bridge, the HOME files) and ran no command at all.
    const recipe = await env.harness().getBootstrap!({});
    expect(recipe.commands).toEqual([]);
    const log = await sandbox.readTextFile({ path: `${recipe.bootstrapDir}/${bootstrapLogFileName}` });
    expect(log, 'the bootstrap ran in this sandbox').toMatch(/apply \S+: \d+ files written/);
    expect(log, 'no bootstrap command (no npm install)').not.toMatch(/command \d+\/\d+:/);
    expect(log).not.toMatch(/npm install/);
    await session.doDestroy();
  }, 180_000);

  it("allow-reads: the approval's tool-call carries the shell command the agent asks to run (not {}), and the approved call runs", async () => {
    const { session } = await env.open('approval', 'allow-reads');
    const asked = 'echo approved-run > approved.txt && cat approved.txt'; // a write: Claude Code runs a bare echo without asking
    const { parts } = await turn(session, `SCENARIO:shell CMD:${Buffer.from(asked).toString('base64url')}`, (part, control) => {
      if (part.type === 'tool-approval-request') void control?.submitToolApproval!({ approvalId: part.approvalId, approved: true });
    });
    expectValid(parts, 'approval');
    const [request] = ofType(parts, 'tool-approval-request');
    expect(request, 'the agent asked').toBeDefined();
    const call = ofType(parts, 'tool-call').find((c) => c.toolCallId === request!.toolCallId);
    expect(call?.toolName).toBe('bash');
    expect(JSON.parse(call!.input as string)).toMatchObject({ command: asked });
    const [result] = ofType(parts, 'tool-result').filter((r) => r.toolCallId === request!.toolCallId);
    expect(String(result?.result).trim()).toBe('approved-run');
    await session.doDestroy();
  }, 180_000);
});
