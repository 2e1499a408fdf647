// replay: records/s of a fresh attach replaying 200k journaled records.
// Each bridge first runs one 200k-line turn to completion (with a live client),
// then fresh clients attach from cursor 0, one after another, and the time from
// attach to the last replayed line is measured. ours replays from its on-disk
// journal (page cache warm); aisdk from its in-memory event log; rawws from an
// in-memory array (--retain), 1,000 lines per frame — the floor.
import { performance } from 'node:perf_hooks';
import { REPEATS, banner, benchLine, fmt, floor, median, ratio, runScenario, scaled, skippedValue, targetRunner } from './lib/common.mjs';
import { TARGETS, connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'replay';

async function fill(target, count) {
  const bridge = await launchBridge(target, { retain: true });
  const client = await connectClient(bridge);
  try {
    await client.prepareLive();
    client.start(emitterArgv(count));
    await client.waitFor((s) => s.lines >= count && s.turnEnds >= 1, Math.max(30_000, count / 5), `fill ${count} lines`);
  } finally {
    client.close();
  }
  return bridge;
}

async function replayOnce(bridge, count) {
  const client = await connectClient(bridge);
  try {
    const t0 = performance.now();
    client.attach(0);
    await client.waitFor((s) => s.lines >= count, Math.max(30_000, count / 5), `replay ${count} lines`);
    return (count / (performance.now() - t0)) * 1000;
  } finally {
    client.close();
  }
}

await runScenario(async () => {
  const count = scaled(200_000, 100);
  banner(SCENARIO, `records/s, fresh attach at cursor 0 replaying a ${fmt(count)}-line turn`);
  const { runs, status: available, run } = targetRunner((await prepareTargets()).available);
  const bridges = {};
  try {
    for (const target of TARGETS) {
      await run(target, async () => {
        bridges[target] = await fill(target, count);
      });
      runs[target].length = 0;
    }
    for (let rep = 0; rep < REPEATS; rep++) {
      for (const target of TARGETS) await run(target, () => replayOnce(bridges[target], count));
    }
  } finally {
    for (const bridge of Object.values(bridges)) await bridge.stop();
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
  const ok = typeof results.ours === 'number' ? results.ours >= 5 * results.aisdk : undefined;
  console.log(`  ours/rawws ${ratio(results.ours, results.rawws)} · floor (issue 2): replay ≥ 5× aisdk — ${floor(ok)}`);
  benchLine(SCENARIO, results, 'rec/s', `floor≥5×=${floor(ok)}`);
});
