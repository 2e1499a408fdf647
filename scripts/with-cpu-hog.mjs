#!/usr/bin/env node
// Runs a command with a CPU hog alongside: HB_CPU_HOG_WORKERS (default 2)
// worker threads spin in busy loops for as long as the command runs, so a
// 2-core machine is saturated the way a CI box sharing its cores is. CI runs
// the chaos suite this way once (npm run test:chaos-hog) to prove its lanes
// count schedules, not seconds. The command's exit code is ours; the hog is
// stopped however the command ends.
// Usage: node scripts/with-cpu-hog.mjs <command> [args…]   (e.g. vitest run test/chaos/chaos.test.ts)
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
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

// Each worker spins and counts its loops; every second it posts how many it
// managed, so the summary shows the hog really ran (and how much CPU it got).
const spin = `
const { parentPort } = require('node:worker_threads');
let spins = 0;
let next = Date.now() + 1000;
for (;;) {
  for (let i = 0; i < 1e6; i++) spins += i & 1;
  const now = Date.now();
  if (now >= next) { parentPort.postMessage(spins); spins = 0; next = now + 1000; }
}`;
const workers = [];
let totalSpins = 0;
for (let i = 0; i < count; i++) {
  const worker = new Worker(spin, { eval: true });
  worker.on('message', (n) => (totalSpins += n));
  worker.unref();
  workers.push(worker);
}
const started = Date.now();
process.stderr.write(`[cpu-hog] ${count} busy workers on ${cpus().length} cores while: ${argv.join(' ')}\n`);

// `vitest …` and other package binaries resolve as in an npm script, also when run by hand.
const bin = join(fileURLToPath(new URL('..', import.meta.url)), 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` };
const child = spawn(argv[0], argv.slice(1), { stdio: 'inherit', env, shell: process.platform === 'win32' });
const stop = async () => Promise.all(workers.map((worker) => worker.terminate()));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('error', async (error) => {
  await stop();
  process.stderr.write(`with-cpu-hog: cannot run ${argv[0]}: ${error.message}\n`);
  process.exit(127);
});
child.on('exit', async (code, signal) => {
  await stop();
  const seconds = (Date.now() - started) / 1000;
  process.stderr.write(`[cpu-hog] stopped after ${seconds.toFixed(1)} s: ${count} workers, ${(totalSpins / 1e6 / seconds).toFixed(1)} M spins/s in all\n`);
  process.exit(code ?? (signal ? 1 : 0));
});
