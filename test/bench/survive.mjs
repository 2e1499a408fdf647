// survive: what launch `survive` costs (the CLI under a keeper, its output through capture files,
// its MCP URL through the keeper's relay; docs/bridge-internals.md#surviving-clis). ours only, the
// same bridge launch as the other scenarios, survive off vs on, alternating:
//   first line: `start` sent → the CLI's first line at the host (spawn + keeper start + first read),
//   for a fresh bridge's first turn and for its second (a CLI spawned per turn);
//   live: records/s of a CLI printing short JSON lines, from `start` (as in `live`: the first line's
//   cost is inside) and from the first line on, for a fresh bridge's first turn (its keeper starts
//   with it; the spare behind it once the stream ends), and from `start` for a warm bridge's third
//   turn, with that turn's CPU.
// aisdk and rawws have no surviving CLIs: their columns say so.
import { performance } from 'node:perf_hooks';
import { REPEATS, banner, fmt, median, procCpuMs, procMemory, runScenario, scaled, settle, tempDir } from './lib/common.mjs';
import { connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';
import { waitingKeepers } from '../../lib/host/sandbox/local/pids.js';

const SCENARIO = 'survive';
/** The waiting keeper's memory is read in one run only (it waits 10 s). */
const memoryOnce = { taken: false };

async function once(survive, count) {
  const stateDir = tempDir('ours-state');
  const bridge = await launchBridge('ours', { stateDir });
  let client;
  try {
    client = await connectClient(bridge);
    await client.prepareLive();
    const t0 = performance.now();
    client.start(emitterArgv(count), survive ? { survive: true } : {});
    await client.waitFor((s) => s.lines >= 1, 30_000, 'first line');
    const firstMs = performance.now() - t0;
    await client.waitFor((s) => s.lines >= count, Math.max(30_000, count / 5), `${count} live lines`);
    const ms = performance.now() - t0;
    await client.waitFor((s) => s.turnEnds >= 1, 10_000, 'turn end');
    // A second turn on the same bridge (a CLI spawned per turn): survive off reuses the warm jail
    // helper, and so does survive on, with a keeper started again.
    const t1 = performance.now();
    client.start(emitterArgv(1), survive ? { survive: true } : {});
    await client.waitFor((s) => s.lines >= count + 1, 30_000, 'second turn first line');
    const nextMs = performance.now() - t1;
    await client.waitFor((s) => s.turnEnds >= 2, 10_000, 'second turn end');
    // The keeper started for the next kept CLI, once V8's memory reducer has run (~8 s after its start's allocations).
    let waiting;
    const [keeper] = survive ? await waitingKeepers(stateDir) : [];
    if (keeper !== undefined && memoryOnce.taken === false) {
      memoryOnce.taken = true;
      await settle(10_000);
      waiting = procMemory(keeper);
    }
    // A third turn streaming `count` lines on the warm bridge: its jail helper runs, and (survive on) a
    // keeper waits, so only the stream itself is in it (the spare behind it starts once it ends).
    // Its CPU too, which a shared machine's load does not distort as it does the rate: the bridge's, its
    // reaped children's (the CLI, or the keeper with the CLI it reaped) and this process's (the host client).
    const cpu0 = procCpuMs(bridge.pid);
    const host0 = process.cpuUsage();
    const t2 = performance.now();
    client.start(emitterArgv(count), survive ? { survive: true } : {});
    await client.waitFor((s) => s.lines >= 2 * count + 1, Math.max(30_000, count / 5), `${count} warm lines`);
    const warmMs = performance.now() - t2;
    await client.waitFor((s) => s.turnEnds >= 3, 10_000, 'third turn end');
    // The CLI (or its keeper, whose whole life counts: its start as a spare too) is reaped just after the
    // turn's end; the spare started then is not, and is not counted.
    await settle(300);
    const host = process.cpuUsage(host0);
    const warmCpuMs = procCpuMs(bridge.pid) - cpu0 + (host.user + host.system) / 1000;
    return { firstMs, nextMs, recs: (count / ms) * 1000, steady: ((count - 1) / (ms - firstMs)) * 1000, warm: (count / warmMs) * 1000, warmCpuMs, waiting };
  } finally {
    client?.close();
    await bridge.stop();
  }
}

await runScenario(async () => {
  const count = scaled(200_000, 100);
  const repeats = Math.max(REPEATS, 3);
  banner(SCENARIO, `ours, launch survive off vs on: start → first CLI line, and records/s of ${fmt(count)} short JSON lines`, repeats);
  const available = (await prepareTargets()).available;
  if (available.ours !== true) throw new Error(`ours is not available: ${available.ours}`);
  const runs = { off: [], on: [] };
  for (let rep = 0; rep < repeats; rep++) {
    for (const mode of rep % 2 === 0 ? ['off', 'on'] : ['on', 'off']) runs[mode].push(await once(mode === 'on', count));
  }
  const first = { off: median(runs.off.map((r) => r.firstMs)), on: median(runs.on.map((r) => r.firstMs)) };
  const recs = { off: median(runs.off.map((r) => r.recs)), on: median(runs.on.map((r) => r.recs)) };
  const steady = { off: median(runs.off.map((r) => r.steady)), on: median(runs.on.map((r) => r.steady)) };
  const next = { off: median(runs.off.map((r) => r.nextMs)), on: median(runs.on.map((r) => r.nextMs)) };
  const warm = { off: median(runs.off.map((r) => r.warm)), on: median(runs.on.map((r) => r.warm)) };
  const warmCpu = { off: median(runs.off.map((r) => r.warmCpuMs)), on: median(runs.on.map((r) => r.warmCpuMs)) };
  for (const mode of ['off', 'on']) {
    console.log(
      `  survive ${mode.padEnd(3)} first line median ${first[mode].toFixed(1)} ms (second turn ${next[mode].toFixed(1)} ms)   live median ${fmt(recs[mode])} rec/s (from the first line: ${fmt(steady[mode])}; a warm bridge's third turn: ${fmt(warm[mode])})   runs: ${runs[mode].map((r) => `${r.firstMs.toFixed(0)} ms/${fmt(r.recs)}/${fmt(r.steady)}`).join(', ')}`,
    );
  }
  const waiting = runs.on.find((r) => r.waiting !== undefined)?.waiting;
  const mib = (kib) => (kib / 1024).toFixed(1);
  console.log(
    waiting
      ? `  a keeper waiting for the next kept CLI (one per bridge that keeps CLIs): VmRSS ${mib(waiting.rssKiB)} MiB, own (RssAnon) ${mib(waiting.anonKiB)} MiB, PSS ${mib(waiting.pssKiB)} MiB`
      : '  a keeper waiting for the next kept CLI: none found',
  );
  const firstCost = first.on - first.off;
  const nextCost = next.on - next.off;
  const liveRatio = recs.on / recs.off;
  const steadyRatio = steady.on / steady.off;
  const warmRatio = warm.on / warm.off;
  const cpuRatio = warmCpu.on / warmCpu.off;
  console.log(
    `  survive on: first line ${firstCost >= 0 ? '+' : ''}${firstCost.toFixed(1)} ms (second turn ${nextCost >= 0 ? '+' : ''}${nextCost.toFixed(1)} ms), live ${(liveRatio * 100).toFixed(1)} % of off start to last line, ` +
      `${(steadyRatio * 100).toFixed(1)} % from the first line on, ${(warmRatio * 100).toFixed(1)} % on a warm bridge (goal: within 5 %)`,
  );
  console.log(
    `  CPU of the warm turn (bridge, CLI, keeper, host client): off ${warmCpu.off.toFixed(0)} ms, on ${warmCpu.on.toFixed(0)} ms = ${((cpuRatio - 1) * 100).toFixed(1)} % more with survive   runs: off ${runs.off.map((r) => r.warmCpuMs.toFixed(0)).join(', ')}; on ${runs.on.map((r) => r.warmCpuMs.toFixed(0)).join(', ')}`,
  );
  console.log(
    `[bench] ${SCENARIO} ours=${fmt(recs.on)}rec/s aisdk=n/a rawws=n/a ratio ours/aisdk=n/a ` +
      `survive-off=${fmt(recs.off)}rec/s live-on/off=${liveRatio.toFixed(3)} steady-on/off=${steadyRatio.toFixed(3)} warm-on/off=${warmRatio.toFixed(3)} warm-cpu-on/off=${cpuRatio.toFixed(3)} first-line-off=${first.off.toFixed(1)}ms first-line-on=${first.on.toFixed(1)}ms second-turn-off=${next.off.toFixed(1)}ms second-turn-on=${next.on.toFixed(1)}ms`,
  );
});
