#!/usr/bin/env node
// first-output: the time to the first output as a user meets it (issue 38): from the sandbox's createSession
// to the first text part of the first turn. Ours is the real path: createLocalSandboxProvider().createSession
// (a fresh sandbox; or a copy of the template the recipe was prewarmed into: `snapshot`), then
// createBridgeHarness(adapter).doStart (the recipe applied, the bridge started and attached) and doPromptTurn
// until its first text-delta. Ours runs with isolation auto (the default: uid+namespace as root) and none.
// Beside it, the AI SDK's own path for the same CLI: its bridge runtime (@ai-sdk/harness/bridge, lib/aisdk-bridge.mjs)
// in a fresh state dir, spawned, connected, `start`, until the CLI's first text line. It has no isolation, no recipe.
// Two CLIs: the fixture CLI, and real Claude Code (2.1.328) against the scripted model server on 127.0.0.1 (ours
// writes the prompt to its stdin, stream-json; the AI SDK's takes it as `-p`: its bridge gives the CLI no stdin).
// The goal (issue 38): ours with isolation on ≤ 1.2× the AI SDK's.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { REPO, banner, floor, fmt, median, ratio, runScenario, tempDir, withTimeout } from './lib/common.mjs';
import { loadHostKit } from './lib/host-kit.mjs';
import { connectClient, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'first-output';
const GOAL = 1.2;
const FIRST_MS = 60_000;
const loadHost = () =>
  loadHostKit(SCENARIO, [
    "export { createBridgeHarness } from './host/harness.ts';",
    "export { createLocalSandboxProvider } from './host/sandbox/local/provider.ts';",
    "export { fixtureAdapter } from './host/testing/fixture/fixture-adapter.ts';",
    "export { CLAUDE_CODE_QUIET_ENV, claudeCodeAdapter } from './host/adapters/claude-code/claude-code.ts';",
    "export { withHostInstalledCli } from './host/adapters/registry.ts';",
    "export { startModelServer } from './host/testing/scripted-model/server.ts';",
    "export { prewarmHarness } from './bootstrap/prewarm.ts';",
  ]);

/** Ours: createSession (fresh, or from the prewarmed template) → doStart → doPromptTurn → the first text-delta, in ms. */
async function oursOnce({ host, adapter, isolation, prompt, snapshot, n }) {
  const root = tempDir(`first-output-${isolation}`);
  const provider = host.createLocalSandboxProvider({ root: path.join(root, 'sandboxes'), templatesRoot: path.join(root, 'templates'), isolation });
  // The bundled kit runs from a temp dir, where it cannot resolve sandbox-runtime itself: point the bridge at the repo's.
  const srt = path.join(REPO, 'node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js');
  const harness = host.createBridgeHarness(adapter, { bridgeFile: path.join(REPO, 'dist/bridge.mjs'), probeTimeoutMs: 5_000, isolation: { srt } });
  // The template is made before the clock starts: a provider snapshots a recipe once, ahead of its sessions.
  const prewarmed = snapshot ? await host.prewarmHarness({ harness, sandboxProvider: provider, dispose: 'destroy' }) : undefined;
  let first;
  const firstPart = new Promise((resolve) => (first = resolve));
  const t0 = performance.now();
  const sandbox = await provider.createSession({ sessionId: `s${n}`, ...(prewarmed?.identity ? { identity: prewarmed.identity } : {}) });
  const workDir = path.join(sandbox.defaultWorkingDirectory, 'work');
  mkdirSync(workDir, { recursive: true });
  const session = await harness.doStart({ sessionId: `s${n}`, sandboxSession: sandbox, sessionWorkDir: workDir });
  const control = await session.doPromptTurn({ prompt, emit: (part) => part.type === 'text-delta' && first(performance.now() - t0) });
  const ms = await withTimeout(firstPart, FIRST_MS, 'ours: first text part');
  await control.done;
  await session.doDestroy();
  await sandbox.destroy();
  return ms;
}

/** The AI SDK's path: a fresh state dir, its bridge spawned and connected, `start`, until a stdout line `isText` accepts, in ms. */
async function aisdkOnce({ argv, env, isText }) {
  const t0 = performance.now();
  const stateDir = tempDir('first-output-aisdk');
  const bridge = await launchBridge('aisdk', { stateDir, env });
  let first;
  const firstLine = new Promise((resolve) => (first = resolve));
  const client = await connectClient(bridge, { onLine: (text) => isText(text) && first(performance.now() - t0) });
  try {
    client.start(argv);
    const ms = await withTimeout(firstLine, FIRST_MS, 'aisdk: first text line');
    await client.waitFor((s) => s.turnEnds > 0, FIRST_MS, 'aisdk: turn end');
    return ms;
  } finally {
    client.close();
    await bridge.stop();
  }
}

/** Each variant once to warm the page cache, then `repeats` times, interleaved (a slow spell of the machine hits all alike); the medians. */
async function measure(variants, repeats) {
  const runs = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const once of Object.values(variants)) await once(-1);
  for (let rep = 0; rep < repeats; rep++) for (const [name, once] of Object.entries(variants)) runs[name].push(await once(rep));
  for (const [name, values] of Object.entries(runs)) console.log(`    ${name.padEnd(14)} median ${fmt(median(values), 1)} ms   (runs: ${values.map((v) => fmt(v, 0)).join(', ')})`);
  return Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, median(values)]));
}

