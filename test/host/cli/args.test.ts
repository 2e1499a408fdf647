// Every subcommand answers --help on stdout with exit 0, and refuses bad
// arguments or unreadable files with exit != 0 and ONE line on stderr.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hb-cli-args-'));
  await writeFile(join(dir, 'not-a-recording.txt'), 'hello\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function expectOneLineError(result: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(result.code, `stderr: ${result.stderr}`).not.toBe(0);
  expect(result.code).not.toBeNull();
  const lines = result.stderr.split('\n').filter((line) => line.length > 0);
  expect(lines, 'exactly one line on stderr').toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

describe('harness-bridge --help', () => {
  it('lists the subcommands; no command is a usage error', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    for (const name of ['demo', 'run', 'replay', 'view', 'inspect', 'bootstrap', 'model-server']) expect(help.stdout).toContain(name);
    expectOneLineError(await runCli([]), /missing command/);
    expectOneLineError(await runCli(['frobnicate']), /unknown command "frobnicate"/);
  });

  it.each([
    ['demo', /ANTHROPIC_API_KEY/],
    ['run', /--adapter <id\|path>/],
    ['model-server', /--profile NAME\|MODULE/],
    ['replay', /--timeline[\s\S]*--check[\s\S]*--diff/],
    ['view', /--out[\s\S]*--diff[\s\S]*--serve/],
    ['inspect', /state-dir/],
    ['bootstrap', /--print/],
    ['demo-continue', /--state/],
  ])('%s --help', async (command, pattern) => {
    const result = await runCli([command, '--help']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(pattern);
    expect(result.stderr).toBe('');
  });
});

describe('bad arguments and unreadable files: exit != 0, one line on stderr', () => {
  it('demo', async () => {
    expectOneLineError(await runCli(['demo', '--bogus']), /demo: unknown option --bogus/);
    expectOneLineError(await runCli(['demo', '--adapter', 'nope']), /unknown adapter "nope"/);
    expectOneLineError(await runCli(['demo', 'extra']), /unexpected argument "extra"/);
  });

  it('run', async () => {
    expectOneLineError(await runCli(['run', 'hello']), /--adapter <id\|path> is required/);
    expectOneLineError(await runCli(['run', '--adapter', 'fixture']), /missing the prompt/);
    expectOneLineError(await runCli(['run', '--adapter', 'nope', 'hi']), /unknown adapter "nope"/);
    expectOneLineError(await runCli(['run', '--adapter', 'fixture', '--sandbox', 'e2b', 'hi']), /unknown sandbox "e2b"/);
    expectOneLineError(await runCli(['run', '--adapter', 'fixture', '--record', join(dir, 'no/such/dir/x.ndjson'), 'hi']), /cannot write .*ENOENT/);
  });

  it('replay', async () => {
    expectOneLineError(await runCli(['replay']), /missing the recording or journal/);
    expectOneLineError(await runCli(['replay', join(dir, 'missing.ndjson')]), /cannot read .*missing\.ndjson: ENOENT/);
    expectOneLineError(await runCli(['replay', join(dir, 'not-a-recording.txt')]), /not-a-recording\.txt:1: not JSON/);
    expectOneLineError(await runCli(['replay', join(dir, 'not-a-recording.txt'), '--check', '--timeline']), /choose one of/);
    expectOneLineError(await runCli(['replay', join(dir, 'not-a-recording.txt'), '--diff']), /--diff needs a value/);
  });

  it('inspect', async () => {
    expectOneLineError(await runCli(['inspect']), /missing the state dir/);
    expectOneLineError(await runCli(['inspect', join(dir, 'missing')]), /cannot read .*ENOENT/);
    expectOneLineError(await runCli(['inspect', dir]), /not a bridge state dir/);
  });

  it('bootstrap', async () => {
    expectOneLineError(await runCli(['bootstrap']), /pass --print/);
    expectOneLineError(await runCli(['bootstrap', '--print', '--adapter', 'nope']), /unknown adapter "nope"/);
    expectOneLineError(await runCli(['bootstrap', '--print', '--bridge-file', join(dir, 'missing.mjs')]), /cannot read the bridge bundle/);
  });

  it('demo-continue', async () => {
    expectOneLineError(await runCli(['demo-continue']), /--state <file> is required/);
    expectOneLineError(await runCli(['demo-continue', '--state', join(dir, 'not-a-recording.txt')]), /cannot read|not a demo state/);
  });
});
