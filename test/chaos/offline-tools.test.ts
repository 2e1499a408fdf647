// The offline tools in bounded memory (issue 15 item 6): a journal of hundreds
// of MiB (HB_OFFLINE_MIB, default 400), written to disk by a streaming
// generator with the journal line encoders, through `replay --check`,
// `inspect`, plain `replay`, `replay --timeline` and `view` (its own bounds,
// for its kept detail and its page: docs/viewer.md) as real processes. Each
// must give the right summary (every record, no gap, every turn, every host
// tool call) and peak under 100 MiB RSS: its own report at exit
// (HARNESS_BRIDGE_PEAK_RSS=1: process.resourceUsage().maxRSS) and
// /proc/<pid>/status VmHWM polled while it runs, the larger of the two.
// Before streaming, a 600 MiB journal peaked at 2.6 GB (--check) / 1.3 GB
// (inspect) and a 1 GiB file could not be read at all. Heavy pass (~1-3 min).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSource, translateRecords } from '../../host/replay/index.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { writeBigJournal, type BigJournal } from '../fixtures/big-journal.ts';
import { cliPath } from '../host/cli/cli-helpers.ts';

const mib = Number(process.env.HB_OFFLINE_MIB ?? 400);
const boundMiB = 100;
/** `view` keeps bounded detail (docs/viewer.md) on top of what replay streams: its own bound, and one for the page. */
const viewBoundMiB = 160;
const pageBoundBytes = 32e6;
let pageBytes = 0;
const dir = mkdtempSync(join(tmpdir(), 'hb-offline-tools-'));
const stateDir = join(dir, 'state');
const journalPath = join(stateDir, 'journal.ndjson');
let journal: BigJournal;
let partsPerTurn: number;
const peaks: Record<string, number> = {};
const seconds: Record<string, number> = {};
const started = Date.now();

