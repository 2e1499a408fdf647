// sessions: 30 sessions in one host at once, each a turn in which the CLI
// prints N short JSON lines, all turns started together.
//   ours  — one host process with 30 BridgeSessions (createBridgeHarness on the
//           local sandbox provider, the bench adapter's translator: one part
//           per line), so 30 bridges;
//   aisdk / rawws — 30 of their bridges, each with one ws client in one process.
// Each target runs in a child process of its own (its RSS is the host's).
// Ours runs its sessions as every reference adapter does: the CLI kept (launch
// `survive`), so each session has its keeper. Figures: aggregate records/s (all
// lines / wall time from the starts to the last line), the host's CPU per
// record over that window (process.cpuUsage), the host's VmRSS at the
// end (and its growth over the start of the measurement), and the bridges'
// VmRSS summed (and per bridge) after their turn ended, beside their PSS sum
// (the node binary's pages, most of an idle bridge's RSS, are shared: VmRSS
// counts them once per bridge); for ours also per session with its keeper
// (the next turn's, started ahead) and with everything else it runs (the jail
// helper and its relays). The goals (issue 38): aggregate ≥ 2× the AI SDK's,
// the host's VmRSS ≤ the AI SDK's, ≤ 45 MiB per session with its keeper.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { REPO, SCALE, banner, benchLine, childEnv, floor, fmt, procMemory, ratio, runScenario, scaled, sleep, tempDir, track, withTimeout } from './lib/common.mjs';
import { bundleOursHost } from './lib/ours-host.mjs';
import { TARGETS, connectClient, emitterArgv, launchBridge, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'sessions';
const MiB = (kib) => kib / 1024;
const hostKiB = () => procMemory(process.pid).rssKiB;
/** Proportional set size: shared pages (the node binary's, mostly) divided among the processes mapping them. */
const pssKiB = (pid) => Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? NaN);

/** ours: n sessions through the host kit; returns lines, ms, host and bridge memory. */
async function runOurs(hostBundle, n, count) {
  const host = await import(hostBundle);
  const root = tempDir('sessions');
  const provider = host.createLocalSandboxProvider({ root: path.join(root, 'sandboxes'), templatesRoot: path.join(root, 'templates') });
  const adapter = host.sessionAdapter(emitterArgv(count), false, true);
  // The default isolation with its namespace: the bundled kit runs from a temp dir, where the bridge cannot resolve sandbox-runtime itself.
  const srt = path.join(REPO, 'node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js');
  const harness = host.createBridgeHarness(adapter, { bridgeFile: path.join(REPO, 'dist/bridge.mjs'), probeTimeoutMs: 5_000, isolation: { srt } });
  const sandboxes = [];
  try {
    const sessions = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const sandbox = await provider.createSession({ sessionId: `s${i}` });
        sandboxes.push(sandbox);
        const workDir = path.join(sandbox.defaultWorkingDirectory, 'work');
        mkdirSync(workDir, { recursive: true });
        return harness.doStart({ sessionId: `s${i}`, sandboxSession: sandbox, sessionWorkDir: workDir });
      }),
    );
    const bridgePids = readdirSync(root, { recursive: true })
      .filter((file) => String(file).endsWith('bridge.json'))
      .map((file) => JSON.parse(readFileSync(path.join(root, String(file)), 'utf8')).pid);
    if (bridgePids.length !== n) throw new Error(`found ${bridgePids.length} bridge.json files for ${n} sessions`);
    const hostBefore = hostKiB();
    let lines = 0;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const controls = await Promise.all(sessions.map((session) => session.doPromptTurn({ prompt: '', emit: (part) => part.type === 'raw' && lines++ })));
    await withTimeout(Promise.all(controls.map((control) => control.done)), Math.max(60_000, (n * count) / 5), `${n} turns`);
    const ms = performance.now() - t0;
    const hostCpuUs = cpuMicros(process.cpuUsage(cpu0));
    if (lines !== n * count) throw new Error(`expected ${n * count} parts, got ${lines}`);
    return { lines, ms, hostBefore, hostCpuUs, ...(await settle(bridgePids)) };
  } finally {
    await Promise.all(sandboxes.map((sandbox) => sandbox.stop().catch(() => undefined)));
  }
}

