// applyBootstrap against real local sandboxes: idempotence (proved by a
// command that appends to a file), a failing command (clear error, no
// marker, rerun after the fix), progress + log, concurrent applies from two
// calls and two processes, and a stale lock being broken.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyBootstrap,
  BootstrapError,
  bootstrapLogFileName,
  bootstrapMarkerPath,
  bridgeRecipe,
  defineBootstrapRecipe,
  recipeIdentity,
  type BootstrapProgress,
} from '../../bootstrap/index.ts';
import { createLocalSandboxProvider, type LocalSandboxSession } from '../../host/sandbox/local/provider.ts';
import { BRIDGE_JAIL_SRT, BRIDGE_SNAPSHOT } from '../../bootstrap/bridge-command.mjs';

const repoRoot = resolve(import.meta.dirname, '../..');
let tempRoot = '';
let provider: ReturnType<typeof createLocalSandboxProvider>;
const sessions: LocalSandboxSession[] = [];

beforeAll(async () => {
  tempRoot = await mkdtemp(join(tmpdir(), 'hb-apply-'));
  provider = createLocalSandboxProvider({ root: join(tempRoot, 'sandboxes'), templatesRoot: join(tempRoot, 'templates') });
});
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.destroy()));
  await rm(tempRoot, { recursive: true, force: true });
});

async function fresh(sessionId?: string): Promise<LocalSandboxSession> {
  const session = await provider.createSession(sessionId ? { sessionId } : {});
  sessions.push(session);
  return session;
}

const dir = '.harness-bridge/test';

function countingRecipe(extraCommands: Array<{ command: string }> = []) {
  return defineBootstrapRecipe({
    harnessId: 'test',
    bootstrapDir: dir,
    files: [
      { path: `${dir}/bridge.mjs`, content: 'export const bridge = 1;\n'.repeat(1000) },
      { path: `${dir}/nested/config.json`, content: '{"a":1}' },
    ],
    commands: [{ command: 'echo ran >> runs.txt; sleep 0.2' }, ...extraCommands],
  });
}

async function runCount(session: LocalSandboxSession): Promise<number> {
  const text = await session.readTextFile({ path: `${dir}/runs.txt` });
  return text === null ? 0 : text.trim().split('\n').length;
}

