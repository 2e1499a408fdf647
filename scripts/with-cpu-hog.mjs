#!/usr/bin/env node
// Runs a command with a CPU hog alongside, so the cores stay saturated while it runs, the way a CI box
// sharing its cores is. CI runs the chaos schedules this way (npm run test:chaos-hog) to prove they count
// schedules, not seconds. The command's exit code is ours; the hog is stopped however the command ends.
//
// The hog tops the machine up to saturation: HB_CPU_HOG_WORKERS (default 2) worker threads spin, at normal
// priority, for a share of every 20 ms, and every 250 ms that share grows by whatever the machine left idle
// (read from /proc/stat) or, with no core idle, shrinks. Alone with the command they spin nearly all the
// time, as a fixed hog would; beside other lanes that keep the cores busy already, they fade out and leave
// those lanes the cores instead of adding demand on top, and the command's processes wait behind those lanes.
// The summary line says how busy the machine was while the command ran, and how much of that was the hog.
// HB_CPU_HOG_FIXED=1 (or a system without /proc/stat) spins all the time instead.
// Usage: node scripts/with-cpu-hog.mjs <command> [args…]   (e.g. vitest run test/chaos/chaos.test.ts)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const argv = process.argv.slice(2);
if (argv.length === 0) {
  process.stderr.write('usage: node scripts/with-cpu-hog.mjs <command> [args…]\n');
  process.exit(2);
}
const count = Number(process.env.HB_CPU_HOG_WORKERS ?? 2);
if (!Number.isInteger(count) || count < 1) {
  process.stderr.write(`with-cpu-hog: HB_CPU_HOG_WORKERS must be a positive integer, got ${process.env.HB_CPU_HOG_WORKERS}\n`);
  process.exit(2);
}
const cores = availableParallelism();
const PERIOD_MS = 20;
const SAMPLE_MS = 250;

/** The machine's CPU time so far from /proc/stat's first line, in jiffies: all of it, and the idle part; null without it. */
function machineTimes() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    if (fields.length < 5 || fields.some((n) => !Number.isFinite(n))) return null;
    return { total: fields.reduce((a, b) => a + b, 0), idle: fields[3] + fields[4] };
  } catch {
    return null;
  }
}

// Shared with the workers: [0] the share of each period to spin, in thousandths.
const control = new Int32Array(new SharedArrayBuffer(8));
const fixed = process.env.HB_CPU_HOG_FIXED === '1' || machineTimes() === null;
Atomics.store(control, 0, fixed ? 1000 : 0); // the first sample fills what is idle

// Each worker spins for its share of every period, sleeps the rest, and posts how many loops it managed every
// second, so the summary shows the hog really ran.
const spin = `
const { parentPort, workerData } = require('node:worker_threads');
const control = new Int32Array(workerData);
let spins = 0;
let next = Date.now() + 1000;
for (;;) {
  const start = performance.now();
  const busyMs = (${PERIOD_MS} * Atomics.load(control, 0)) / 1000;
  while (performance.now() - start < busyMs) for (let i = 0; i < 1e5; i++) spins += i & 1;
  const rest = ${PERIOD_MS} - (performance.now() - start);
  if (rest > 0) Atomics.wait(control, 1, 0, rest);
  if (Date.now() >= next) { parentPort.postMessage(spins); spins = 0; next = Date.now() + 1000; }
}`;
const workers = [];
let totalSpins = 0;
for (let i = 0; i < count; i++) {
  const worker = new Worker(spin, { eval: true, workerData: control.buffer });
  worker.on('message', (n) => (totalSpins += n));
  worker.unref();
  workers.push(worker);
}

// The controller, every sample: cores the machine left idle are filled at once (each worker spins that much more,
// and a little over); while none were idle, each worker spins 2 % of the period less, so beside lanes that saturate
// the cores themselves the hog fades out (in ~12 s from full), and it comes back within a sample of them going idle.
const first = machineTimes();
const firstCpu = process.cpuUsage();
let last = first;
const sampler = fixed
  ? undefined
  : setInterval(() => {
      const times = machineTimes();
      if (times === null || last === null || times.total <= last.total) return;
      const idleCores = ((times.idle - last.idle) / (times.total - last.total)) * cores;
      const duty = Atomics.load(control, 0) / 1000;
      const next = idleCores > 0.02 ? duty + idleCores / count + 0.05 : duty - 0.02;
      Atomics.store(control, 0, Math.round(Math.min(1, Math.max(0, next)) * 1000));
      last = times;
    }, SAMPLE_MS);
sampler?.unref();

const started = performance.now();
process.stderr.write(
  `[cpu-hog] ${count} workers on ${cores} cores, ${fixed ? 'spinning all the time' : 'topping the machine up to saturation'}, while: ${argv.join(' ')}\n`,
);

// `vitest …` and other package binaries resolve as in an npm script, also when run by hand.
const bin = join(fileURLToPath(new URL('..', import.meta.url)), 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', env, shell: process.platform === 'win32' });
const stop = async () => {
  if (sampler) clearInterval(sampler);
  await Promise.all(workers.map((worker) => worker.terminate()));
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('error', async (error) => {
  await stop();
  process.stderr.write(`with-cpu-hog: cannot run ${argv[0]}: ${error.message}\n`);
  process.exit(127);
});
child.on('exit', async (code, signal) => {
  const end = machineTimes();
  const cpu = process.cpuUsage(firstCpu);
  await stop();
  const seconds = (performance.now() - started) / 1000;
  const hogCores = (cpu.user + cpu.system) / 1e6 / seconds;
  const busy =
    first !== null && end !== null && end.total > first.total ? `machine busy ${((1 - (end.idle - first.idle) / (end.total - first.total)) * cores).toFixed(2)} of ${cores} cores, ` : '';
  process.stderr.write(
    `[cpu-hog] stopped after ${seconds.toFixed(1)} s: ${busy}the hog ${hogCores.toFixed(2)} of them (${count} workers, ${(totalSpins / 1e6 / seconds).toFixed(1)} M spins/s in all)\n`,
  );
  process.exit(code ?? (signal ? 1 : 0));
});
