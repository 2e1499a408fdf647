// `harness-bridge run --adapter fixture` from a copy of dist/ alone (no source
// tree, no test/ anywhere above it): the build ships the fixture CLI next to
// the bundle, so the product runs the fixture adapter without the test tree.
// The recording names the script the bridge launched, so the test can tell
// which copy ran. (The same command from the repo build: demo.test.ts.)
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliPath, ndjson, runCli } from './cli-helpers.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-cli-run-'));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The argv of the first `start` frame the host sent, from a recording. */
async function launchedArgv(recording: string): Promise<string[]> {
  const lines = ndjson(await readFile(recording, 'utf8')) as Array<{ dir?: string; frame?: { type: string; launch?: { argv: string[] } } }>;
  const start = lines.find((line) => line.dir === 'out' && line.frame?.type === 'start');
  if (!start?.frame?.launch) throw new Error('the recording has no start frame');
  return start.frame.launch.argv;
}

function expectFixtureTurn(stdout: string): void {
  expect(stdout).toContain('hello LINES:2 #0');
  expect(stdout).toContain('hello LINES:2 #1');
  expect(stdout).toMatch(/finish stop \(result\)/);
  expect(stdout).toMatch(/run summary: parts=7 finish=stop/);
}

describe('harness-bridge run --adapter fixture', () => {
  it('runs from a copy of dist/ alone, launching the fixture CLI the build put next to the bundle', async () => {
    const dist = join(root, 'package', 'dist');
    await mkdir(dist, { recursive: true });
    for (const file of ['cli.mjs', 'bridge.mjs', 'fixture-cli.mjs']) await copyFile(join(cliPath, '..', file), join(dist, file));
    const recording = join(root, 'copy.ndjson');
    const result = await runCli(['run', '--adapter', 'fixture', '--record', recording, 'hello LINES:2'], {
      cwd: root,
      wrap: (cmd, args) => ({ cmd, args: [join(dist, 'cli.mjs'), ...args.slice(1)] }),
    });
    expect(result.code, result.stderr).toBe(0);
    expectFixtureTurn(result.stdout);
    expect(await launchedArgv(recording), 'the shipped copy ran, not the source tree’s').toContain(join(dist, 'fixture-cli.mjs'));
  });
});
