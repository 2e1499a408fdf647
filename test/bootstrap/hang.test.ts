// A bootstrap command that hangs is killed after commandTimeoutMs and reported as one typed error that
// names the command and carries its output (applyBootstrap's commandTimeoutMs, and createBridgeHarness's
// bootstrapCommandTimeoutMs failing doStart with it); an adapter given binPath (a CLI already installed) adds no
// install command at all, and npmCli's command skips npm when that version is already installed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBootstrap, BootstrapError, bootstrapLogFileName, bootstrapMarkerPath, defineBootstrapRecipe, type BootstrapProgress } from '../../bootstrap/index.ts';
import { npmCli } from '../../host/adapter-kit/cli-launch.ts';
import type { CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { acpAdapter } from '../../host/adapters/acp/acp.ts';
import { claudeCodeAdapter } from '../../host/adapters/claude-code/claude-code.ts';
import { codexAdapter } from '../../host/adapters/codex/codex.ts';
import { piAdapter } from '../../host/adapters/pi/pi.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { fixtureAdapter } from '../../host/testing/fixture/fixture-adapter.ts';
import { createLocalSandboxProvider, type LocalSandboxSession } from '../../host/sandbox/local/provider.ts';

let tempRoot = '';
let provider: ReturnType<typeof createLocalSandboxProvider>;
const sessions: LocalSandboxSession[] = [];

beforeAll(async () => {
  tempRoot = await mkdtemp(join(tmpdir(), 'hb-hang-'));
  provider = createLocalSandboxProvider({ root: join(tempRoot, 'sandboxes'), templatesRoot: join(tempRoot, 'templates') });
});
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.destroy()));
  await rm(tempRoot, { recursive: true, force: true });
});

async function fresh(): Promise<LocalSandboxSession> {
  const session = await provider.createSession({});
  sessions.push(session);
  return session;
}

const dir = '.harness-bridge/hang';

