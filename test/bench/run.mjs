#!/usr/bin/env node
// Runs benchmark scenarios by name, one child process each, in order:
//   node test/bench/run.mjs [scenario…]      (default: all)
//   BENCH_SCALE=0.1 node test/bench/run.mjs live replay
// Env: BENCH_SCALE (record counts ×, default 1), BENCH_REPEATS (override repeats).
// Ends with every scenario's `[bench]` line again, as a summary; exits 1 if
// any scenario failed.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const SCENARIOS = ['size', 'cold-start', 'live', 'replay', 'latency', 'rss', 'sessions', 'host-channel', 'bootstrap', 'isolation', 'first-output', 'survive', 'docker-snapshot', 'exec-transport'];
const SCENARIO_TIMEOUT_MS = 600_000;

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !SCENARIOS.includes(name));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  process.exit(2);
}
const selected = asked.length > 0 ? asked : SCENARIOS;

let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    current?.kill(signal);
    process.exit(130);
  });
}

const summary = [];
let failed = 0;
const started = Date.now();
for (const name of selected) {
  const t0 = Date.now();
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(HERE, `${name}.mjs`)], { stdio: ['ignore', 'pipe', 'inherit'] });
    current = child;
    const timer = setTimeout(() => child.kill('SIGTERM'), SCENARIO_TIMEOUT_MS);
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      buffer += chunk.toString();
      let nl;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith('[bench] ')) summary.push(line);
      }
    });
    child.on('exit', (exitCode, signal) => {
      clearTimeout(timer);
      resolve(exitCode ?? (signal ? 1 : 0));
    });
  });
  current = undefined;
  if (code !== 0) {
    failed++;
    summary.push(`[bench] ${name} FAILED (exit ${code})`);
  }
  console.log(`# ${name} took ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}
console.log(`# summary (${((Date.now() - started) / 1000).toFixed(0)} s)`);
for (const line of summary) console.log(line);
process.exit(failed > 0 ? 1 : 0);
