#!/usr/bin/env node
// Runs the test lanes and prints, at the end, per lane: the count of tests, the chaos schedules and
// other [figures] counts its files printed, and the time. A vitest lane that ran no test fails the
// run (a lane that silently ran nothing shows). Lanes pick files by directory/glob, so a new test
// file lands in one without editing this list.
//
//   node scripts/test-lanes.mjs [all|serial|quick|heavy|wide|matrix|<lane>…]
//
// A plan is a list of steps run one after another; a step is one lane, or a group of branches run at
// the same time (each branch a lane or a list of lanes run in order). Lanes run together where they
// wait more than they compute, so their waits overlap; a concurrent lane's output lines carry its
// name. The chaos schedules run under the CPU hog beside the E2E and chaos files: the hog keeps the cores
// saturated whatever else runs (it proves the schedules count events, not seconds), and the files beside it
// run under that load too.
//
//   all (npm test): build; then at once: typecheck, runtimes (the bridge bundle on Node 22 and 24), unit,
//   the consumer test on Node 20 → 22 → 24, the runtime unit lanes on Node 22 → 24; then at once: e2e-pair
//   (the real-CLI E2E files, two at a time), chaos (one file at a time), one real-CLI E2E file's core cases
//   on Node 22 then 24, and chaos-hog (its two files at once under the CPU hog); the leftover-process check
//   serial: every lane one at a time, e2e one file at a time
//   quick (npm run test:quick): the unit files that need no real CLI but the slowest (slowUnitFiles); among
//   them the E2E case on the fixture CLI (test/host/adapter-conformance.test.ts: the conformance suite, real
//   bridge and sandbox)
//
// Per-file durations come from vitest's JSON reporter (written under the OS temp dir); the slowest
// files of each lane are listed so the time can be traced to them.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'node_modules', '.bin');
// Every process this run starts inherits RUN_ENV, so the final leftover check counts this run's
// processes only, never those of another suite running on the same machine.
const RUN_ENV = 'HARNESS_BRIDGE_TEST_RUN';
const runId = randomBytes(8).toString('hex');
// Node reads NODE_EXTRA_CA_CERTS at every start (~65 ms of CPU with a system bundle, doubling a bare start), and the
// lanes start thousands of Node processes (bridges, keepers, jail helpers, CLIs) on a CPU-bound machine. None of them
// reaches a TLS server but npm (the consumer's install, --prefer-offline), which is given the same file as its cafile.
const { NODE_EXTRA_CA_CERTS: extraCaCerts, ...inherited } = process.env;
const env = {
  ...inherited,
  ...(extraCaCerts ? { npm_config_cafile: extraCaCerts } : {}),
  PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
  [RUN_ENV]: runId,
};