/** aisdk / rawws: n bridges with one ws client each, in this process. */
async function runPlain(target, n, count) {
  await prepareTargets();
  const bridges = [];
  try {
    for (let i = 0; i < n; i++) bridges.push(await launchBridge(target));
    const clients = await Promise.all(bridges.map((bridge) => connectClient(bridge)));
    await Promise.all(clients.map((client) => client.prepareLive()));
    const hostBefore = hostKiB();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    for (const client of clients) client.start(emitterArgv(count));
    const ends = clients.map((client) => client.waitFor((s) => s.lines >= count, Math.max(60_000, (n * count) / 5), `${count} lines`));
    await Promise.all(ends);
    const ms = performance.now() - t0;
    const hostCpuUs = cpuMicros(process.cpuUsage(cpu0));
    await Promise.all(clients.map((client) => client.waitFor((s) => s.turnEnds >= 1, 30_000, 'turn end')));
    const lines = clients.reduce((sum, client) => sum + client.state.lines, 0);
    const memory = await settle(bridges.map((bridge) => bridge.pid));
    for (const client of clients) client.close();
    return { lines, ms, hostBefore, hostCpuUs, ...memory };
  } finally {
    await Promise.all(bridges.map((bridge) => bridge.stop()));
  }
}

/** Host and bridges' VmRSS once the turns are over and the bridges idled 500 ms; per bridge also its keepers' and all its descendants'. */
async function settle(bridgePids) {
  await sleep(500);
  const bridgesKiB = bridgePids.map((pid) => procMemory(pid).rssKiB);
  const bridgesPssKiB = bridgePids.map(pssKiB).reduce((a, b) => a + b, 0);
  const trees = bridgePids.map((pid) => descendants(pid));
  const rss = (pids) => pids.reduce((sum, p) => sum + (procMemory(p.pid).rssKiB || 0), 0);
  const pss = (pids) => pids.reduce((sum, p) => sum + (pssKiB(p.pid) || 0), 0);
  const keepers = trees.map((tree) => tree.filter((p) => p.argv.includes('--keeper')));
  const others = trees.map((tree) => tree.filter((p) => !p.argv.includes('--keeper')));
  const mode = isolationOf(bridgePids[0]);
  return { hostAfter: hostKiB(), bridgesKiB, bridgesPssKiB, keepersKiB: keepers.map(rss), keepersPssKiB: keepers.map(pss), othersKiB: others.map(rss), othersPssKiB: others.map(pss), mode };
}

/** A process.cpuUsage() difference in µs (user + system). */
const cpuMicros = ({ user, system }) => user + system;

/** The isolation mode a bridge runs its CLIs in (the bridge log's `isolation` line, beside its bridge.json). */
function isolationOf(pid) {
  try {
    const stateDir = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').find((arg, i, all) => all[i - 1] === '--state-dir');
    const line = readFileSync(path.join(stateDir, 'bridge.log'), 'utf8').split('\n').find((l) => l.includes('"isolation":{'));
    return JSON.parse(line).isolation.mode;
  } catch {
    return undefined;
  }
}

/** Every process below `root` (children, theirs, …), with its argv. */
function descendants(root) {
  const parent = new Map();
  const argv = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      argv.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0'));
    } catch {
      // gone meanwhile
    }
  }
  const below = (pid) => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...parent.keys()].filter(below).map((pid) => ({ pid, argv: argv.get(pid) ?? [] }));
}

/** Runs one target in a child process (this file with --target); returns its result. */
function inChild(target, n, count, hostBundle) {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, [fileURLToPath(import.meta.url), '--target', target, String(n), String(count), hostBundle ?? ''], {
        env: childEnv(),
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code === 0 && line) resolve(JSON.parse(line.slice(7)));
      else reject(new Error(`${target} child exited ${code}: ${out.slice(-2000)}`));
    });
  });
}

const targetIndex = process.argv.indexOf('--target');
if (targetIndex !== -1) {
  const [target, n, count, hostBundle] = process.argv.slice(targetIndex + 1);
  const result = target === 'ours' ? await runOurs(hostBundle, Number(n), Number(count)) : await runPlain(target, Number(n), Number(count));
  console.log(`RESULT ${JSON.stringify(result)}`);
  process.exit(0);
}

