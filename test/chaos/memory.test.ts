// Bounded memory (issue 8): N records through the bridge to a slow host. The
// fixture CLI prints N short JSON lines as fast as the pipe takes them; a host
// process (memory-host.ts: one BridgeChannel, async onRecords that sleeps per
// batch) consumes them. The host runs as an esbuild bundle of memory-host.ts,
// as an application ships, not under tsx: tsx's own ~35 MiB would inflate the
// 10k baseline and flatter the ratio. Peak RSS (VmHWM) of the bridge and of the host process
// at the large N must stay within 1.2x of their peaks at 10k, measured first in
// the same run. CI runs 1M when it fits (see the figures line for the time);
// HB_MEMORY_RECORDS overrides N, HB_CHAOS_SCALE scales it. Diagnosis knobs:
// HB_MEMORY_INBOUND_FRAMES / HB_MEMORY_INBOUND_BYTES (the host channel's inbound queue limits),
// HB_MEMORY_TRACE=1 (the host prints its memory breakdown at peak RSS to stderr),
// HB_MEMORY_BRIDGE_NODE_OPTIONS / HB_MEMORY_HOST_NODE_OPTIONS (e.g. --max-semi-space-size=1),
// HB_MEMORY_HOST_YOUNG_GEN=grow (the host process skips its opt-in limitYoungGeneration()).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, stop as stopEsbuild } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureLaunch, repoRoot, startBridge, tempDir, type RunningBridge } from '../bridge/helpers.ts';
import { chaosScale } from './chaos-kit.ts';

const small = 10_000;
const large = Number(process.env.HB_MEMORY_RECORDS ?? Math.round(1_000_000 * chaosScale));
const delayMs = Number(process.env.HB_MEMORY_DELAY_MS ?? 1);
const hostSource = fileURLToPath(new URL('./memory-host.ts', import.meta.url));
const hostBundle = join(tempDir('hb-memory-host-'), 'memory-host.mjs');
const bridges: RunningBridge[] = [];
const results: Record<string, { bridgeKiB: number; hostKiB: number; seconds: number; lines: number }> = {};

afterAll(async () => {
  for (const bridge of bridges) await bridge.kill();
  await stopEsbuild(); // its service process, which the bundle of memory-host.ts started, would outlive the file
  const s = results.small;
  const l = results.large;
  if (s && l) {
    console.log(
      `[figures] memory records=${large} vs ${small} bridge-peak=${(l.bridgeKiB / 1024).toFixed(1)}MiB vs ${(s.bridgeKiB / 1024).toFixed(1)}MiB (${(l.bridgeKiB / s.bridgeKiB).toFixed(2)}x) ` +
        `host-peak=${(l.hostKiB / 1024).toFixed(1)}MiB vs ${(s.hostKiB / 1024).toFixed(1)}MiB (${(l.hostKiB / s.hostKiB).toFixed(2)}x) ` +
        `host-young-gen=${process.env.HB_MEMORY_HOST_YOUNG_GEN === 'grow' ? 'default' : 'limited (opt-in limitYoungGeneration)'} bound=1.2x ${l.bridgeKiB / s.bridgeKiB <= 1.2 && l.hostKiB / s.hostKiB <= 1.2 ? 'met' : 'NOT MET'} host=bundled ` +
        `time=${l.seconds.toFixed(1)}s vs ${s.seconds.toFixed(1)}s (${Math.round(l.lines / l.seconds)} records/s through a slow host) gaps=0 duplicates=0`,
    );
  }
}, 60_000);

const hwmOf = (pid: number): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);

async function run(name: 'small' | 'large', lines: number): Promise<void> {
  const bridgeNodeOptions = process.env.HB_MEMORY_BRIDGE_NODE_OPTIONS;
  const bridge = await startBridge(bridgeNodeOptions ? { env: { NODE_OPTIONS: bridgeNodeOptions } } : {});
  bridges.push(bridge);
  const started = Date.now();
  const launch = fixtureLaunch(['--json', '--lines', String(lines), '--no-session']);
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  if (process.env.HB_MEMORY_HOST_NODE_OPTIONS) env.NODE_OPTIONS = process.env.HB_MEMORY_HOST_NODE_OPTIONS;
  const child = spawn(process.execPath, [hostBundle, bridge.url, bridge.token, JSON.stringify(launch), String(delayMs)], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let bridgePeak = 0;
  const sampler = setInterval(() => {
    bridgePeak = Math.max(bridgePeak, hwmOf(bridge.proc.pid!));
  }, 200);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearInterval(sampler);
  bridgePeak = Math.max(bridgePeak, hwmOf(bridge.proc.pid!));
  const final = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, number | boolean>).find((line) => line.done === true);
  expect(code, `host process exit (stderr: ${stderr.slice(-2000)})`).toBe(0);
  expect(final, 'host finished').toBeDefined();
  expect(final!.lines, 'every line once').toBe(lines);
  expect(final!.outOfOrder, 'in order').toBe(0);
  results[name] = { bridgeKiB: bridgePeak, hostKiB: Number(final!.hwmKiB), seconds: (Date.now() - started) / 1000, lines };
  await bridge.kill();
}

describe('bounded memory', () => {
  beforeAll(async () => {
    await build({
      entryPoints: [hostSource],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node18',
      outfile: hostBundle,
      external: ['bufferutil', 'utf-8-validate'],
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      logLevel: 'warning',
    });
    await run('small', small);
    await run('large', large);
  }, 420_000);

  it(`${large} records reach a slow host process through the bridge, every line once and in order; both peaks printed`, () => {
    expect(results.large?.lines).toBe(large);
    // Absolute guards beside the ratio below: a baseline that itself balloons must not pass by ratio alone (1M records of JSON is ~120 MiB).
    expect(results.large!.bridgeKiB, 'bridge peak').toBeLessThan(160 * 1024);
    expect(results.large!.hostKiB, 'host peak').toBeLessThan(192 * 1024);
  });

  // The bound, for both processes. What it took (figures in host/limits.ts and bridge/limits.ts): the bridge
  // reuses pipe staging, window blocks, frame buffers and disk-reader buffers, so no buffer that lives across
  // awaits is allocated per catch-up; the host converts frames to text on receipt and queues at most 64 KiB of
  // them before pausing the socket. Both keep V8's young generation at its initial size (the bridge always,
  // the host by the opt-in limitYoungGeneration()).
  it(`peak RSS at ${large} records is within 1.2x of the peak at ${small}, for the bridge and for the host`, () => {
    const s = results.small!;
    const l = results.large!;
    expect(l.bridgeKiB / s.bridgeKiB, `bridge peak ${l.bridgeKiB} KiB at ${large} vs ${s.bridgeKiB} KiB at ${small}`).toBeLessThanOrEqual(1.2);
    expect(l.hostKiB / s.hostKiB, `host peak ${l.hostKiB} KiB at ${large} vs ${s.hostKiB} KiB at ${small}`).toBeLessThanOrEqual(1.2);
  });
});