// The heavy files: real CLIs (test/e2e, two files at a time: they wait more than they compute), the
// chaos and fuzz files (one at a time), the package consumer test on each Node runtime; and the
// chaos schedules run under the CPU hog.
const e2eDir = 'test/e2e';
const chaosDir = 'test/chaos';
const heavyDirs = [chaosDir, e2eDir];
const heavyFiles = ['test/package/consumer.test.ts'];
// The chaos schedules, in two files run at once under the hog (test/chaos/chaos-lanes.ts).
const chaosHogFiles = ['test/chaos/chaos.test.ts', 'test/chaos/chaos-sigkill.test.ts'];
// Unit files that start a real CLI (installed by scripts/install-clis.mjs): left out of test:quick.
const realCliUnitFiles = [
  'test/host/cli/**',
  'test/bridge/mcp-claude.test.ts',
  'test/model-server/claude-smoke.test.ts',
  'test/bootstrap/bin-path-agent.test.ts',
  'test/fixtures/**',
];
// The slowest unit files (long fault, survival and whole-agent scenarios, the benchmark scripts, the
// Docker provider, the viewer in chromium): left out of test:quick, run by npm test's unit lane.
const slowUnitFiles = [
  'test/bench/**',
  'test/host/sandbox/docker*.test.ts',
  'test/host/view/view-browser.test.ts',
  'test/host/harness-agent*.test.ts',
  'test/host/session-faults.test.ts',
  'test/host/session-self-heal.test.ts',
  'test/host/ladder-stopping.test.ts',
  'test/bridge/disk-full.test.ts',
  'test/bridge/survive*.test.ts',
];
const unitExcludes = [...heavyDirs.map((d) => `${d}/**`), ...heavyFiles];
// Unit workers run file after file in one process (isolate off: no file re-imports the kit, zod, the AI SDK in a fresh
// fork). The quick lane: 682 → 585 CPU-s, its import time 114 → 29 s. Each file still gets its setup (process mark).
const sharedWorkers = '--no-isolate';
const excludeArgs = (globs) => globs.flatMap((g) => ['--exclude', g]);
const runtimeUnitFiles = [
  'test/bridge',
  'test/protocol',
  'test/host/channel',
  'test/host/channel.test.ts',
  'test/host/session.test.ts',
  'test/host/sandbox/local.test.ts',
  'test/host/adapters',
];
const consumerRuntimeCases = '^(?!.*(the kit broken|type-checks against)).*$';
const realCliRuntimeCase = [
  `${e2eDir}/claude-code.e2e.test.ts`,
  '--testNamePattern',
  'real CLI\\) (host tool round trip over the bridge MCP endpoint|suspend mid-turn in one host instance)',
];