await runScenario(async () => {
  const repeats = Number(process.env.BENCH_REPEATS ?? 5);
  banner(SCENARIO, 'createSession → the first text part of the first turn: ours (isolation auto and none, fresh sandbox and from the template) vs the AI SDK bridge', repeats);
  const { host, fixtureCli } = await loadHost();
  await prepareTargets(); // the AI SDK bridge bundled before any clock starts
  let n = 0;
  /** Ours three ways: isolation auto from a fresh sandbox and from the template, and none. */
  const oursVariants = (adapter, prompt) => ({
    'ours auto': () => oursOnce({ host, adapter, isolation: 'auto', prompt, n: n++ }),
    'ours auto snap': () => oursOnce({ host, adapter, isolation: 'auto', prompt, snapshot: true, n: n++ }),
    'ours none': () => oursOnce({ host, adapter, isolation: 'none', prompt, n: n++ }),
  });
  const lines = [];
  const report = (cli, medians) => {
    const auto = medians['ours auto'];
    const aisdk = medians.aisdk;
    const met = Number.isFinite(auto) && Number.isFinite(aisdk) ? auto <= GOAL * aisdk : undefined;
    console.log(
      `  ${cli}: ours auto / aisdk ${ratio(auto, aisdk)} (goal ≤ ${GOAL}×: ${floor(met)}); ours none / aisdk ${ratio(medians['ours none'], aisdk)}; ` +
        `from the template: auto ${ratio(medians['ours auto snap'], aisdk)}`,
    );
    lines.push(
      `${cli} ours-auto=${fmt(auto, 0)}ms ours-auto-snapshot=${fmt(medians['ours auto snap'], 0)}ms ours-none=${fmt(medians['ours none'], 0)}ms aisdk=${fmt(aisdk, 0)}ms ` +
        `ratio auto/aisdk=${ratio(auto, aisdk)} goal≤${GOAL}×=${floor(met)}`,
    );
  };

  console.log('  fixture CLI (one text line):');
  const fixtureVariants = {
    ...oursVariants(host.fixtureAdapter(), 'LINES:1'),
    aisdk: () => aisdkOnce({ argv: [process.execPath, fixtureCli, '--json', '--lines', '1'], isText: (text) => text.includes('"type":"line"') }),
  };
  report('fixture', await measure(fixtureVariants, repeats));

  const { ensureCli } = await import(path.join(REPO, 'host/cli/install-clis.mjs'));
  const claude = await ensureCli('claude-code').catch((error) => ({ error }));
  if ('error' in claude) {
    console.log(`  claude-code: skipped (the pinned CLI could not be installed: ${claude.error.message})`);
    lines.push('claude-code skipped');
  } else {
    const server = await host.startModelServer({});
    try {
      const modelEnv = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' };
      const adapter = host.withHostInstalledCli(host.claudeCodeAdapter({ binPath: claude.binPath, extraEnv: modelEnv }));
      const home = tempDir('first-output-claude-home');
      const prompt = 'say hello';
      console.log('  claude-code against the scripted model (the first text delta):');
      const variants = {
        ...oursVariants(adapter, prompt),
        aisdk: () =>
          aisdkOnce({
            argv: [claude.binPath, '-p', prompt, '--output-format', 'stream-json', '--verbose', '--include-partial-messages'],
            env: { ...modelEnv, ...host.CLAUDE_CODE_QUIET_ENV, HOME: home },
            isText: (text) => text.includes('"text_delta"'),
          }),
      };
      report('claude-code', await measure(variants, repeats));
    } finally {
      await server.close();
    }
  }
  console.log(`[bench] ${SCENARIO} ${lines.join(' · ')}`);
});
