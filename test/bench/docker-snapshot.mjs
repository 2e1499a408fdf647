#!/usr/bin/env node
// docker-snapshot: a cold session vs a session from the recipe's snapshot, in
// the Docker sandbox provider (host/sandbox/docker/). Cold: a container from
// the base image, then doStart applies the bridge recipe and starts the
// bridge. Snapshot: prewarm once (apply + docker commit under the recipe
// identity), then a container from that image, where doStart finds the recipe
// applied and only starts the bridge. Each figure runs from createSession to a
// started session (bridge up, probed through the exec stream). Our TS is
// bundled with esbuild into a temp file so this stays a plain `node` script.
// Skips (printing why) when docker cannot run here.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { REPO, REPEATS, banner, benchLine, fmt, median, runScenario, tempDir } from './lib/common.mjs';

const SCENARIO = 'docker-snapshot';
const RUNS = Math.max(2, REPEATS);

async function loadOurCode(dir) {
  const entry = path.join(dir, 'entry.ts');
  const out = path.join(dir, 'docker-bench.mjs');
  writeFileSync(
    entry,
    `export { prewarmHarness } from ${JSON.stringify(path.join(REPO, 'bootstrap/index.ts'))};\n` +
      `export { createBridgeHarness } from ${JSON.stringify(path.join(REPO, 'host/harness.ts'))};\n` +
      `export { fixtureAdapter } from ${JSON.stringify(path.join(REPO, 'host/testing/fixture/fixture-adapter.ts'))};\n` +
      `export { createDockerSandboxProvider, dockerUnavailable } from ${JSON.stringify(path.join(REPO, 'host/sandbox/docker/provider.ts'))};\n`,
  );
  await build({ entryPoints: [entry], outfile: out, bundle: true, platform: 'node', format: 'esm', target: 'node20', external: ['node-pty', 'bufferutil', 'utf-8-validate'], logLevel: 'error',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }, // ws and pino require() builtins
  });
  return import(pathToFileURL(out).href);
}

await runScenario(async () => {
  banner(SCENARIO, 'Docker provider: cold session (recipe applied in doStart) vs session from the recipe snapshot', RUNS);
  const ours = await loadOurCode(tempDir('docker-snapshot'));
  const unavailable = await ours.dockerUnavailable();
  if (unavailable) {
    console.log(`  skipped: ${unavailable}`);
    benchLine(SCENARIO, { ours: 'skipped', aisdk: 'n/a', rawws: 'n/a' }, 'ms');
    return;
  }
  const provider = ours.createDockerSandboxProvider({ namePrefix: `hbbench${process.pid}` });
  // A recipe of this run (its own stamp), so the snapshot is built here and not found from an earlier run.
  const adapter = { ...ours.fixtureAdapter(), install: { commands: [{ command: `echo bench-${process.pid}-${Date.now()} > /work/.bench-stamp` }] } };
  const harness = ours.createBridgeHarness(adapter, { bridgeFile: path.join(REPO, 'dist/bridge.mjs'), probeTimeoutMs: 10_000 });
  const identity = await harness.getRecipeIdentity();
  const session = async (label, options) => {
    const t0 = performance.now();
    const sandbox = await provider.createSession({ sessionId: `${label}-${Date.now()}`, ...options });
    const started = await harness.doStart({ sessionId: label, sandboxSession: sandbox, sessionWorkDir: '/work' });
    const ms = performance.now() - t0;
    await started.doDestroy();
    await sandbox.destroy();
    return { ms, origin: sandbox.origin };
  };
  try {
    await session('warmup', {}); // the base image (built or found) and the docker CLI's first run stay out of the figures
    const coldMs = [];
    for (let i = 0; i < RUNS; i++) coldMs.push((await session(`cold-${i}`, {})).ms);
    const prewarm = await ours.prewarmHarness({ harness, sandboxProvider: provider, dispose: 'destroy' });
    const snapshotMs = [];
    for (let i = 0; i < RUNS; i++) {
      const run = await session(`snap-${i}`, { identity });
      if (!run.origin.fromSnapshot) throw new Error('the session did not start from the snapshot');
      snapshotMs.push(run.ms);
    }
    const cold = median(coldMs);
    const fromSnapshot = median(snapshotMs);
    console.log(`  prewarm (apply + docker commit, once):      ${fmt(prewarm.elapsedMs, 0)} ms`);
    console.log(`  cold session → started (median of ${RUNS}):     ${fmt(cold, 0)} ms    from snapshot → started: ${fmt(fromSnapshot, 0)} ms`);
    benchLine(SCENARIO, { ours: fromSnapshot, aisdk: 'n/a', rawws: 'n/a' }, 'ms', `cold=${fmt(cold, 0)}ms snapshot=${fmt(fromSnapshot, 0)}ms prewarm=${fmt(prewarm.elapsedMs, 0)}ms`);
  } finally {
    await provider.dropSnapshot(identity);
  }
});