/** @type {Record<string, { kind: 'vitest' | 'cmd' | 'leftover'; args: string[]; node?: string }>} */
const lanes = {
  build: { kind: 'cmd', args: ['npm', 'run', 'build'] },
  typecheck: { kind: 'cmd', args: ['npm', 'run', 'typecheck'] },
  // The bridge bundle starts on each pinned Node runtime (22, 24; installed into a cache outside the repo).
  runtimes: { kind: 'cmd', args: ['node', 'scripts/check-runtimes.mjs', 'all'] },
  // Three files at a time: a unit file mostly waits on the processes it starts (two workers kept ~1.8 files busy and
  // ~0.65 of a core; a group-1 run with three: unit 445 s, the group 453 s, was 579 s).
  unit: { kind: 'vitest', args: ['vitest', 'run', '--maxWorkers=3', sharedWorkers, ...excludeArgs(unitExcludes)] },
  e2e: { kind: 'vitest', args: ['vitest', 'run', e2eDir, '--no-file-parallelism'] },
  // Each E2E file runs its own scripted model in its own network namespace and its own sandboxes: two at a time share nothing.
  'e2e-pair': { kind: 'vitest', args: ['vitest', 'run', e2eDir, '--maxWorkers=2'] },
  chaos: { kind: 'vitest', args: ['vitest', 'run', chaosDir, '--no-file-parallelism', ...excludeArgs(chaosHogFiles)] },
  // The packed tarball with the real HarnessAgent in a fresh project, on each runtime (vitest and the flows run on that node).
  consumer: { kind: 'vitest', args: ['vitest', 'run', ...heavyFiles] },
  // On 22 and 24, what depends on the runtime: the cases that run the package. The type checks (tsc's answer is
  // the same on any Node) and the kit-breaking mutations (they test the UI flows' test, not the runtime) run on 20.
  'consumer-node22': { kind: 'vitest', node: '22', args: ['vitest', 'run', ...heavyFiles, '--testNamePattern', consumerRuntimeCases] },
  'consumer-node24': { kind: 'vitest', node: '24', args: ['vitest', 'run', ...heavyFiles, '--testNamePattern', consumerRuntimeCases] },
  'chaos-hog': { kind: 'vitest', args: ['node', 'scripts/with-cpu-hog.mjs', 'vitest', 'run', '--maxWorkers=2', ...chaosHogFiles] },
  'quick-unit': {
    kind: 'vitest',
    // Four files at a time (the edit-test loop, not CI): two workers keep ~0.65 of one core busy, the files mostly wait.
    args: ['vitest', 'run', '--maxWorkers=4', sharedWorkers, ...excludeArgs([...unitExcludes, ...realCliUnitFiles, ...slowUnitFiles])],
  },
  // The leftover-process check (scripts/leftover-processes.mjs), scoped to this run: see leftovers().
  // The bridge's and the host kit's unit files under the pinned Node 22 and 24 (vitest itself runs on that node): plan matrix.
  'unit-node22': { kind: 'vitest', node: '22', args: ['vitest', 'run', '--maxWorkers=2', sharedWorkers, 'test/bridge', 'test/host', ...excludeArgs(realCliUnitFiles)] },
  'unit-node24': { kind: 'vitest', node: '24', args: ['vitest', 'run', '--maxWorkers=2', sharedWorkers, 'test/bridge', 'test/host', ...excludeArgs(realCliUnitFiles)] },
  // One real-CLI E2E file's core cases on each pinned runtime: a host tool over the bridge's MCP endpoint and a
  // suspend/continue across host instances, with Claude Code (the host kit, the bridge and the CLI all on that node).
  // On each pinned runtime, the unit files whose code meets the runtime most: the whole bridge (what runs inside a
  // sandbox), the wire protocol, and the host kit's channel, session, local sandbox and adapters. Plan matrix runs all.
  'unit-runtime-node22': { kind: 'vitest', node: '22', args: ['vitest', 'run', '--maxWorkers=2', sharedWorkers, ...runtimeUnitFiles] },
  'unit-runtime-node24': { kind: 'vitest', node: '24', args: ['vitest', 'run', '--maxWorkers=2', sharedWorkers, ...runtimeUnitFiles] },
  'e2e-node22': { kind: 'vitest', node: '22', args: ['vitest', 'run', ...realCliRuntimeCase] },
  'e2e-node24': { kind: 'vitest', node: '24', args: ['vitest', 'run', ...realCliRuntimeCase] },
  leftover: { kind: 'leftover', args: ['scripts/leftover-processes.mjs'] },
};
// A step: a lane, or a group (an array) of branches run at the same time, each branch a lane or an array of lanes run in order.
// Measured CPU (user+sys of a lane's process tree over its time on a quiet machine, in cores): unit ~0.65 with two
// workers; a runtime unit lane ~0.8; an E2E file 0.2-0.4; a chaos file 0.2-0.6 (fuzz-channel 0.2, offline-tools 0.6);
// the consumer test ~0.5 (npm, tsc); typecheck 1 while it runs.
const packageLanes = ['consumer', 'consumer-node22', 'consumer-node24']; // one after another: each packs this tree
const runtimeLanes = ['unit-runtime-node22', 'unit-runtime-node24']; // vitest itself on that node
const plans = {
  // Side by side: unit, the package consumer test on each runtime and the runtime unit lanes (about two cores busy);
  // then the real-CLI E2E files two at a time beside the chaos files, the runtime E2E cases and the chaos schedules
  // under the CPU hog (the E2E and chaos files alone left half a core idle; the hog alone after them cost a step of
  // its own). Each suite's CLIs are apart from the others': a case that attacks its own uid (the insider suite's
  // kill -9 -1 without a pid namespace) runs its CLI as a user of its own.
  all: ['build', ['typecheck', 'runtimes', 'unit', packageLanes, runtimeLanes], ['e2e-pair', 'chaos', ['e2e-node22', 'e2e-node24'], 'chaos-hog'], 'leftover'],
  // One lane at a time (but the two cheap checks): the slowest and most conservative order.
  serial: ['build', ['typecheck', 'runtimes'], 'unit', ...packageLanes, ...runtimeLanes, 'e2e', 'e2e-node22', 'e2e-node24', 'chaos', 'chaos-hog', 'leftover'],
  // No build lane: vitest's global setup builds dist/ (what the quick files need; lib/ is for the package lanes).
  quick: ['quick-unit', 'leftover'],
  heavy: ['build', ['e2e-pair', 'chaos', packageLanes]],
  wide: ['build', ['typecheck', 'runtimes', 'unit', packageLanes, runtimeLanes, 'e2e-pair', 'chaos'], 'chaos-hog', 'leftover'],
  matrix: ['build', 'unit-node22', 'unit-node24', 'leftover'],
};

