// rss: the bridge process's memory idle, after 10k and after 1M journaled records.
// Idle is sampled twice once a host client is attached: at once ("ready"), and
// after 1.5 s without output ("idle"; ours gives its start's garbage back
// after 200–400 ms of quiet, docs/bridge-internals.md#memory). Then one turn
// per bridge: the CLI prints 10k lines, pauses 1.5 s, then prints the remaining
// 990k (one turn, because the AI SDK bridge clears its log on every `start`).
// A host client consumes live throughout. VmRSS is sampled from
// /proc/<pid>/status once the client holds the 10k-th line and the bridge has
// idled 500 ms, and again after the last line and turn end; VmHWM (the peak)
// is sampled beside it. rawws journals nothing: it is the floor of a process
// that only forwards. One run per bridge (memory is far less noisy than time).
import { banner, benchLine, floor, fmt, procMemory, ratio, runScenario, scaled, settle, skippedValue, targetRunner } from './lib/common.mjs';
import { TARGETS, connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'rss';
const MiB = (kib) => kib / 1024;
const IDLE_MS = 1500;

async function once(target, small, large) {
  const bridge = await launchBridge(target);
  let client;
  try {
    client = await connectClient(bridge);
    await client.prepareLive();
    const startup = procMemory(bridge.pid);
    await settle(IDLE_MS);
    const idle = procMemory(bridge.pid);
    client.start(emitterArgv(large, ['--pause-after', String(small), '--pause-ms', '1500']));
    await client.waitFor((s) => s.lines >= small, 30_000, `${small} lines`);
    await settle(500);
    const atSmall = procMemory(bridge.pid);
    await client.waitFor((s) => s.lines >= large && s.turnEnds >= 1, Math.max(60_000, large / 5), `${large} lines`);
    await settle(500);
    const atLarge = procMemory(bridge.pid);
    return { startup, idle, atSmall, atLarge };
  } finally {
    client?.close();
    await bridge.stop();
  }
}

await runScenario(async () => {
  const small = scaled(10_000, 20);
  const large = scaled(1_000_000, 200);
  banner(SCENARIO, `bridge VmRSS (VmHWM) after ${fmt(small)} and after ${fmt(large)} journaled records, one turn, live client`, 1);
  const { runs: all, status: available, run } = targetRunner((await prepareTargets()).available);
  for (const target of TARGETS) await run(target, () => once(target, small, large));
  const runs = Object.fromEntries(TARGETS.map((t) => [t, all[t][0]]));
  const shown = {};
  const atLarge = {};
  const growth = {};
  for (const target of TARGETS) {
    if (available[target] !== true) {
      console.log(`  ${target.padEnd(6)} ${available[target].startsWith('failed') ? '' : 'skipped: '}${available[target]}`);
      shown[target] = skippedValue(available[target]);
      continue;
    }
    const r = runs[target];
    atLarge[target] = MiB(r.atLarge.rssKiB);
    growth[target] = r.atLarge.rssKiB / r.atSmall.rssKiB;
    shown[target] = `${MiB(r.atSmall.rssKiB).toFixed(1)}→${atLarge[target].toFixed(1)}MiB`;
    console.log(
      `  ${target.padEnd(6)} ready ${MiB(r.startup.rssKiB).toFixed(1)} MiB · idle ${MiB(r.idle.rssKiB).toFixed(1)} MiB · @${fmt(small)} ${MiB(r.atSmall.rssKiB).toFixed(1)} MiB (peak ${MiB(r.atSmall.hwmKiB).toFixed(1)})` +
        ` · @${fmt(large)} ${atLarge[target].toFixed(1)} MiB (peak ${MiB(r.atLarge.hwmKiB).toFixed(1)}) · growth ${growth[target].toFixed(2)}×` +
        ` (peak/@${fmt(small)} ${(r.atLarge.hwmKiB / r.atSmall.rssKiB).toFixed(2)}×)`,
    );
  }
  // ours idle from its startup snapshot (the recipe's startupSnapshot option) beside ours idle, both running at once
  // (PSS splits the node binary's pages among the processes mapping them): the snapshot's heap is the process's own.
  if ((await prepareTargets()).snapshotBlob && runs.ours) {
    const pair = [await launchBridge('ours'), await launchBridge('ours', { snapshot: true })];
    const clients = [];
    try {
      for (const bridge of pair) clients.push(await connectClient(bridge));
      for (const client of clients) await client.prepareLive();
      await settle(IDLE_MS);
      const [plain, snap] = pair.map((bridge) => procMemory(bridge.pid));
      const show = (m) => `VmRSS ${MiB(m.rssKiB).toFixed(1)} MiB (own ${MiB(m.anonKiB).toFixed(1)}, PSS ${MiB(m.pssKiB).toFixed(1)})`;
      console.log(`  ours idle ${show(plain)} · from its startup snapshot ${show(snap)}`);
    } finally {
      for (const client of clients) client.close();
      for (const bridge of pair) await bridge.stop();
    }
  }
  const ok = Number.isFinite(growth.ours) ? growth.ours <= 1.2 : undefined;
  const okPeak = runs.ours ? runs.ours.atLarge.hwmKiB / runs.ours.atSmall.rssKiB <= 1.2 : undefined;
  console.log(
    `  values are RSS@${fmt(small)}→RSS@${fmt(large)}; ratio is of RSS@${fmt(large)} · ours/rawws ${ratio(atLarge.ours, atLarge.rawws)}` +
      ` · floor (issue 2): RSS@1M ≤ 1.2× RSS@10k — ${floor(ok)} (by peak: ${floor(okPeak)})`,
  );
  benchLine(SCENARIO, shown, 'MiB', `ours-growth=${Number.isFinite(growth.ours) ? growth.ours.toFixed(2) + '×' : 'n/a'} floor≤1.2×=${floor(ok)}`, atLarge);
});
