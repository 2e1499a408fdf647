// live: records/s from a CLI printing 200k short JSON lines to a host ws client.
// Timed from sending `start` to the client holding the last line (the CLI's
// own spawn is inside the window for all three bridges alike), and printed
// apart: the first line's wait (ours spawns the CLI in its jail, which the
// others do not have) and the rate from the first line on. Ours starts its jail
// helper with the bridge (bridge/jail/early-helper.ts), before `start`: the
// goal (issue 38: ≥ 4× the AI SDK with the jail's start inside the window) is
// decided on a second window, from each bridge's launch to the last line.
import { performance } from 'node:perf_hooks';
import { REPEATS, banner, benchLine, fmt, floor, median, ratio, runScenario, scaled, skippedValue, targetRunner } from './lib/common.mjs';
import { TARGETS, connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'live';

/** Per target: ms from `start` to the first line, and rec/s from the first line on (the spawn's cost apart). */
const firstLine = { ours: [], aisdk: [], rawws: [] };
const afterFirst = { ours: [], aisdk: [], rawws: [] };
/** Per target: rec/s from the bridge's launch to the last line (its start, and ours its jail helper's, inside). */
const fromLaunch = { ours: [], aisdk: [], rawws: [] };
/** The isolation ours spawned its CLI in (its hello says). */
let oursIsolation = 'unknown';

async function once(target, count) {
  const launched = performance.now();
  const bridge = await launchBridge(target);
  let client;
  try {
    client = await connectClient(bridge);
    await client.prepareLive();
    const t0 = performance.now();
    let t1 = 0;
    const first = client.waitFor((s) => s.lines >= 1, 30_000, 'first live line').then(() => (t1 = performance.now()));
    client.start(emitterArgv(count));
    await client.waitFor((s) => s.lines >= count, Math.max(30_000, count / 5), `${count} live lines`);
    const t2 = performance.now();
    await first;
    await client.waitFor((s) => s.turnEnds >= 1, 10_000, 'turn end');
    if (target === 'ours') oursIsolation = client.state.hello?.isolation?.mode ?? 'unknown';
    firstLine[target].push(t1 - t0);
    afterFirst[target].push(t2 > t1 ? ((count - 1) / (t2 - t1)) * 1000 : NaN); // NaN: every line came in the first frame
    fromLaunch[target].push((count / (t2 - launched)) * 1000);
    return (count / (t2 - t0)) * 1000;
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
    console.log(`         first line after ${median(firstLine[target]).toFixed(1)} ms (the CLI's spawn${target === 'ours' ? `, isolation ${oursIsolation}` : ''}) · from the first line on ${fmt(median(afterFirst[target]))} rec/s`);
  }
  const after = { ours: median(afterFirst.ours), aisdk: median(afterFirst.aisdk), rawws: median(afterFirst.rawws) };
  console.log(`  from the first line on: ours/aisdk ${ratio(after.ours, after.aisdk)} · ours/rawws ${ratio(after.ours, after.rawws)}`);
  const launch = { ours: median(fromLaunch.ours), aisdk: median(fromLaunch.aisdk) };
  console.log(`  from each bridge's launch (its start and ours its jail helper's inside): ours ${fmt(launch.ours)}, aisdk ${fmt(launch.aisdk)} rec/s, ours/aisdk ${ratio(launch.ours, launch.aisdk)}`);
  const ok = typeof results.ours === 'number' ? results.ours >= 3 * results.aisdk : undefined;
  const goal = Number.isFinite(launch.ours) && Number.isFinite(launch.aisdk) ? launch.ours >= 4 * launch.aisdk : undefined;
  console.log(`  ours/rawws ${ratio(results.ours, results.rawws)} · floor (issue 2): live ≥ 3× aisdk — ${floor(ok)} · goal (issue 38): whole turn ≥ 4× aisdk with the jail's start inside (from the launch) — ${floor(goal)}`);
  benchLine(SCENARIO, results, 'rec/s', `from-first-line=${ratio(after.ours, after.aisdk)} from-launch=${ratio(launch.ours, launch.aisdk)} floor≥3×=${floor(ok)} goal-from-launch≥4×=${floor(goal)}`);
});