const requested = process.argv.slice(2);
const steps = requested.length === 0 ? plans.all : requested.flatMap((name) => plans[name] ?? [name]);
/** Every lane a step names, in plan order. */
const lanesOf = (step) => (Array.isArray(step) ? step.flatMap(lanesOf) : [step]);
const order = steps.flatMap(lanesOf);
for (const name of order) {
  if (!lanes[name]) {
    process.stderr.write(`test-lanes: unknown lane ${name} (lanes: ${Object.keys(lanes).join(', ')}; plans: ${Object.keys(plans).join(', ')})\n`);
    process.exit(2);
  }
}

const reportDir = mkdtempSync(join(tmpdir(), 'hb-test-lanes-'));
const results = [];

// eslint-disable-next-line no-control-regex -- the reporter's colour codes
const plain = (line) => line.replace(/\u001b\[[0-9;]*m/g, '').trim();

/**
 * Runs argv (with `node` first on PATH when given), forwarding its output (each line led by `[label]`
 * when a label is given: lanes running at once), and collects the [figures] lines it prints.
 */
function run(argv, node, label) {
  return new Promise((resolveRun) => {
    const laneEnv = node ? { ...env, PATH: `${dirname(node)}${delimiter}${env.PATH}` } : env;
    const [command, ...rest] = node && argv[0] === 'vitest' ? [node, join(root, 'node_modules', 'vitest', 'vitest.mjs'), ...argv.slice(1)] : argv;
    const child = spawn(command, rest, { cwd: root, env: laneEnv, stdio: ['inherit', 'pipe', 'pipe'] });
    const figures = [];
    /** Splits a stream into whole lines: each goes to `out` (labelled) and to `onLine`. */
    const lines = (stream, out, onLine) => {
      let pending = '';
      stream.on('data', (chunk) => {
        if (!label) out.write(chunk);
        pending += chunk.toString('utf8');
        const whole = pending.split('\n');
        pending = whole.pop() ?? '';
        for (const line of whole) {
          if (label) out.write(`[${label}] ${line}\n`);
          onLine(line);
        }
      });
      stream.on('end', () => {
        if (pending === '') return;
        if (label) out.write(`[${label}] ${pending}\n`);
        onLine(pending);
      });
    };
    const onStdout = (line) => {
      if (line.includes('[figures]')) figures.push(plain(line));
    };
    lines(child.stdout, process.stdout, onStdout);
    lines(child.stderr, process.stderr, () => undefined);
    const stop = (signal) => child.kill(signal);
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    child.on('close', (code, signal) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveRun({ code: code ?? (signal ? 1 : 0), figures });
    });
  });
}

/**
 * Marked processes (scripts/leftover-processes.mjs) this run started: those carrying RUN_ENV=runId, and
 * those sharing a test file's mark with one of them (spare keepers are spawned with a bare environment
 * and get only the mark). Looks again, 100 ms apart, while some are still exiting; SIGKILLs what is left.
 */
async function leftovers() {
  const { markedProcesses, killAll } = await import(join(root, 'scripts', 'leftover-processes.mjs'));
  const ours = () => {
    const all = markedProcesses();
    const marks = new Set();
    for (const p of all) {
      try {
        if (readFileSync(`/proc/${p.pid}/environ`, 'latin1').split('\0').includes(`${RUN_ENV}=${runId}`)) marks.add(p.mark);
      } catch {
        // gone meanwhile
      }
    }
    return all.filter((p) => marks.has(p.mark));
  };
  let left = ours();
  for (let i = 0; i < 50 && left.length > 0; i++) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    left = ours();
  }
  for (const p of left) process.stdout.write(`${JSON.stringify(p)}\n`);
  process.stdout.write(`leftover-processes: ${left.length} process(es) this run started still running\n`);
  killAll(left);
  return { code: left.length > 0 ? 1 : 0, figures: [] };
}