describe('a bootstrap command that hangs', () => {
  it('is killed and reported with its command and output (command-timeout); no marker, the lock is freed', async () => {
    const session = await fresh();
    const recipe = defineBootstrapRecipe({
      harnessId: 'hang',
      bootstrapDir: dir,
      files: [],
      commands: [{ command: 'echo first' }, { command: 'echo "fetching my-cli@1.0.0"; echo "retrying the registry" >&2; echo $$ > hung.pid; exec sleep 600' }],
    });
    const error = await applyBootstrap(session, recipe, { commandTimeoutMs: 1_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(BootstrapError.isInstance(error)).toBe(true);
    const failure = error as BootstrapError;
    expect(failure.code).toBe('command-timeout');
    expect(failure.commandIndex).toBe(1);
    expect(failure.command).toContain('exec sleep 600');
    expect(failure.message).toContain('was still running after 1000 ms and was killed: echo "fetching my-cli@1.0.0"');
    expect(failure.message).toContain('fetching my-cli@1.0.0');
    expect(failure.message).toContain('retrying the registry');
    expect(failure.stderrTail).toContain('retrying the registry');
    expect(await session.stat({ path: bootstrapMarkerPath(recipe) })).toBeNull();
    expect(await session.stat({ path: `${dir}/.apply.lock` })).toBeNull();
    const log = await session.readTextFile({ path: `${dir}/${bootstrapLogFileName}` });
    expect(log).toMatch(/command 2 still running after \d+ ms: killed/);
    // The hung process is gone (a hang guard, not a timing assertion: it polls until the kill lands).
    const pid = Number((await session.readTextFile({ path: `${dir}/hung.pid` }))?.trim());
    expect(pid).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 200 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toBe(false);
  });

  it("through createBridgeHarness (bootstrapCommandTimeoutMs): doStart fails with it, naming the adapter's install command and its output", async () => {
    const session = await fresh();
    const hang = 'echo "npm http fetch GET https://registry.invalid/my-cli"; echo "still waiting on the network" >&2; exec sleep 600';
    const adapter: CliAdapter<any> = { ...fixtureAdapter(), install: { commands: [{ command: hang }] } };
    const progress: BootstrapProgress[] = [];
    const harness = createBridgeHarness(adapter, { bootstrapCommandTimeoutMs: 1_000, onBootstrapProgress: (p) => void progress.push(p) });
    const error = await harness.doStart({ sessionId: 'hang-start', sandboxSession: session, sessionWorkDir: session.defaultWorkingDirectory }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(BootstrapError.isInstance(error), String(error)).toBe(true);
    const failure = error as BootstrapError;
    expect(failure.code).toBe('command-timeout');
    expect(failure.command).toBe(hang);
    expect(failure.message).toContain(`was still running after 1000 ms and was killed: ${hang}`);
    expect(failure.message).toContain('npm http fetch GET https://registry.invalid/my-cli');
    expect(failure.message).toContain('still waiting on the network');
    // The progress the host saw named the command while it ran.
    expect(progress.some((p) => p.phase === 'command' && p.command === hang)).toBe(true);
  });

  it('a bad commandTimeoutMs is refused', async () => {
    const session = await fresh();
    const recipe = defineBootstrapRecipe({ harnessId: 'hang', bootstrapDir: dir, files: [], commands: [] });
    await expect(applyBootstrap(session, recipe, { commandTimeoutMs: 0 })).rejects.toThrow(/commandTimeoutMs must be a positive number/);
  });
});

describe('a CLI that is already there is never installed', () => {
  const bin = '/opt/cli/bin/agent';
  it.each([
    ['claude-code', () => claudeCodeAdapter({ binPath: bin })],
    ['codex', () => codexAdapter({ binPath: bin })],
    ['pi', () => piAdapter({ binPath: bin })],
    ['acp', () => acpAdapter({ id: 'my-agent', command: ['my-agent', '--acp'], cli: { package: 'my-agent', version: '1.0.0', bin: 'my-agent' }, binPath: bin })],
  ] as Array<[string, () => CliAdapter<any>]>)('%s with binPath: the recipe runs no command (the adapter still declares its cli)', async (_name, make) => {
    const adapter = make();
    expect(adapter.cli).toBeDefined();
    expect(adapter.install?.commands ?? []).toEqual([]);
    const recipe = await createBridgeHarness(adapter, { bridgeFile: '/dev/null' }).getBootstrap!({});
    expect(recipe.commands).toEqual([]);
  });

  it('pi with binPath keeps its own files (its extension)', () => {
    expect(piAdapter({ binPath: bin }).install?.files?.length).toBe(1);
  });

  it("npmCli's command skips npm when that version is installed under cli/, and runs it when another version is", async () => {
    const session = await fresh();
    // A package no registry has: were npm run, the command would fail.
    const cli = { package: '@harness-bridge-test/never-published', version: '1.2.3', bin: 'never' };
    const [command] = npmCli(cli).install!.commands!;
    const recipe = (version: string) =>
      defineBootstrapRecipe({ harnessId: 'installed', bootstrapDir: dir, files: [{ path: `${dir}/cli/node_modules/${cli.package}/package.json`, content: JSON.stringify({ name: cli.package, version }) }], commands: [command!] });
    expect((await applyBootstrap(session, recipe('1.2.3'))).applied).toBe(true);
    const log = await session.readTextFile({ path: `${dir}/${bootstrapLogFileName}` });
    expect(log).not.toMatch(/npm (ERR|error)/);
    const other = await fresh();
    const error = await applyBootstrap(other, recipe('1.2.2'), { commandTimeoutMs: 120_000 }).then(
      () => undefined,
      (e: unknown) => e as BootstrapError,
    );
    expect(error?.code).toMatch(/^command-(failed|timeout)$/);
    expect(error?.command).toContain(`npm install --prefix cli --no-audit --no-fund --prefer-offline ${cli.package}@1.2.3`);
  });
});
