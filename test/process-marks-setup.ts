// vitest setupFile: every test file ends by counting the processes it started (issue 40 item 6: no
// process outlives its session). It marks this worker's environment before the file runs
// (HARNESS_BRIDGE_PROCESS_MARK, unique per file), so every process the file starts carries the mark: the
// sandbox's bridge, its CLIs and keepers, the jail helper, bubblewrap and sandbox-runtime's socat
// relays inherit it. After the file's own afterAll hooks (this one was registered first, so it runs
// last), processes still carrying it are listed (scripts/leftover-processes.mjs), given a bounded
// number of looks to finish exiting, then SIGKILLed so they cannot pile up, and listed as a warning.
// With HARNESS_BRIDGE_LEFTOVERS=fail an E2E or chaos file fails with the list instead. Processes in
// Docker containers do not inherit the mark: the Docker provider's own tests count containers.
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { killAll, leftoverProcesses, PROCESS_MARK_ENV } from '../scripts/leftover-processes.mjs';

const mark = `${process.pid}-${randomBytes(6).toString('hex')}`;
process.env[PROCESS_MARK_ENV] = mark;

/** Files whose leftovers fail the file with HARNESS_BRIDGE_LEFTOVERS=fail (the heavy lane: real CLIs, jails, keepers). */
const strict = (path: string): boolean => /[/\\]test[/\\](e2e|chaos)[/\\]/.test(path);

// eslint-disable-next-line no-empty-pattern -- vitest reads the first parameter as fixtures and wants a pattern
afterAll(async ({}, suite) => {
  const path = suite.file?.filepath ?? (suite as { filepath?: string }).filepath ?? '';
  // Up to 100 looks 100 ms apart: a stop's grace period is a few seconds at most (a hang guard, not a timing).
  const left = await leftoverProcesses(mark, { polls: 100, exclude: [process.pid] });
  if (left.length === 0) return;
  killAll(left);
  const list = left.map((p) => `  ${p.pid} ${p.cmdline}`).join('\n');
  const message = `${left.length} process(es) this file started outlived it (killed now):\n${list}`;
  if (strict(path) && process.env.HARNESS_BRIDGE_LEFTOVERS === 'fail') throw new Error(message);
  console.warn(`[leftover-processes] ${path}: ${message}`);
}, 30_000);
