// Shared plumbing for the benchmark scenarios: scale, environment banner,
// statistics, temp dirs, child-process bookkeeping (every child is killed on
// any exit path), bundling, /proc sampling and the closing `[bench]` line.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeBridgeCommand } from '../../../bootstrap/bridge-command.mjs';

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const REPO = path.resolve(BENCH_DIR, '..', '..');

/** BENCH_SCALE multiplies every record count (default 1; the smoke test uses ~0.005). */
export const SCALE = (() => {
  const value = Number(process.env.BENCH_SCALE ?? '1');
  return Number.isFinite(value) && value > 0 ? value : 1;
})();
/** Repetitions per measurement (median reported). BENCH_REPEATS overrides; tiny scales run once. */
export const REPEATS = Number(process.env.BENCH_REPEATS ?? (SCALE < 0.1 ? 1 : 3));

export function scaled(n, min = 1) {
  return Math.max(min, Math.round(n * SCALE));
}

/** Environment for every child: NODE_EXTRA_CA_CERTS removed (it adds ~70–80 ms to each Node start here). */
export function childEnv(extra = {}) {
  const env = { ...process.env, ...extra };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

export function banner(scenario, what, repeats = REPEATS) {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`# ${scenario}: ${what}`);
  console.log(`# node ${process.version} · ${cpu} × ${os.cpus().length} · ${os.platform()} ${os.release()}`);
  console.log(`# ours runs as the host kit launches it (bootstrap/bridge-command.mjs): ${describeBridgeCommand()}`);
  console.log(
    `# BENCH_SCALE=${SCALE} repeats=${repeats} · children run without NODE_EXTRA_CA_CERTS` +
      (process.env.NODE_EXTRA_CA_CERTS ? ' (set in this environment; it adds ~70–80 ms per Node start)' : ''),
  );
}

export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function fmt(value, digits = 0) {
  if (value === undefined || value === null || Number.isNaN(value)) return 'n/a';
  if (typeof value === 'string') return value;
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

const tempDirs = new Set();
export function tempDir(label = 'x') {
  const dir = mkdtempSync(path.join(os.tmpdir(), `hb-bench-${label}-`));
  chmodSync(dir, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
  tempDirs.add(dir);
  return dir;
}
export function removeDir(dir) {
  tempDirs.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

const children = new Set();
/** Track a child so it is SIGKILLed however this process ends. */
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
export function killAll() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
  children.clear();
}
function cleanup() {
  killAll();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}
process.once('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    cleanup();
    process.exit(130);
  });
}

/** Runs `main`; on any error prints it, cleans up and exits 1. */
export async function runScenario(main) {
  const watchdogMs = Number(process.env.BENCH_TIMEOUT_MS ?? 600_000);
  const watchdog = setTimeout(() => {
    console.error(`[bench] watchdog: scenario exceeded ${watchdogMs} ms`);
    cleanup();
    process.exit(1);
  }, watchdogMs);
  watchdog.unref();
  try {
    await main();
    cleanup();
    process.exit(process.exitCode ?? 0);
  } catch (error) {
    console.error(error?.stack ?? String(error));
    cleanup();
    process.exit(1);
  }
}

/** VmRSS / VmHWM of a live process, in KiB. */
export function procMemory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name, text = status) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  let rollup = '';
  try {
    rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    // not Linux ≥ 4.14: no PSS
  }
  // anon: the process's own pages; pss: its share of all, file pages of the node binary split among the processes mapping them.
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM'), anonKiB: field('RssAnon'), pssKiB: field('Pss', rollup) };
}

/**
 * CPU time (ms) a process used, with that of its children it has reaped (and theirs): a bridge's own
 * work plus its CLIs and keepers once they exited. Linux /proc; clock ticks at the usual 100 Hz.
 */
export function procCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: fields 14-17 of stat(5), 11-14 after the name.
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** A wait before a reading (memory after idle, a settled bridge): at the smoke test's scale the figures mean nothing, so it is short. */
export const settle = (ms) => sleep(SCALE < 0.01 ? Math.min(ms, 100) : ms);

/** Resolves `promise` or rejects after `ms` with a message naming `what`. */
export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

/** ratio a/b formatted, or n/a. */
export function ratio(a, b, digits = 2) {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(digits)}×` : 'n/a';
}

/**
 * The closing line every scenario prints:
 * `[bench] <scenario> ours=… aisdk=… rawws=… ratio ours/aisdk=…`.
 * `results` values are numbers (shown with `unit`) or strings shown as-is;
 * `ratioOf` overrides the numbers the ratio is computed from.
 */
export function benchLine(scenario, results, unit, extra = '', ratioOf = results) {
  const digits = unit === 'rec/s' || unit === 'B' ? 0 : 1;
  const show = (v) => (typeof v === 'string' ? v : Number.isFinite(v) ? `${v.toFixed(digits)}${unit}` : 'n/a');
  console.log(
    `[bench] ${scenario} ours=${show(results.ours)} aisdk=${show(results.aisdk)} rawws=${show(results.rawws)} ` +
      `ratio ours/aisdk=${ratio(ratioOf.ours, ratioOf.aisdk)}${extra ? ` ${extra}` : ''}`,
  );
}

/** "met" / "NOT met" / "n/a" for a floor check whose inputs may be missing. */
export function floor(ok) {
  return ok === undefined ? 'n/a' : ok ? 'met' : 'NOT met';
}

/** A target that cannot run (yet) shows `skipped` or `failed` in the [bench] line (the reason is printed above it). */
export function skippedValue(reason) {
  return reason.startsWith('failed') ? 'failed' : 'skipped';
}

/**
 * Per-target measurement bookkeeping: `run(target, fn)` records fn()'s value;
 * a target that throws is reported as failed (the scenario then exits 1, after
 * still printing the other columns) and not retried.
 */
export function targetRunner(available) {
  const runs = { ours: [], aisdk: [], rawws: [] };
  const status = { ...available };
  return {
    runs,
    status,
    async run(target, fn) {
      if (status[target] !== true) return;
      try {
        runs[target].push(await fn());
      } catch (error) {
        status[target] = `failed: ${error?.message ?? error}`;
        process.exitCode = 1;
        console.log(`  ${target} FAILED: ${error?.stack ?? error}`);
      }
    },
  };
}

/** esbuild options every bench bundle shares: one ESM file for Node 20; ws is CommonJS, so the bundle gets a real `require` for its builtins. */
export const ESM_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['bufferutil', 'utf-8-validate'],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  absWorkingDir: REPO,
  logLevel: 'silent',
};
