// CI only checks that the benchmark scripts still run (timings on shared CI
// machines are noise; `npm run bench` is for measuring):
// each scenario at a tiny scale must exit 0 and print its `[bench]` line.
// No timing is asserted.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCENARIOS = ['size', 'cold-start', 'live', 'replay', 'latency', 'rss', 'sessions', 'host-channel', 'bootstrap', 'survive', 'exec-transport'];

function runScenario(name: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(HERE, `${name}.mjs`)],
      {
        env: { ...process.env, BENCH_SCALE: '0.002', BENCH_REPEATS: '1', BENCH_TIMEOUT_MS: '50000' },
        timeout: 55_000,
        maxBuffer: 16 << 20,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('bench scripts run', () => {
  for (const name of SCENARIOS) {
    it(`${name} exits 0 and prints its [bench] line`, async () => {
      const { code, stdout, stderr } = await runScenario(name);
      expect(code, `${name} failed:\n${stdout}\n${stderr}`).toBe(0);
      expect(stdout).toMatch(new RegExp(`^\\[bench\\] ${name} ours=\\S+ aisdk=\\S+ rawws=\\S+ ratio ours/aisdk=`, 'm'));
    }, 60_000);
  }
});
