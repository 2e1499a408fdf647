// latency: p50/p99 delay of records at a paced 1,000 records/s. The CLI stamps
// each line with its write time (CLOCK_MONOTONIC via process.hrtime, shared by
// every process on the machine, µs precision); the host client stamps the
// frame's arrival with the same clock and takes the difference per record.
import { REPEATS, banner, benchLine, floor, median, percentile, runScenario, scaled, skippedValue, targetRunner } from './lib/common.mjs';
import { TARGETS, connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'latency';
const RATE = 1000;

async function once(target, count) {
  const bridge = await launchBridge(target);
  const delays = [];
  let client;
  try {
    client = await connectClient(bridge, {
      onLine(text, at) {
        const t = JSON.parse(text).t;
        if (t !== undefined) delays.push(at - t);
      },
    });
    await client.prepareLive();
    client.start(emitterArgv(count, ['--rate', String(RATE)]));
    await client.waitFor((s) => s.lines >= count, 30_000 + (count / RATE) * 3000, `${count} paced lines`);
  } finally {
    client?.close();
    await bridge.stop();
  }
  delays.sort((a, b) => a - b);
  return { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays.at(-1), n: delays.length };
}

await runScenario(async () => {
  const count = scaled(5000, 50);
  banner(SCENARIO, `p50/p99 CLI-write → host-receive delay, ${count} records paced at ${RATE}/s`);
  const { runs, status: available, run } = targetRunner(await prepareTargets().then((p) => p.available));
  for (let rep = 0; rep < REPEATS; rep++) {
    for (const target of TARGETS) await run(target, () => once(target, count));
  }
  const p50 = {};
  const p99 = {};
  const shown = {};
  for (const target of TARGETS) {
    if (available[target] !== true) {
      console.log(`  ${target.padEnd(6)} ${available[target].startsWith('failed') ? '' : 'skipped: '}${available[target]}`);
      shown[target] = skippedValue(available[target]);
      continue;
    }
    p50[target] = median(runs[target].map((r) => r.p50));
    p99[target] = median(runs[target].map((r) => r.p99));
    shown[target] = `${p50[target].toFixed(2)}/${p99[target].toFixed(2)}ms`;
    const each = runs[target].map((r) => `p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} max ${r.max.toFixed(1)}`).join(' | ');
    console.log(`  ${target.padEnd(6)} median p50 ${p50[target].toFixed(2)} ms  p99 ${p99[target].toFixed(2)} ms   runs: ${each}`);
  }
  const ok = Number.isFinite(p99.ours) ? p99.ours <= p99.aisdk : undefined;
  console.log(`  values are p50/p99; ratio is of p99 · floor (issue 2): p99 no worse than aisdk — ${floor(ok)}`);
  benchLine(SCENARIO, shown, 'ms', `floor-p99≤aisdk=${floor(ok)}`, p99);
});
