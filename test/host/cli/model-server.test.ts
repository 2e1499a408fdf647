// `harness-bridge model-server`: the scripted model server from the bundled CLI, with a profile
// module for a CLI the kit has never seen; prints its ready line, serves, stops on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliPath, runCli } from './cli-helpers.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hb-model-server-cli-'));
  await writeFile(join(dir, 'acme.mjs'), `export default { name: 'acme', shellTool: { name: 'run_terminal', commandArg: 'script' } };\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('serves with --profile MODULE until SIGTERM; a bad profile is a usage error', async () => {
  const child = spawn(process.execPath, [cliPath, 'model-server', '--profile', join(dir, 'acme.mjs'), '--log', join(dir, 'requests.jsonl')], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const ready = await new Promise<{ type: string; url: string }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as { type: string; url: string });
      });
      child.once('exit', (code) => reject(new Error(`model-server exited ${code}`)));
    });
    expect(ready).toMatchObject({ type: 'model-server-ready', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
    const body = {
      model: 'acme-model',
      tools: [{ type: 'function', function: { name: 'run_terminal', parameters: { type: 'object', properties: { script: { type: 'string' } }, required: ['script'] } } }],
      messages: [{ role: 'user', content: 'SCENARIO:shell PATH:x.txt' }],
    };
    const res = await fetch(`${ready.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(body) });
    const json = (await res.json()) as { choices: Array<{ message: { tool_calls: Array<{ function: { name: string; arguments: string } }> } }> };
    expect(json.choices[0]!.message.tool_calls[0]!.function).toEqual({ name: 'run_terminal', arguments: JSON.stringify({ script: 'echo hi > x.txt && cat x.txt' }) });
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }
  const bad = await runCli(['model-server', '--profile', 'nope']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/model-server: --profile nope: unknown profile "nope"/);
}, 30_000);