/** Totals and per-file durations from vitest's JSON report. */
function readReport(path) {
  if (!existsSync(path)) return undefined;
  const report = JSON.parse(readFileSync(path, 'utf8'));
  const files = (report.testResults ?? []).map((file) => ({
    name: relative(root, file.name),
    ms: Math.max(0, (file.endTime ?? 0) - (file.startTime ?? 0)),
    tests: (file.assertionResults ?? []).length,
  }));
  // What failed, named in the summary: the summary is the tail of the log, the part a truncated CI log keeps.
  const failures = [];
  for (const file of report.testResults ?? []) {
    const name = relative(root, file.name);
    for (const test of file.assertionResults ?? []) {
      if (test.status === 'failed') failures.push(`${name} > ${test.fullName}: ${firstLines(test.failureMessages?.[0])}`);
    }
    if (file.status === 'failed' && !(file.assertionResults ?? []).some((test) => test.status === 'failed')) failures.push(`${name}: ${firstLines(file.message)}`);
  }
  return {
    failures,
    total: report.numTotalTests ?? 0,
    passed: report.numPassedTests ?? 0,
    failed: report.numFailedTests ?? 0,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
    files,
  };
}

/** The first lines of a failure message, colour codes out, for the summary. */
const firstLines = (message) => (message ? plain(String(message)).split('\n').slice(0, 4).map((line) => line.trim()).filter(Boolean).join(' | ').slice(0, 2000) : 'no message');

/** Schedules (schedules=N) and other counts the lane's [figures] lines name. */
function scheduleCount(figures) {
  let schedules = 0;
  for (const line of figures) {
    const match = /\bschedules=(\d+)/.exec(line);
    if (match) schedules += Number(match[1]);
  }
  return schedules;
}

/** Runs one lane (labelled when others run beside it) and records its result. */
async function runLane(name, label) {
  const lane = lanes[name];
  if (lane.kind === 'leftover' && !existsSync(join(root, lane.args[0]))) {
    results.push({ name, note: `skipped: ${lane.args[0]} not present` });
    return 0;
  }
  process.stdout.write(`\n[lane] ${name}: ${lane.args.join(' ')}${lane.node ? ` (node ${lane.node})` : ''}\n`);
  const reportPath = join(reportDir, `${name}.json`);
  const argv = lane.kind === 'vitest' ? [...lane.args, '--reporter=default', '--reporter=json', `--outputFile.json=${reportPath}`] : lane.args;
  const started = Date.now();
  const node = lane.node ? nodes.get(lane.node) : undefined;
  const { code, figures } = lane.kind === 'leftover' ? await leftovers() : await run(argv, node, label);
  const seconds = (Date.now() - started) / 1000;
  const result = { name, code, seconds, figures };
  if (lane.kind === 'vitest') {
    result.report = readReport(reportPath);
    const ran = result.report ? result.report.passed + result.report.failed : 0;
    if (ran === 0) {
      result.code = result.code || 1;
      result.note = 'ran no test';
    }
  }
  results.push(result);
  process.stdout.write(`[lane] ${name} ${result.code === 0 ? 'ok' : 'FAILED'} after ${seconds.toFixed(1)}s\n`);
  // dist/ and lib/ are built from this tree: the vitest lanes after it skip the global setup's rebuild (lanes
  // running at once must not rewrite dist/bridge.mjs under each other's bridges), the consumer test its lib/ build.
  if (name === 'build' && result.code === 0) env.HARNESS_BRIDGE_BUILT = '1';
  return result.code;
}

/**
 * The machine's busy CPU time so far, in seconds (/proc/stat: every state but idle and iowait), or undefined
 * off Linux. A step's busy time over its wall time says how many cores it kept busy: the headroom left there.
 */
function busySeconds() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return (user + nice + system + irq + softirq + (steal ?? 0)) / 100; // USER_HZ: /proc/stat counts in 1/100 s on Linux
  } catch {
    return undefined;
  }
}

/** Per step: its lanes, wall time and the cores the machine kept busy meanwhile (the summary prints them). */
const stepLoads = [];