beforeAll(() => {
  const free = statfsSync(tmpdir());
  const freeMiB = (free.bavail * free.bsize) / 2 ** 20;
  if (freeMiB < mib + 1024) throw new Error(`offline-tools: ${tmpdir()} has ${freeMiB.toFixed(0)} MiB free; the test writes ${mib} MiB (set HB_OFFLINE_MIB lower)`);
  mkdirSync(stateDir);
  // What one turn of the generated shape translates to (all turns have the same shape).
  const small = join(dir, 'one-turn.ndjson');
  const one = writeBigJournal(small, 1);
  const source = loadSource(small);
  partsPerTurn = translateRecords(fixtureAdapter(), source.kind === 'journal' ? source.records.map((entry) => entry.record) : []).parts.length / one.turns;
  rmSync(small);
  const t0 = Date.now();
  journal = writeBigJournal(journalPath, mib * 2 ** 20);
  seconds.write = (Date.now() - t0) / 1000;
  expect(statSync(journalPath).size).toBe(journal.bytes);
}, 600_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  const peak = (name: string) => (peaks[name] === undefined ? '?' : (peaks[name]! / 1024).toFixed(1));
  console.log(
    `[figures] offline-tools file=${journal ? (journal.bytes / 2 ** 20).toFixed(0) : '?'}MiB records=${journal?.records ?? '?'} ` +
      `replay-check-peak=${peak('check')}MiB inspect-peak=${peak('inspect')}MiB replay-peak=${peak('replay')}MiB timeline-peak=${peak('timeline')}MiB (bound ${boundMiB} MiB) ` +
      `view-peak=${peak('view')}MiB (bound ${viewBoundMiB} MiB) view-page=${(pageBytes / 1e6).toFixed(1)}MB ` +
      `seconds={write:${seconds.write?.toFixed(1)},check:${seconds.check?.toFixed(1)},inspect:${seconds.inspect?.toFixed(1)},replay:${seconds.replay?.toFixed(1)},timeline:${seconds.timeline?.toFixed(1)},view:${seconds.view?.toFixed(1)}} ` +
      `wall=${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
});

type Run = { code: number | null; stderr: string; stdout: string; lines: number; peakKiB: number };

/**
 * Runs the CLI with `args`; stdout is kept only if `keep` (else its lines are
 * counted as they stream by). Peak RSS: the CLI's own report at exit and
 * VmHWM polled meanwhile, the larger.
 */
function runMeasured(name: string, args: string[], keep: boolean): Promise<Run> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '', HARNESS_BRIDGE_PEAK_RSS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let polled = 0;
    const poll = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (hwm) polled = Math.max(polled, Number(hwm[1]));
      } catch {
        // exited between polls
      }
    }, 100);
    let stdout = '';
    let lines = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, i + 1)) lines++;
      if (keep) stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 900_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      const reported = /\[peak-rss\] (\d+) KiB/.exec(stderr);
      const peakKiB = Math.max(polled, reported ? Number(reported[1]) : 0);
      peaks[name] = peakKiB;
      seconds[name] = (Date.now() - t0) / 1000;
      resolve({ code, stdout, lines, peakKiB, stderr: stderr.replace(/\[peak-rss\] \d+ KiB\n/, '') });
    });
  });
}

function expectBounded(run: Run, what: string): void {
  expect(run.peakKiB, `${what}: the peak RSS was measured`).toBeGreaterThan(10_000);
  expect(run.peakKiB / 1024, `${what}: peak RSS in MiB, reading ${(journal.bytes / 2 ** 20).toFixed(0)} MiB`).toBeLessThanOrEqual(boundMiB);
}

describe('offline tools on a large journal', () => {
  it('replay --check: every record, no gap, every turn and host tool call, in bounded memory', { timeout: 900_000 }, async () => {
    const run = await runMeasured('check', ['replay', journalPath, '--check'], true);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      `ok: ${journal.records} records, ${journal.records} deliveries, ${journal.turns} turns, ${journal.toolCalls} host tool calls; seq continuous, one owner at a time, turn boundaries hold, every tool call answered once\n`,
    );
    expectBounded(run, 'replay --check');
  });

  it('inspect: the journal healthy, first..last seq, no gap, every turn ended, in bounded memory', { timeout: 900_000 }, async () => {
    const run = await runMeasured('inspect', ['inspect', stateDir, '--json'], true);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { journal: Record<string, unknown>; turns: Array<{ status: string; rerun: boolean }> };
    expect(report.journal).toEqual({
      journalId: journal.journalId,
      records: journal.records,
      firstSeq: 1,
      lastSeq: journal.records,
      bytes: journal.bytes,
      tornTail: false,
      gaps: 0,
      healthy: true,
      problems: [],
    });
    expect(report.turns).toHaveLength(journal.turns);
    expect(report.turns.every((turn) => turn.status === 'ended' && !turn.rerun)).toBe(true);
    expectBounded(run, 'inspect');
  });

  it('replay (the parts, streamed out): every turn translated, in bounded memory', { timeout: 900_000 }, async () => {
    const run = await runMeasured('replay', ['replay', journalPath], false);
    expect(run.code, run.stderr).toBe(0);
    const parts = partsPerTurn * journal.turns;
    expect(run.stderr.trim()).toBe(`${parts} parts from ${journal.records} records (journal, adapter fixture)`);
    expect(run.lines).toBe(parts);
    expectBounded(run, 'replay');
  });

  it('view: one page, every record counted, bounded detail, in bounded memory', { timeout: 900_000 }, async () => {
    const page = join(dir, 'view.html');
    const run = await runMeasured('view', ['view', stateDir, '--out', page], true);
    expect(run.code, run.stderr).toBe(0);
    pageBytes = statSync(page).size;
    expect(run.stdout).toBe(`wrote ${page} (${pageBytes.toLocaleString('en-US')} bytes): open it in a browser\n`);
    expect(pageBytes).toBeLessThanOrEqual(pageBoundBytes);
    const html = readFileSync(page, 'utf8');
    const data = JSON.parse(/<script id="view-data" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!) as {
      counts: { records: number; parts: number; turns: number; hostCalls: number; findings: number };
      bound: { kept: number; maxKept: number };
    };
    expect(data.counts).toMatchObject({ records: journal.records, parts: partsPerTurn * journal.turns, turns: journal.turns, hostCalls: journal.toolCalls, findings: 0 });
    expect(data.bound.kept).toBeLessThanOrEqual(data.bound.maxKept);
    expect(run.peakKiB, 'view: the peak RSS was measured').toBeGreaterThan(10_000);
    expect(run.peakKiB / 1024, `view: peak RSS in MiB, reading ${(journal.bytes / 2 ** 20).toFixed(0)} MiB`).toBeLessThanOrEqual(viewBoundMiB);
  });

  it('replay --timeline: a row per record, in bounded memory', { timeout: 900_000 }, async () => {
    const run = await runMeasured('timeline', ['replay', journalPath, '--timeline'], false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.lines).toBe(journal.records + 1); // the journal's header row, then one row per record
    expectBounded(run, 'replay --timeline');
  });
});
