// What the host sees of the CLI's isolation (docs/security.md#settings): a session whose CLI runs
// without isolation is reported with a warning diagnostic at start; requireIsolation refuses it; a
// network policy a live bridge cannot enforce makes setNetworkPolicy reject and the bridge refuse to
// start a CLI under it, rather than run one unrestricted; the default (auto) reports nothing; a
// namespaced CLI may write its project but not the git hooks or shell rc files in it, which run on the host.
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBridgeHarness, defaultStateDir } from '../../host/harness.ts';
import { waitingKeepers } from '../../host/sandbox/local/pids.ts';
import { eventually } from '../bridge/helpers.ts';
import { createLocalSandboxProvider, type LocalIsolation } from '../../host/sandbox/local/provider.ts';
import { defineCliAdapter } from '../../host/adapter-kit/index.ts';
import { fixtureAdapter } from '../../host/testing/fixture/fixture-adapter.ts';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';

/** The default isolation namespaces the CLI here (root, bubblewrap): where a keeper can start its jail ahead. */
const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0;

let root = '';
const cleanups: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-isolation-'));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own: it must pass through
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

/** The fixture CLI with its shell tool: the prompt's text is the command it runs, as a coding CLI's shell tool would. */
function shellAdapter() {
  const { kind: _kind, ...base } = fixtureAdapter();
  return defineCliAdapter({ ...base, encodePrompt: ({ text }) => `${JSON.stringify({ type: 'prompt', text: 'run it', lines: 0, shell: text })}\n` });
}

async function open(name: string, isolation: LocalIsolation, requireIsolation = false, adapter = fixtureAdapter()) {
  const provider = createLocalSandboxProvider({ root: join(root, name, 'sandboxes'), templatesRoot: join(root, name, 'templates'), isolation, requireIsolation });
  const sandbox = await provider.createSession({ sessionId: name });
  cleanups.push(() => sandbox.destroy());
  const workDir = join(sandbox.defaultWorkingDirectory, 'work');
  await mkdir(workDir, { recursive: true });
  const diagnostics: HarnessV1Diagnostic[] = [];
  const start = () =>
    createBridgeHarness(adapter).doStart({ sessionId: name, sandboxSession: sandbox, sessionWorkDir: workDir, observability: { report: (d) => void diagnostics.push(d) } });
  return { sandbox, diagnostics, start };
}

const isolationWarnings = (diagnostics: HarnessV1Diagnostic[]) => diagnostics.filter((d) => d.subsystem === 'harness-bridge.isolation');