/** Runs a step, and records its wall time and the machine's busy cores meanwhile. */
async function runStep(step) {
  const started = Date.now();
  const busyBefore = busySeconds();
  const code = await runStepBody(step);
  const seconds = (Date.now() - started) / 1000;
  const busyAfter = busySeconds();
  const cores = busyBefore === undefined || busyAfter === undefined || seconds === 0 ? undefined : (busyAfter - busyBefore) / seconds;
  stepLoads.push({ lanes: lanesOf(step), seconds, cores });
  return code;
}

/** Runs a step's body: a lane, or a group whose branches run at the same time (a branch stops at its first failure). */
async function runStepBody(step) {
  if (!Array.isArray(step)) return runLane(step);
  const codes = await Promise.all(
    step.map(async (branch) => {
      for (const name of lanesOf(branch)) {
        const code = await runLane(name, step.length > 1 ? name : undefined);
        if (code !== 0) return code;
      }
      return 0;
    }),
  );
  return codes.find((code) => code !== 0) ?? 0;
}

const startedAll = Date.now();
// The pinned runtimes the lanes name, installed before any lane runs (the install blocks: no lane may be running).
const nodes = new Map();
for (const major of new Set(order.map((name) => lanes[name].node).filter(Boolean))) {
  const { ensureNode } = await import(join(root, 'scripts', 'install-node.mjs'));
  nodes.set(major, ensureNode(major));
}

let failed = false;
for (const step of steps) {
  // After a failure only the leftover-process check still runs (the next run must not inherit them).
  if (failed && step !== 'leftover') continue;
  if ((await runStep(step)) !== 0) failed = true;
}
rmSync(reportDir, { recursive: true, force: true });
results.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));

// The summary: one line per lane, its [figures] lines, and its slowest files.
const out = ['', '[lanes] summary'];
for (const r of results) {
  if (r.seconds === undefined) {
    out.push(`[lane] ${r.name.padEnd(15)} ${r.note}`);
    continue;
  }
  const status = r.code === 0 ? 'ok' : `FAILED (exit ${r.code}${r.note ? `, ${r.note}` : ''})`;
  let counts = '';
  if (r.report) {
    counts = ` tests=${r.report.total} passed=${r.report.passed} failed=${r.report.failed} skipped=${r.report.skipped} files=${r.report.files.length}`;
  } else if (lanes[r.name].kind === 'vitest') counts = ' tests=0 (no report)';
  const schedules = scheduleCount(r.figures);
  out.push(`[lane] ${r.name.padEnd(15)} ${status} time=${r.seconds.toFixed(1)}s${counts}${schedules ? ` schedules=${schedules}` : ''}`);
  for (const line of r.figures) out.push(`         ${line}`);
  for (const failure of r.report?.failures ?? []) out.push(`         FAILED ${failure}`);
  if (r.report && r.report.files.length > 1) {
    const slow = [...r.report.files].sort((a, b) => b.ms - a.ms).slice(0, 5);
    out.push(`         slowest: ${slow.map((f) => `${f.name} ${(f.ms / 1000).toFixed(1)}s (${f.tests})`).join(', ')}`);
  }
}
// Each step's wall time and the cores the machine kept busy during it (of cpus().length).
for (const { lanes: names, seconds, cores } of stepLoads) {
  out.push(`[step] ${names.join(' + ')}: time=${seconds.toFixed(1)}s${cores === undefined ? '' : ` busy=${cores.toFixed(2)} of ${cpus().length} cores`}`);
}
// Lanes run at once overlap: the run's time is the wall clock, the lanes' sum says how much they overlapped.
const total = (Date.now() - startedAll) / 1000;
const summed = results.reduce((sum, r) => sum + (r.seconds ?? 0), 0);
out.push(`[lanes] ${failed ? 'FAILED' : 'ok'} total=${total.toFixed(1)}s (lanes summed ${summed.toFixed(1)}s)`);
process.stdout.write(`${out.join('\n')}\n`);
process.exit(failed ? 1 : 0);