await runScenario(async () => {
  const n = Number(process.env.BENCH_SESSIONS ?? (SCALE < 0.1 ? 3 : 30));
  const count = scaled(20_000, 50);
  banner(SCENARIO, `${n} sessions in one host, each a turn of ${fmt(count)} lines, started together: aggregate records/s, host and bridges' VmRSS`, 1);
  const hostBundle = await bundleOursHost();
  const results = {};
  const shown = {};
  let failed = false;
  for (const target of TARGETS) {
    try {
      const r = await inChild(target, n, count, target === 'ours' ? hostBundle : undefined);
      const sum = r.bridgesKiB.reduce((a, b) => a + b, 0);
      const perBridge = MiB(sum / r.bridgesKiB.length);
      const each = (kib) => (kib === undefined ? 0 : MiB(kib.reduce((a, b) => a + b, 0) / kib.length));
      const withKeeper = perBridge + each(r.keepersKiB);
      const pssWithKeeper = MiB(r.bridgesPssKiB / r.bridgesKiB.length) + each(r.keepersPssKiB);
      results[target] = {
        rate: (r.lines / r.ms) * 1000,
        hostCpuPerRecord: r.hostCpuUs / r.lines,
        host: MiB(r.hostAfter),
        hostGrowth: MiB(r.hostAfter - r.hostBefore),
        bridges: MiB(sum),
        perBridge,
        withKeeper,
        whole: withKeeper + each(r.othersKiB),
        pssWithKeeper,
        pssWhole: pssWithKeeper + each(r.othersPssKiB),
        pss: MiB(r.bridgesPssKiB),
        mode: r.mode,
      };
      const x = results[target];
      console.log(
        `  ${target.padEnd(6)} ${fmt(x.rate)} rec/s aggregate · host CPU ${x.hostCpuPerRecord.toFixed(2)} µs/record over the turns · host VmRSS ${x.host.toFixed(1)} MiB (+${x.hostGrowth.toFixed(1)} during the turns)` +
          ` · bridges' VmRSS sum ${x.bridges.toFixed(1)} MiB (${x.perBridge.toFixed(1)} MiB each; PSS sum ${x.pss.toFixed(1)} MiB)` +
          (target === 'ours'
            ? ` · isolation ${x.mode} · per session with its keeper ${x.withKeeper.toFixed(1)} MiB (PSS ${x.pssWithKeeper.toFixed(1)}), with all it runs (jail helper, relays) ${x.whole.toFixed(1)} MiB (PSS ${x.pssWhole.toFixed(1)})`
            : ''),
      );
      shown[target] = x.rate;
    } catch (error) {
      failed = true;
      console.log(`  ${target} FAILED: ${error?.stack ?? error}`);
      shown[target] = 'failed';
    }
  }
  if (failed) process.exitCode = 1;
  const o = results.ours;
  console.log(
    `  ours/rawws rec/s ${ratio(o?.rate, results.rawws?.rate)} · bridges' RSS ours/aisdk ${ratio(o?.bridges, results.aisdk?.bridges)} · ours/rawws ${ratio(o?.bridges, results.rawws?.bridges)}` +
      ' · host: ours runs the host kit (channels, translators), aisdk and rawws one plain ws client per bridge',
  );
  const a = results.aisdk;
  const goals = {
    rate: o && a ? o.rate >= 2 * a.rate : undefined,
    host: o && a ? o.host <= a.host : undefined,
    perSession: o ? o.withKeeper <= 45 : undefined,
  };
  console.log(
    `  goals (issue 38): aggregate ≥ 2× aisdk (${ratio(o?.rate, a?.rate)}) — ${floor(goals.rate)} · host VmRSS ≤ aisdk's (${o?.host.toFixed(1)} vs ${a?.host.toFixed(1)} MiB) — ${floor(goals.host)}` +
      ` · ≤ 45 MiB per session with its keeper (${o?.withKeeper.toFixed(1)} MiB) — ${floor(goals.perSession)}`,
  );
  const memory = (t) => (results[t] ? `${t}-host=${results[t].host.toFixed(1)}MiB ${t}-bridges=${results[t].bridges.toFixed(1)}MiB` : `${t}=n/a`);
  benchLine(
    SCENARIO,
    shown,
    'rec/s',
    `sessions=${n} ${TARGETS.map(memory).join(' ')} ours-per-session+keeper=${o?.withKeeper.toFixed(1)}MiB ours-per-session-all=${o?.whole.toFixed(1)}MiB ` +
      `goal-rate≥2×=${floor(goals.rate)} goal-host≤aisdk=${floor(goals.host)} goal-session≤45MiB=${floor(goals.perSession)}`,
  );
});
