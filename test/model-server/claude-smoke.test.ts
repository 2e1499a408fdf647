// Smoke test against the real Claude Code CLI: one stream-json text turn through the scripted
// model server, inside a loopback-only network namespace when running as root.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { ClaudeProcess, STREAM_JSON_ARGS, claudeEnv } from '../fixtures/claude-code/driver.ts';
import { startIsolatedModelServer, type IsolatedModelServer } from './netns.ts';

let dir: string;
let bin: string;
let server: IsolatedModelServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'claude-smoke-'));
  bin = (await ensureCli('claude-code')).binPath; // a fresh install takes seconds; hookTimeout covers it
  server = await startIsolatedModelServer({ logFile: join(dir, 'requests.jsonl') });
  if (!server.isolated) console.warn(`claude-smoke: running without a network namespace: ${server.reason}`);
}, 300_000);

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('runs a stream-json text turn against the scripted model server', async () => {
  const home = join(dir, 'home');
  const proj = join(dir, 'proj');
  mkdirSync(home, { recursive: true });
  mkdirSync(proj, { recursive: true });

  const proc = new ClaudeProcess(bin, STREAM_JSON_ARGS, { cwd: proj, env: claudeEnv(home, server.url), wrap: server.wrap });
  try {
    proc.sendUser('SCENARIO:text smoke test');
    const init = await proc.waitFor((l) => l.type === 'system' && l.subtype === 'init', { timeoutMs: 45_000 });
    const { line } = await proc.waitResult(init.index, 45_000);
    expect(line).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'Scripted reply 1 (text): you said "smoke test".',
      session_id: init.line.session_id,
    });
    expect(await proc.finish()).toBe(0);
  } finally {
    if (proc.exitCode === null) proc.child.kill('SIGKILL');
  }

  const seen = server.requests().filter((r) => r.path === '/v1/messages');
  expect(seen).toHaveLength(1);
  expect(seen[0]).toMatchObject({ method: 'POST', query: 'beta=true', api: 'anthropic', scenario: 'text' });
  expect(seen[0]!.headers['x-api-key']).toBeUndefined();
  expect(JSON.stringify(seen[0]!.body)).toContain('SCENARIO:text smoke test');
}, 90_000);
