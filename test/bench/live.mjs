// live: records/s from a CLI printing 200k short JSON lines to a host ws client.
// Timed from sending `start` to the client holding the last line (the CLI's
// own spawn is inside the window for all three bridges alike).
import { performance } from 'node:perf_hooks';
import { REPEATS, banner, benchLine, fmt, floor, median, ratio, runScenario, scaled, skippedValue, targetRunner } from './lib/common.mjs';
import { TARGETS, connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'live';

async function once(target, count) {
  const bridge = await launchBridge(target);
  let client;
  try {
    client = await connectClient(bridge);
    await client.prepareLive();
    const t0 = performance.now();
    client.start(emitterArgv(count));
    await client.waitFor((s) => s.lines >= count, Math.max(30_000, count / 5), `${count} live lines`);
    const ms = performance.now() - t0;
    await client.waitFor((s) => s.turnEnds >= 1, 10_000, 'turn end');
    return (count / ms) * 1000;
  } finally {
    client?.close();
    await bridge.stop();
  }
}

await runScenario(async () => {
  const count = scaled(200_000, 100);
  banner(SCENARIO, `records/s, CLI prints ${fmt(count)} short JSON lines → bridge → one host ws client`);
  const { runs, status: available, run } = targetRunner(await prepareTargets().then((p) => p.available));
  for (let rep = 0; rep < REPEATS; rep++) {
    for (const target of TARGETS) {
      await run(target, () => once(target, count));
    }
  }
  const results = {};
  for (const target of TARGETS) {
    if (available[target] !== true) {
      console.log(`  ${target.padEnd(6)} ${available[target].startsWith('failed') ? '' : 'skipped: '}${available[target]}`);
      results[target] = skippedValue(available[target]);
      continue;
    }
    results[target] = median(runs[target]);
    console.log(`  ${target.padEnd(6)} median ${fmt(results[target])} rec/s   runs: ${runs[target].map((v) => fmt(v)).join(', ')}`);
  }
  const ok = typeof results.ours === 'number' ? results.ours >= 3 * results.aisdk : undefined;
  console.log(`  ours/rawws ${ratio(results.ours, results.rawws)} · floor (issue 2): live ≥ 3× aisdk — ${floor(ok)}`);
  benchLine(SCENARIO, results, 'rec/s', `floor≥3×=${floor(ok)}`);
});
