// `harness-bridge demo` end to end, as a user runs it: the fixture flavour
// (no CLI, no model), and the real Claude Code flavour against the in-process
// scripted model with the whole demo inside a loopback-only network namespace
// (unshare -n; skipped with the reason when that is not possible). Asserts the
// summary (a second process continued, the attach rung, parts counted) and
// that the recording replays offline to exactly the parts streamed live.
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCli } from '../../../host/cli/install-clis.mjs';
import { netnsSupport } from '../../model-server/netns.ts';
import { ndjson, plain, runCli, withoutRedelivery } from './cli-helpers.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { joinSlices } from '../../../host/testing/every-cut.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-cli-demo-'));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const summaryPattern = /^summary: parts=(\d+) slice1=(\d+) slice2=(\d+) cursor=(\d+) rungs=(\S+) second-process=pid:(\d+) finish=(\S+) replay=(\S+) total=\S+$/m;

function parseSummary(stdout: string) {
  const match = summaryPattern.exec(stdout);
  expect(match, `no summary line in:\n${stdout}`).not.toBeNull();
  const [, parts, slice1, slice2, cursor, rungs, pid, finish, replay] = match!;
  const firstPid = /\[4\/6\] the turn, in this process \(pid (\d+)\)/.exec(stdout)?.[1];
  return { parts: Number(parts), slice1: Number(slice1), slice2: Number(slice2), cursor: Number(cursor), rungs, pid: Number(pid), firstPid: Number(firstPid), finish, replay };
}

/** The replay of the demo's recording is the live stream, its two slices (`slice1` parts, then the rest) joined as one. */
async function expectReplayMatchesLive(dir: string, adapter: string, slice1: number): Promise<HarnessV1StreamPart[]> {
  const live = ndjson(await readFile(join(dir, 'live-parts.ndjson'), 'utf8')) as HarnessV1StreamPart[];
  const replay = await runCli(['replay', join(dir, 'recordings'), '--adapter', adapter, '--json']);
  expect(replay.code, replay.stderr).toBe(0);
  expect(ndjson(replay.stdout)).toEqual(plain(withoutRedelivery(joinSlices([live.slice(0, slice1), live.slice(slice1)]))));
  const check = await runCli(['replay', join(dir, 'recordings'), '--adapter', adapter, '--check']);
  expect(check.code, check.stderr).toBe(0);
  return live;
}

describe('demo', () => {
  it('--adapter fixture: suspends in one process, continues in a second, summary and replay agree', async () => {
    const dir = join(root, 'fixture');
    const result = await runCli(['demo', '--adapter', 'fixture', '--dir', dir], { timeoutMs: 60_000 });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    for (const step of [1, 2, 3, 4, 5, 6]) expect(result.stdout).toContain(`[${step}/6]`);
    expect(result.stdout).toMatch(/recipe: applied \(\d+ ms\)/);
    expect(result.stdout).toContain('⏸ suspending the turn here');
    expect(result.stdout, 'not a TTY: plain text').not.toContain('\u001b[');
    const summary = parseSummary(result.stdout);
    expect(summary.pid, 'the continue ran in another process').not.toBe(summary.firstPid);
    expect(summary).toMatchObject({ rungs: 'attach', finish: 'stop', replay: 'identical' });
    expect(summary.slice1).toBeGreaterThan(0);
    expect(summary.slice2).toBeGreaterThan(0);
    expect(summary.parts).toBe(summary.slice1 + summary.slice2);
    const live = await expectReplayMatchesLive(dir, 'fixture', summary.slice1);
    expect(live).toHaveLength(summary.parts);
  }, 90_000);

  it('--adapter fixture with FORCE_COLOR: colours; NO_COLOR wins over it', async () => {
    const coloured = await runCli(['demo', '--adapter', 'fixture', '--clean'], { env: { FORCE_COLOR: '1' }, timeoutMs: 60_000 });
    expect(coloured.code, coloured.stderr).toBe(0);
    expect(coloured.stdout).toContain('\u001b[');
    const plainRun = await runCli(['demo', '--adapter', 'fixture', '--clean'], { env: { FORCE_COLOR: '1', NO_COLOR: '1' }, timeoutMs: 60_000 });
    expect(plainRun.code, plainRun.stderr).toBe(0);
    expect(plainRun.stdout).not.toContain('\u001b[');
  }, 90_000);

  it('run --adapter fixture --record FILE: one real turn; its recording checks clean and replays to as many parts', async () => {
    const file = join(root, 'run.ndjson');
    const result = await runCli(['run', '--adapter', 'fixture', '--record', file, 'one-off LINES:4 TOOL:lookup'], { timeoutMs: 60_000 });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/tool-call lookup \(host tool\)/);
    const parts = Number(/^run summary: parts=(\d+) finish=stop cursor=\d+ /m.exec(result.stdout)?.[1]);
    expect(parts).toBeGreaterThan(4);
    const check = await runCli(['replay', file, '--check']);
    expect(check.code, check.stderr).toBe(0);
    const replay = await runCli(['replay', file, '--json']);
    expect(ndjson(replay.stdout)).toHaveLength(parts);
  }, 90_000);

  const netns = netnsSupport();
  it.skipIf(!netns.ok)(`claude-code (real CLI, scripted model, loopback-only namespace)${netns.ok ? '' : ` — skipped: ${netns.reason}`}`, async () => {
    await ensureCli('claude-code');
    const dir = join(root, 'claude');
    const result = await runCli(['demo', '--dir', dir], {
      timeoutMs: 150_000,
      env: { ANTHROPIC_API_KEY: '' }, // never the real API here
      wrap: (cmd, args) => ({ cmd: 'unshare', args: ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', cmd, ...args] }),
    });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('the scripted model on http://127.0.0.1:');
    expect(result.stdout).toMatch(/tool-call edit \(CLI builtin\)/);
    expect(result.stdout).toMatch(/tool-call notify_reviewer \(host tool\)/);
    expect(result.stdout).toMatch(/the demo answers notify_reviewer/);
    expect(result.stdout).toContain('now "this is new text"');
    const summary = parseSummary(result.stdout);
    expect(summary.pid).not.toBe(summary.firstPid);
    expect(summary).toMatchObject({ rungs: 'attach', finish: 'stop', replay: 'identical' });
    expect(summary.parts).toBe(summary.slice1 + summary.slice2);
    // The recording of this real Claude Code run replays to the parts streamed live.
    const live = await expectReplayMatchesLive(dir, 'claude-code', summary.slice1);
    expect(live.some((part) => part.type === 'file-change')).toBe(true);
    expect(await readFile(join(dir, 'sandboxes', 'demo', 'project', 'notes.txt'), 'utf8')).toBe('this is new text\n');
  }, 180_000);
});
