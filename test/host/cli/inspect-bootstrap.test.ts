// `harness-bridge inspect` on a state dir whose bridge is alive (detached
// session) and on one whose bridge was stopped, plus a torn journal tail; and
// `bootstrap --print`, whose identity must equal the harness's own.
import { appendFile, cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCodeAdapter } from '../../../host/adapters/claude-code/claude-code.ts';
import { createBridgeHarness } from '../../../host/harness.ts';
import { fixtureAdapter } from '../../fixtures/fixture-adapter.ts';
import { recordFixtureSession, runCli, type RecordedSession } from './cli-helpers.ts';

const inspectSchema = z.object({
  bridge: z.object({ pid: z.number(), alive: z.boolean(), answering: z.object({ ok: z.boolean(), detail: z.string() }).nullable(), journalId: z.string() }),
  journal: z.object({ journalId: z.string(), records: z.number(), firstSeq: z.number(), lastSeq: z.number(), tornTail: z.boolean(), healthy: z.boolean() }),
  turns: z.array(z.object({ turnId: z.string(), status: z.string(), firstSeq: z.number(), lastSeq: z.number() })),
});

let live: RecordedSession;
let stopped: RecordedSession;
beforeAll(async () => {
  live = await recordFixtureSession('inspect-live', 'alive LINES:2', 2, { keepRunning: true });
  stopped = await recordFixtureSession('inspect-stopped', 'stopped LINES:2', 2);
}, 60_000);
afterAll(async () => {
  for (const s of [live, stopped]) {
    if (!s) continue;
    for (const sandbox of s.sandboxes) await sandbox.stop();
    await rm(s.root, { recursive: true, force: true });
  }
});

describe('inspect', () => {
  it('a live state dir: pid alive, socket answers, journal healthy, the turn ended', async () => {
    const result = await runCli(['inspect', live.stateDir, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = inspectSchema.parse(JSON.parse(result.stdout));
    expect(report.bridge.alive).toBe(true);
    expect(report.bridge.answering?.ok, report.bridge.answering?.detail).toBe(true);
    expect(report.journal).toMatchObject({ healthy: true, tornTail: false, firstSeq: 1, journalId: report.bridge.journalId });
    expect(report.journal.lastSeq).toBe(report.journal.records);
    expect(report.turns).toHaveLength(1);
    expect(report.turns[0]!.status).toBe('ended');
    const text = await runCli(['inspect', live.stateDir]);
    expect(text.stdout).toMatch(/pid \d+ alive {2}socket answers \(hello: idle/);
    expect(text.stdout).not.toMatch(/token/i);
  });

  it('a stopped state dir: pid not running, journal intact', async () => {
    const result = await runCli(['inspect', stopped.stateDir, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = inspectSchema.parse(JSON.parse(result.stdout));
    expect(report.bridge.alive).toBe(false);
    expect(report.bridge.answering).toBeNull();
    expect(report.journal.healthy).toBe(true);
    const text = await runCli(['inspect', stopped.stateDir]);
    expect(text.stdout).toMatch(/pid \d+ not running/);
    expect(text.stdout).toMatch(/health ok/);
  });

  it('a torn journal tail is reported with its line', async () => {
    const copy = join(stopped.root, 'torn-state');
    await cp(stopped.stateDir, copy, { recursive: true });
    await appendFile(join(copy, 'journal.ndjson'), '0badc0de\t{"seq":999,"turnId":null');
    const result = await runCli(['inspect', copy, '--json']);
    const report = inspectSchema.parse(JSON.parse(result.stdout));
    expect(report.journal).toMatchObject({ tornTail: true, healthy: false });
    const text = await runCli(['inspect', copy]);
    expect(text.stdout).toMatch(new RegExp(`line ${report.journal.records + 2}: torn tail`));
  });
});

describe('bootstrap --print', () => {
  it.each([
    ['fixture', () => createBridgeHarness(fixtureAdapter())],
    ['claude-code', () => createBridgeHarness(claudeCodeAdapter())],
  ])('%s: the printed identity is the harness recipe identity', async (id, harness) => {
    const json = await runCli(['bootstrap', '--print', '--adapter', id, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const printed = z.object({ identity: z.string(), files: z.array(z.object({ path: z.string(), bytes: z.number() })), commands: z.array(z.object({ command: z.string() })) }).parse(JSON.parse(json.stdout));
    expect(printed.identity).toBe(await harness().getRecipeIdentity());
    expect(printed.files[0]!.path).toMatch(/bridge\.mjs$/);
    expect(printed.files[0]!.bytes).toBeGreaterThan(100_000);
    const text = await runCli(['bootstrap', '--print', '--adapter', id]);
    expect(text.stdout).toContain(`identity ${printed.identity}`);
    expect(text.stdout).toMatch(/B {2}\.harness-bridge\/[a-z-]+\/bridge\.mjs/);
    if (id === 'claude-code') expect(text.stdout).toMatch(/\$ .*\|\| npm install .*@anthropic-ai\/claude-code@[0-9.]+$/m);
  });
});