describe('applyBootstrap', () => {
  it('is idempotent: the second apply returns applied:false and runs no command', async () => {
    const session = await fresh();
    const recipe = countingRecipe();
    const first = await applyBootstrap(session.restricted(), recipe);
    expect(first).toMatchObject({ applied: true, identity: recipeIdentity(recipe) });
    expect(await runCount(session)).toBe(1);
    const second = await applyBootstrap(session.restricted(), recipe);
    expect(second.applied).toBe(false);
    expect(await runCount(session)).toBe(1);
    expect(await session.readTextFile({ path: bootstrapMarkerPath(recipe) })).toBe(`${recipeIdentity(recipe)}\n`);
    expect(await session.readTextFile({ path: `${dir}/nested/config.json` })).toBe('{"a":1}');
    console.log(`[figures] apply: first ${first.elapsedMs.toFixed(1)} ms (one 200 ms command), second ${second.elapsedMs.toFixed(1)} ms`);
  });

  it('a failing command stops the apply with command, exit code and stderr tail, writes no marker, and a rerun after the fix succeeds', async () => {
    const session = await fresh();
    const recipe = defineBootstrapRecipe({
      harnessId: 'test',
      bootstrapDir: dir,
      files: [{ path: `${dir}/x.txt`, content: 'x' }],
      commands: [
        { command: 'echo first >> runs.txt' },
        { command: 'test -f ready || { echo "ready file is missing" >&2; exit 5; }' },
        { command: 'echo third >> runs.txt' },
      ],
    });
    const error = await applyBootstrap(session, recipe).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(BootstrapError.isInstance(error)).toBe(true);
    const failure = error as BootstrapError;
    expect(failure.code).toBe('command-failed');
    expect(failure.exitCode).toBe(5);
    expect(failure.commandIndex).toBe(1);
    expect(failure.command).toContain('test -f ready');
    expect(failure.stderrTail).toContain('ready file is missing');
    expect(failure.message).toContain('exit code 5');
    expect(await session.stat({ path: bootstrapMarkerPath(recipe) })).toBeNull();
    expect(await session.readTextFile({ path: `${dir}/runs.txt` })).toBe('first\n');
    expect(await session.stat({ path: `${dir}/.apply.lock` })).toBeNull();

    await session.writeTextFile({ path: `${dir}/ready`, content: '' });
    const rerun = await applyBootstrap(session, recipe);
    expect(rerun.applied).toBe(true);
    expect(await session.readTextFile({ path: `${dir}/runs.txt` })).toBe('first\nfirst\nthird\n');
  });

  it('reports progress of a long command (phase, index, elapsed) and appends to the log', async () => {
    const session = await fresh();
    const recipe = defineBootstrapRecipe({
      harnessId: 'test',
      bootstrapDir: dir,
      files: [],
      commands: [{ command: 'echo quick' }, { command: 'echo slow-start; sleep 0.5; echo slow-end' }],
    });
    const events: BootstrapProgress[] = [];
    await applyBootstrap(session, recipe, { onProgress: (p) => events.push(p), progressIntervalMs: 100 });
    const ticks = events.filter((e) => e.phase === 'command' && e.commandIndex === 1 && (e.commandElapsedMs ?? 0) > 0);
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks.every((e) => e.commandCount === 2 && e.command?.includes('sleep'))).toBe(true);
    expect(events.at(-1)?.phase).toBe('done');
    const log = await session.readTextFile({ path: `${dir}/${bootstrapLogFileName}` });
    expect(log).toContain('command 2/2: echo slow-start');
    expect(log).toContain('slow-end');
    expect(log).toMatch(/command 2 exited 0 after \d+ ms/);
  });

  it('an apply starts two shells in the sandbox (the lock taken; the log\'s last part appended and the lock removed), leaving a whole log and no lock or part file', async () => {
    const session = await fresh();
    let shells = 0;
    const counted: LocalSandboxSession = Object.assign(Object.create(session) as LocalSandboxSession, {
      run: (options: Parameters<LocalSandboxSession['run']>[0]) => {
        shells++;
        return session.run(options);
      },
      spawn: (options: Parameters<LocalSandboxSession['spawn']>[0]) => {
        shells++;
        return session.spawn(options);
      },
    });
    const recipe = defineBootstrapRecipe({ harnessId: 'test', bootstrapDir: dir, files: [{ path: `${dir}/bridge.mjs`, content: 'export {};\n' }], commands: [] });
    expect((await applyBootstrap(counted, recipe)).applied).toBe(true);
    expect(shells).toBe(2);
    const log = await session.readTextFile({ path: `${dir}/${bootstrapLogFileName}` });
    expect(log).toMatch(/: 1 files written\n.*: done\n$/s);
    const left = (await session.run({ command: `ls -A ${dir}` })).stdout.trim().split('\n');
    expect(left.filter((name) => name.startsWith('.apply.lock') || name.includes('.part-'))).toEqual([]);
  });

  it('two concurrent applies in one sandbox run the commands once and leave the files intact', async () => {
    const session = await fresh();
    const recipe = countingRecipe();
    const results = await Promise.all([applyBootstrap(session.restricted(), recipe), applyBootstrap(session.restricted(), recipe)]);
    expect(results.map((r) => r.applied).sort()).toEqual([false, true]);
    expect(await runCount(session)).toBe(1);
    expect(await session.readTextFile({ path: `${dir}/bridge.mjs` })).toBe(recipe.files[0]!.content);
  });

  it('two host processes applying the same recipe to one sandbox run the commands once', async () => {
    const session = await fresh('two-processes');
    const recipe = countingRecipe();
    const recipePath = join(tempRoot, 'recipe.json');
    await writeFile(recipePath, JSON.stringify(recipe));
    const script = join(tempRoot, 'apply-child.mts');
    await writeFile(
      script,
      `import { readFileSync } from 'node:fs';
import { applyBootstrap } from ${JSON.stringify(join(repoRoot, 'bootstrap/index.ts'))};
import { createLocalSandboxProvider } from ${JSON.stringify(join(repoRoot, 'host/sandbox/local/provider.ts'))};
const provider = createLocalSandboxProvider({ root: ${JSON.stringify(join(tempRoot, 'sandboxes'))} });
const session = await provider.resumeSession({ sessionId: 'two-processes' });
const result = await applyBootstrap(session.restricted(), JSON.parse(readFileSync(${JSON.stringify(recipePath)}, 'utf8')));
console.log(JSON.stringify({ applied: result.applied }));
`,
    );
    const runChild = () =>
      new Promise<{ applied: boolean }>((resolvePromise, reject) => {
        const child = spawn(join(repoRoot, 'node_modules/.bin/tsx'), [script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolvePromise(JSON.parse(out.trim())) : reject(new Error(`child exited ${code}`))));
      });
    const results = await Promise.all([runChild(), runChild()]);
    expect(results.map((r) => r.applied).sort()).toEqual([false, true]);
    expect(await runCount(session)).toBe(1);
  });

  it('breaks a stale lock whose heartbeat never moves', async () => {
    const session = await fresh();
    const recipe = countingRecipe();
    await session.writeTextFile({ path: `${dir}/.apply.lock/heartbeat`, content: 'dead-holder' });
    const startedAt = Date.now();
    const result = await applyBootstrap(session, recipe, { maxLockStaleMs: 300 });
    expect(result.applied).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(await runCount(session)).toBe(1);
  });

  it('bridgeRecipe puts the bundle at <bootstrapDir>/bridge.mjs under the working directory, never /tmp', async () => {
    const recipe = await bridgeRecipe({ harnessId: 'codex', bridgeSource: '// bridge\n', commands: [{ command: 'true' }] });
    expect(recipe.bootstrapDir).toBe('.harness-bridge/codex');
    expect(recipe.files[0]).toEqual({ path: '.harness-bridge/codex/bridge.mjs', content: '// bridge\n' });
    const absolute = await bridgeRecipe({ harnessId: 'codex', bridgeSource: '', defaultWorkingDirectory: '/work' });
    expect(absolute.bootstrapDir).toBe('/work/.harness-bridge/codex');
    const session = await fresh();
    await applyBootstrap(session, recipe);
    expect(await session.readTextFile({ path: `${session.defaultWorkingDirectory}/.harness-bridge/codex/bridge.mjs` })).toBe('// bridge\n');
    await expect(bridgeRecipe({ harnessId: 'codex', bridgeFile: join(tempRoot, 'missing.mjs') })).rejects.toMatchObject({ code: 'bridge-file-missing' });
  });

  it('bridgeRecipe reads a bridge file that changed since the last recipe again (a rebuild between harnesses), even at the same size; a removed one is missing again', async () => {
    const dir = await mkdtemp(join(tempRoot, 'rebuilt-'));
    const file = join(dir, 'bridge.mjs');
    await writeFile(file, '// build A\n');
    await writeFile(join(dir, BRIDGE_JAIL_SRT), 'srt A');
    const first = await bridgeRecipe({ harnessId: 'codex', bridgeFile: file });
    expect(first.files.map((f) => f.content)).toEqual(['// build A\n', 'srt A']);
    expect((await bridgeRecipe({ harnessId: 'codex', bridgeFile: file })).files.map((f) => f.content)).toEqual(['// build A\n', 'srt A']);
    await writeFile(file, '// build B\n');
    await writeFile(join(dir, BRIDGE_JAIL_SRT), 'srt B');
    const second = await bridgeRecipe({ harnessId: 'codex', bridgeFile: file });
    expect(second.files.map((f) => f.content)).toEqual(['// build B\n', 'srt B']);
    expect(recipeIdentity(second)).not.toBe(recipeIdentity(first));
    await rm(file);
    await expect(bridgeRecipe({ harnessId: 'codex', bridgeFile: file })).rejects.toMatchObject({ code: 'bridge-file-missing' });
  });

  it('bridgeRecipe with startupSnapshot: the snapshot script beside the bridge and a first command that builds the snapshot there', async () => {
    const plain = await bridgeRecipe({ harnessId: 'fixture', commands: [{ command: 'true' }] });
    expect(plain.files.map((f) => f.path)).toEqual(['.harness-bridge/fixture/bridge.mjs', `.harness-bridge/fixture/${BRIDGE_JAIL_SRT}`]);
    const recipe = await bridgeRecipe({ harnessId: 'fixture', startupSnapshot: true, commands: [{ command: 'true' }] });
    expect(recipe.files.map((f) => f.path)).toEqual(['.harness-bridge/fixture/bridge.mjs', `.harness-bridge/fixture/${BRIDGE_JAIL_SRT}`, `.harness-bridge/fixture/${BRIDGE_SNAPSHOT.script}`]);
    expect(recipe.commands).toHaveLength(2);
    expect(recipe.commands[0]!.command).toContain('--build-snapshot');
    expect(recipeIdentity(recipe)).not.toBe(recipeIdentity(plain));
    const session = await fresh();
    await applyBootstrap(session, recipe);
    const dir = `${session.defaultWorkingDirectory}/.harness-bridge/fixture`;
    expect((await session.run({ command: `ls ${dir}` })).stdout.trim().split('\n')).toEqual(
      expect.arrayContaining([BRIDGE_SNAPSHOT.blob, BRIDGE_SNAPSHOT.stamp, BRIDGE_SNAPSHOT.script, BRIDGE_JAIL_SRT, 'bridge.mjs']),
    );
    // A bridge file with no snapshot script beside it: a clear error, not a recipe that quietly lacks the snapshot.
    await writeFile(join(tempRoot, 'lone-bridge.mjs'), '// bridge\n');
    await expect(bridgeRecipe({ harnessId: 'fixture', startupSnapshot: true, bridgeFile: join(tempRoot, 'lone-bridge.mjs') })).rejects.toMatchObject({
      code: 'bridge-file-missing',
      message: expect.stringContaining('snapshot script'),
    });
  }, 60_000);

  it('bridgeRecipe places relative adapter files under bootstrapDir (pi\'s extension) and keeps absolute ones', async () => {
    const extraFiles = [{ path: 'pi-host-tools.ts', content: 'x' }, { path: '/etc/abs.txt', content: 'y' }];
    const recipe = await bridgeRecipe({ harnessId: 'pi', bridgeSource: '', jailSrtSource: null, extraFiles });
    expect(recipe.files.slice(1)).toEqual([{ path: '.harness-bridge/pi/pi-host-tools.ts', content: 'x' }, { path: '/etc/abs.txt', content: 'y' }]);
    const custom = await bridgeRecipe({ harnessId: 'pi', bridgeSource: '', jailSrtSource: null, bootstrapDir: '/opt/hb', extraFiles });
    expect(custom.files[1]).toEqual({ path: '/opt/hb/pi-host-tools.ts', content: 'x' });
  });

  it('defineBootstrapRecipe refuses ambiguous recipes', () => {
    const base = { harnessId: 'h', bootstrapDir: 'd', commands: [] };
    expect(() => defineBootstrapRecipe({ ...base, files: [{ path: 'a', content: '1' }, { path: 'a', content: '2' }] })).toThrow(/twice/);
    expect(() => defineBootstrapRecipe({ ...base, harnessId: '../x', files: [] })).toThrow(BootstrapError);
    expect(() => defineBootstrapRecipe({ ...base, files: [{ path: 'a', content: '\uD800' }] })).toThrow(/well-formed/);
  });
});
