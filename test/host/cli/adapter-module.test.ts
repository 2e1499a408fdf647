// An adapter outside the kit (issue 16 item 3): a plain .mjs in a temp dir outside the repo, run
// with `harness-bridge run --adapter /tmp/…/my-adapter.mjs` and replayed from its recording with
// `replay --adapter` the same path. The adapters are tiny and wrap the fixture CLI. One imports
// nothing (an adapter is plain data and functions). One imports the kit's built files (lib/, when
// built). One declares an npm CLI that the kit installs into its cache and hands, with the scripted
// model, to its factory. Plus the errors: a .ts module on this Node, a module that exports no adapter.
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAdapterModule } from '../../../host/adapters/registry.ts';
import { cliPaths } from '../../../host/cli/install-clis.mjs';
import { runCli } from './cli-helpers.ts';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const fixtureCli = join(repo, 'host/testing/fixture/fixture-cli.mjs');
const builtKit = join(repo, 'lib/host/adapter-kit/index.js');

/** The translator and launch every variant shares: the fixture CLI in --echo mode, two deltas per prompt. Plain JavaScript. */
const adapterBody = `
const fixtureCli = ${JSON.stringify(fixtureCli)};
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const parse = (record) => {
  if (record.kind !== 'stdout' || record.data.cont || !record.data.text.startsWith('{')) return undefined;
  try { return JSON.parse(record.data.text); } catch { return undefined; }
};
function step(state, record) {
  const parts = [];
  const finish = (unified, raw) => {
    if (state.text) parts.push({ type: 'text-end', id: state.text });
    parts.push({ type: 'finish', finishReason: { unified, raw }, totalUsage: usage });
    state.done = true;
  };
  if (state.done) return { state, parts };
  if (record.kind === 'turn-start') parts.push({ type: 'stream-start', modelId: 'my-model' });
  else if (record.kind === 'stderr') parts.push({ type: 'raw', rawValue: { stderr: record.data.text } });
  else if (record.kind === 'turn-end') finish(record.data.reason === 'aborted' ? 'other' : 'error', record.data.reason);
  const line = parse(record);
  if (line?.type === 'delta') {
    if (!state.text) parts.push({ type: 'text-start', id: (state.text = 'text-' + record.seq) });
    parts.push({ type: 'text-delta', id: state.text, delta: line.text + '\\n' });
  } else if (line?.type === 'result') finish('stop', 'result');
  return { state, parts };
}
const definition = (env = {}) => ({
  harnessId: 'my-cli',
  builtinTools: {},
  launch: (ctx) => ({ argv: [process.execPath, fixtureCli, '--echo'], cwd: ctx.sessionWorkDir, env, stdin: 'pipe', lifetime: 'session', turnEnd: [{ stream: 'stdout', prefix: '{"type":"result",' }] }),
  encodePrompt: ({ text }) => JSON.stringify({ type: 'prompt', text, lines: 2 }) + '\\n',
  threadId: (record) => { const line = parse(record); return line?.type === 'session' ? line.id : undefined; },
  translator: { init: () => ({ text: null, done: false }), step },
});
`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hb-adapter-module-'));
  await chmod(dir, 0o755); // a root bridge runs the CLI under its own uid, which must reach the sandbox
  await writeFile(join(dir, 'my-adapter.mjs'), `// An adapter outside the kit: no build step, no imports.\n${adapterBody}\nexport default definition();\n`);
  await writeFile(
    join(dir, 'kit-adapter.mjs'),
    `import { defineCliAdapter } from ${JSON.stringify(pathToFileURL(builtKit).href)};\n${adapterBody}\nexport const adapter = defineCliAdapter(definition());\n`,
  );
  await writeFile(join(dir, 'broken.mjs'), `export default { harnessId: 'Not A Slug', launch() {} };\n`);
  await writeFile(join(dir, 'typed.ts'), `export default {};\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const parts = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { type: string; delta?: string });

describe('harness-bridge run / replay --adapter <path>', () => {
  it('runs one turn with a plain .mjs adapter from outside the repo, and replay re-translates its recording with the same module', async () => {
    const recording = join(dir, 'run.ndjson');
    const run = await runCli(['run', '--adapter', join(dir, 'my-adapter.mjs'), '--record', recording, 'hi'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toContain('adapter my-cli; model: no model');
    expect(run.stdout).toMatch(/│ hi #0\n\s*│ hi #1\n/);
    expect(run.stdout).toMatch(/run summary: parts=6 finish=stop/);

    const replay = await runCli(['replay', recording, '--adapter', join(dir, 'my-adapter.mjs'), '--json'], { cwd: dir });
    expect(replay.code, replay.stderr).toBe(0);
    const replayed = parts(replay.stdout);
    expect(replayed.map((p) => p.type)).toEqual(['stream-start', 'text-start', 'text-delta', 'text-delta', 'text-end', 'finish']);
    expect(replayed.filter((p) => p.type === 'text-delta').map((p) => p.delta).join('')).toBe('hi #0\nhi #1\n');

    // A relative path resolves against the working directory; --check and --diff-adapter take the module too.
    const check = await runCli(['replay', recording, '--adapter', './my-adapter.mjs', '--check'], { cwd: dir });
    expect(check.code, check.stderr).toBe(0);
    const diff = await runCli(['replay', recording, '--adapter', './my-adapter.mjs', '--diff-adapter', join(dir, 'my-adapter.mjs')], { cwd: dir });
    expect(diff.stdout).toMatch(/same: both translations have the same 6 parts/);
  }, 120_000);

  it.skipIf(!existsSync(builtKit))('an adapter that imports the kit from its built files (lib/) runs the same', async () => {
    const run = await runCli(['run', '--adapter', join(dir, 'kit-adapter.mjs'), 'hi'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(/run summary: parts=6 finish=stop/);
  }, 120_000);

  it('an adapter declaring its npm CLI: the kit installs it into its cache (here: found there) and hands the factory its bin path and the scripted model', async () => {
    const cache = join(dir, 'cli-cache');
    const spec = { package: '@acme/agent-cli', version: '1.2.3', bin: 'acme' };
    process.env.HARNESS_BRIDGE_CLI_CACHE = cache;
    const paths = cliPaths(spec);
    delete process.env.HARNESS_BRIDGE_CLI_CACHE;
    expect(paths.dir).toBe(join(cache, 'acme+agent-cli-1.2.3'));
    // What an earlier `npm install @acme/agent-cli@1.2.3` left in the cache (the marker says it completed).
    await mkdir(join(paths.dir, 'node_modules', '.bin'), { recursive: true });
    await writeFile(paths.binPath, '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(paths.markerPath, JSON.stringify({ pkg: spec.package, version: spec.version, bin: spec.bin }));
    await writeFile(
      join(dir, 'npm-adapter.mjs'),
      `${adapterBody}
export const modelProfiles = [{ name: 'acme', shellTool: 'run_terminal' }];
// A factory: the kit passes what it prepared. The fixture CLI stands in for acme; the env shows what arrived.
export default (options) => ({
  ...definition({ ACME_BIN: options.binPath ?? 'none', ACME_MODEL: options.scriptedModel?.url ?? 'none' }),
  cli: ${JSON.stringify(spec)},
});
`,
    );
    const recording = join(dir, 'npm.ndjson');
    const run = await runCli(['run', '--adapter', join(dir, 'npm-adapter.mjs'), '--record', recording, 'hi'], { env: { HARNESS_BRIDGE_CLI_CACHE: cache }, timeoutMs: 60_000 });
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toContain(`@acme/agent-cli@1.2.3 is in the cache (${paths.dir})`);
    expect(run.stdout).toMatch(/model: the scripted model on http:\/\/127\.0\.0\.1:\d+ \(offline, no API key\)/);
    const lines = (await readFile(recording, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as { dir?: string; frame?: { type: string; launch?: { env?: Record<string, string> } } });
    const env = lines.find((line) => line.dir === 'out' && line.frame?.type === 'start')?.frame?.launch?.env;
    expect(env?.ACME_BIN).toBe(paths.binPath);
    expect(env?.ACME_MODEL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  }, 120_000);

  it('says what is wrong with a module it cannot use', async () => {
    const ts = await runCli(['run', '--adapter', join(dir, 'typed.ts'), 'hi']);
    if (!(process.features as { typescript?: unknown }).typescript) {
      expect(ts.code).toBe(2);
      expect(ts.stderr).toMatch(/typed\.ts: Node v\d+\.\d+\.\d+ cannot load TypeScript; compile the adapter to JavaScript .* and pass the \.mjs/);
    }
    const broken = await runCli(['replay', join(dir, 'run.ndjson'), '--adapter', join(dir, 'broken.mjs')]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.mjs's default export is not a CLI adapter: it lacks threadId\(record\), translator \{ init, step \}/);
    const missing = await runCli(['run', '--adapter', './nowhere.mjs', 'hi'], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/run: cannot load adapter module \.\/nowhere\.mjs: Cannot find module/);
    const unknown = await runCli(['run', '--adapter', 'nope', 'hi']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown adapter "nope"; known: fixture, claude-code, codex, pi, claude-code-acp, codex-acp, or the path of an adapter module/);
  }, 60_000);

  it('loadAdapterModule: the entry reads the declaration; a factory is told apart from an adapter', async () => {
    const plain = await loadAdapterModule(join(dir, 'my-adapter.mjs'));
    expect(plain).toMatchObject({ id: 'my-cli', realCli: false, takesOptions: false, modulePath: join(dir, 'my-adapter.mjs') });
    expect(plain.create().kind).toBe('cli-adapter');
    const npm = await loadAdapterModule('./npm-adapter.mjs', dir);
    expect(npm).toMatchObject({ id: 'my-cli', realCli: true, takesOptions: true, modelProfiles: [{ name: 'acme', shellTool: 'run_terminal' }] });
    expect(npm.create({ binPath: '/x/acme' }).launch({ sessionWorkDir: '/w' } as never).env).toMatchObject({ ACME_BIN: '/x/acme' });
  });
});