describe('isolation as the host sees it', () => {
  it('none: a warning diagnostic at start; the turn runs; a deny-all policy is refused as unenforceable, and so is the next CLI', async () => {
    const { sandbox, diagnostics, start } = await open('none', 'none');
    const session = await start();
    cleanups.push(() => Promise.resolve(session.doDestroy()));
    expect(isolationWarnings(diagnostics)).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringMatching(/without isolation.*act as the host/) })]);
    const first = await session.doPromptTurn({ prompt: 'x LINES:1', emit: () => undefined });
    await first.done;
    await expect(sandbox.setNetworkPolicy({ mode: 'deny-all' })).rejects.toMatchObject({ code: 'network-policy-unenforced' });
    // The next turn names the CLI's thread, so the bridge spawns a new CLI: refused under the policy, saying why.
    const seen: string[] = [];
    const outcome = await session.doPromptTurn({ prompt: 'y LINES:1', emit: (part) => void seen.push(JSON.stringify(part)) }).then(
      (control) => control.done.then(() => 'done', (error: unknown) => String(error)),
      (error: unknown) => String(error),
    );
    expect(`${outcome} ${seen.join(' ')}`).toMatch(/network policy \(deny-all\) cannot be enforced without a network namespace/);
    await sandbox.setNetworkPolicy({ mode: 'allow-all' });
    const again = await session.doPromptTurn({ prompt: 'z LINES:1', emit: () => undefined });
    await again.done;
  });

  it('requireIsolation with isolation none: the bridge refuses to start, and doStart says why', async () => {
    const { start } = await open('required', 'none', true);
    await expect(start()).rejects.toThrow(/isolation is required and not possible here/);
  });

  it('auto (the default): no warning where the machine isolates', async () => {
    const { diagnostics, start } = await open('auto', 'auto');
    const session = await start();
    cleanups.push(() => Promise.resolve(session.doDestroy()));
    const control = await session.doPromptTurn({ prompt: 'z LINES:1', emit: () => undefined });
    await control.done;
    if (process.getuid?.() === 0) expect(isolationWarnings(diagnostics)).toEqual([]);
  });

  it.skipIf(!canNamespace)("auto: the first CLI runs in the jail its keeper started as the session started (the host's expect)", async () => {
    const { sandbox, start } = await open('ahead', 'auto');
    const session = await start();
    cleanups.push(() => Promise.resolve(session.doDestroy()));
    const stateDir = defaultStateDir(sandbox.defaultWorkingDirectory, 'fixture', 'ahead');
    // doStart announced the first turn's launch: the keeper waiting for it starts its jail before any prompt.
    await eventually(async () => {
      const [spare] = await waitingKeepers(stateDir);
      return spare !== undefined && (await readFile(`/proc/${spare}/task/${spare}/children`, 'utf8').catch(() => '')).trim() !== '';
    }, 20_000, 'a keeper waiting with its jail');
    const control = await session.doPromptTurn({ prompt: 'x LINES:1', emit: () => undefined });
    await control.done;
    // The fixture CLI lives on between turns: its keeper dir says it took the jail started ahead.
    const keepers = join(stateDir, 'keepers');
    const specs = await Promise.all((await readdir(keepers, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => readFile(join(keepers, e.name, 'spec.json'), 'utf8').catch(() => '{}')));
    expect(specs.map((text) => JSON.parse(text) as { ahead?: unknown }).filter((spec) => spec.ahead !== undefined)).toHaveLength(1);
  });

  it.skipIf(!canNamespace)("auto: a long-lived CLI's respawn runs in the jail its keeper started as the turn before ended", async () => {
    const { sandbox, start } = await open('ahead-respawn', 'auto');
    const session = await start();
    cleanups.push(() => Promise.resolve(session.doDestroy()));
    const stateDir = defaultStateDir(sandbox.defaultWorkingDirectory, 'fixture', 'ahead-respawn');
    const keepers = join(stateDir, 'keepers');
    const aheadSpecs = async () => {
      const dirs = (await readdir(keepers, { withFileTypes: true })).filter((e) => e.isDirectory());
      const specs = await Promise.all(dirs.map((e) => readFile(join(keepers, e.name, 'spec.json'), 'utf8').catch(() => '{}')));
      return specs.map((text) => JSON.parse(text) as { ahead?: { argv: string[] } }).filter((spec) => spec.ahead !== undefined);
    };
    await (await session.doPromptTurn({ prompt: 'x LINES:1', emit: () => undefined })).done;
    // The next turn names the CLI's thread (--resume-id), so the live CLI cannot take it: the session said so as the turn ended.
    await eventually(async () => {
      const [spare] = await waitingKeepers(stateDir);
      return spare !== undefined && (await readFile(`/proc/${spare}/task/${spare}/children`, 'utf8').catch(() => '')).trim() !== '';
    }, 20_000, 'a keeper waiting with the jail of the next CLI');
    await (await session.doPromptTurn({ prompt: 'y LINES:1', emit: () => undefined })).done;
    // The respawned CLI lives on between turns: its keeper dir says it took the jail started ahead.
    expect((await aheadSpecs()).filter((spec) => spec.ahead!.argv.includes('--resume-id'))).toHaveLength(1);
  });

  it.each(['namespace', 'auto'] as const)('%s: the CLI writes its project, but not its git hooks or shell rc files (they would run on the host)', async (mode) => {
    const { sandbox, start } = await open(`hooks-${mode}`, mode, false, shellAdapter());
    const workDir = join(sandbox.defaultWorkingDirectory, 'work');
    await mkdir(join(workDir, '.git', 'hooks'), { recursive: true });
    const session = await start();
    cleanups.push(() => Promise.resolve(session.doDestroy()));
    const command = 'echo ok > written.txt; echo evil > .git/hooks/pre-commit; echo evil >> .bashrc; true';
    const control = await session.doPromptTurn({ prompt: command, emit: () => undefined });
    await control.done;
    expect(await readFile(join(workDir, 'written.txt'), 'utf8'), 'an ordinary write in the project').toBe('ok\n');
    expect(existsSync(join(workDir, '.git', 'hooks', 'pre-commit')), 'a git hook').toBe(false);
    expect(await readFile(join(workDir, '.bashrc'), 'utf8').catch(() => ''), 'a shell rc file').not.toContain('evil');
  });
});
