// cold-start: spawn → the bridge's ready line on stdout, beside Node's own
// floor (spawn → first stdout byte of `node -e 'process.stdout.write("x")'`).
// Every child runs without NODE_EXTRA_CA_CERTS: this environment sets it, and
// it adds ~70–80 ms to every Node start, which would swamp the comparison.
// ours is dist/bridge.mjs; aisdk and rawws are esbuild bundles (everything
// inlined, one file) of test/bench/lib/{aisdk,rawws}-bridge.mjs.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { SCALE, banner, benchLine, childEnv, floor, median, ratio, removeDir, runScenario, targetRunner, tempDir, track, withTimeout } from './lib/common.mjs';
import { TARGETS, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'cold-start';

async function nodeFloor() {
  const t0 = performance.now();
  const child = track(spawn(process.execPath, ['-e', 'process.stdout.write("x")'], { env: childEnv(), stdio: ['ignore', 'pipe', 'ignore'] }));
  const ms = await withTimeout(
    new Promise((resolve, reject) => {
      child.stdout.once('data', () => resolve(performance.now() - t0));
      child.once('error', reject);
    }),
    10_000,
    'node floor first byte',
  );
  await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
  return ms;
}

async function bridgeStart(target, snapshot = false) {
  const stateDir = tempDir(`${target}-cold`);
  const bridge = await launchBridge(target, { stateDir, snapshot });
  await bridge.stop();
  removeDir(stateDir);
  return bridge.readyMs;
}

await runScenario(async () => {
  // 30 starts per target: the three medians are ~1 ms apart on a 2-core machine and 10 starts moved the ratio by ±0.04×.
  const repeats = Number(process.env.BENCH_REPEATS ?? (SCALE < 0.1 ? 2 : 30));
  banner(SCENARIO, 'spawn → ready line (bridges) / first stdout byte (node floor), fresh state dir each time', repeats);
  const prepared = await prepareTargets();
  const runner = targetRunner(prepared.available);
  const available = runner.status;
  await nodeFloor(); // warm the page cache for the node binary itself
  const runs = { floor: [], snapshot: [], ...runner.runs };
  for (let rep = 0; rep < repeats; rep++) {
    runs.floor.push(await nodeFloor());
    for (const target of TARGETS) await runner.run(target, () => bridgeStart(target));
    if (prepared.snapshotBlob) runs.snapshot.push(await bridgeStart('ours', true));
  }
  const nodeMs = median(runs.floor);
  console.log(`  node   median ${nodeMs.toFixed(1)} ms (floor)   runs: ${runs.floor.map((v) => v.toFixed(1)).join(', ')}`);
  const results = {};
  for (const target of TARGETS) {
    if (available[target] !== true) {
      console.log(`  ${target.padEnd(6)} ${available[target].startsWith('failed') ? '' : 'skipped: '}${available[target]}`);
      results[target] = available[target].startsWith('failed') ? 'failed' : 'skipped';
      continue;
    }
    results[target] = median(runs[target]);
    console.log(
      `  ${target.padEnd(6)} median ${results[target].toFixed(1)} ms = ${ratio(results[target], nodeMs)} node   runs: ${runs[target].map((v) => v.toFixed(1)).join(', ')}`,
    );
  }
  const snapshotMs = runs.snapshot.length > 0 ? median(runs.snapshot) : undefined;
  if (snapshotMs !== undefined) {
    console.log(`  ours from its startup snapshot (recipe option startupSnapshot) median ${snapshotMs.toFixed(1)} ms = ${ratio(snapshotMs, nodeMs)} node   runs: ${runs.snapshot.map((v) => v.toFixed(1)).join(', ')}`);
  }
  const ok = typeof results.ours === 'number' ? results.ours <= 1.4 * nodeMs : undefined;
  console.log(`  NODE_EXTRA_CA_CERTS removed from every child · floor (issue 2): ours ≤ 1.4× node floor — ${floor(ok)}`);
  benchLine(
    SCENARIO,
    results,
    'ms',
    `node=${nodeMs.toFixed(1)}ms ours/node=${ratio(results.ours, nodeMs)} snapshot=${snapshotMs === undefined ? 'n/a' : `${snapshotMs.toFixed(1)}ms`} snapshot/node=${snapshotMs === undefined ? 'n/a' : ratio(snapshotMs, nodeMs)} aisdk/node=${ratio(results.aisdk, nodeMs)} floor≤1.4×node=${floor(ok)}`,
  );
});
