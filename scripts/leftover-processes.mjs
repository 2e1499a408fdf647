#!/usr/bin/env node
// Processes the test suite started that are still running (issue 40 item 6: no process outlives its
// session). Every test file's processes carry HARNESS_BRIDGE_PROCESS_MARK in their environment: the vitest
// setup file (test/process-marks-setup.ts) sets it in the worker, and the local sandbox, the bridge,
// the jail helper (bubblewrap, sandbox-runtime's socat relays), keepers and CLIs inherit it. Reads
// /proc/<pid>/environ, so run it as the user that ran the tests (root in CI).
//
//   node scripts/leftover-processes.mjs [--mark VALUE] [--wait-polls N] [--kill]
//
// Without --mark, any process carrying the variable counts (the end of a CI run). --wait-polls N
// looks again up to N times, 100 ms apart, while some are still exiting (a hang guard, not a
// timing). Prints one JSON line per survivor and exits 1 if any is left; with --kill it SIGKILLs them
// after printing (the suite's end must not leave them to the next run either).
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const PROCESS_MARK_ENV = 'HARNESS_BRIDGE_PROCESS_MARK';

/** Processes whose environment has PROCESS_MARK_ENV (equal to `mark` when given); never this process. */
export function markedProcesses(mark) {
  const found = [];
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return found; // no procfs (not Linux): nothing to count
  }
  const wanted = mark === undefined || mark === null ? `${PROCESS_MARK_ENV}=` : `${PROCESS_MARK_ENV}=${mark}`;
  for (const name of pids) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const hit = environ.split('\0').some((entry) => (mark === undefined || mark === null ? entry.startsWith(wanted) : entry === wanted));
    if (!hit) continue;
    let cmdline = '';
    let state = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter(Boolean).join(' ');
      state = /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'latin1'))?.[1] ?? '';
    } catch {
      continue;
    }
    if (state === 'Z') continue; // a zombie holds no resources; its parent reaps it
    const markValue = environ.split('\0').find((entry) => entry.startsWith(`${PROCESS_MARK_ENV}=`))?.slice(PROCESS_MARK_ENV.length + 1) ?? '';
    found.push({ pid, cmdline: cmdline.slice(0, 300), mark: markValue });
  }
  return found;
}

/** markedProcesses, looked at again (up to `polls` times, `everyMs` apart) while some remain. */
export async function leftoverProcesses(mark, { polls = 0, everyMs = 100, exclude = [] } = {}) {
  const skip = new Set(exclude);
  let left = markedProcesses(mark).filter((p) => !skip.has(p.pid));
  for (let i = 0; i < polls && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    left = markedProcesses(mark).filter((p) => !skip.has(p.pid));
  }
  return left;
}

export function killAll(processes) {
  for (const { pid } of processes) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const opt = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const polls = Number(opt('--wait-polls') ?? 50);
  // The shell and npm that run this script may carry the mark (a suite run from a marked process): not leftovers.
  const left = await leftoverProcesses(opt('--mark'), { polls, exclude: [process.ppid] });
  for (const p of left) process.stdout.write(`${JSON.stringify(p)}\n`);
  process.stdout.write(`leftover-processes: ${left.length} process(es) of the test suite still running\n`);
  if (argv.includes('--kill')) killAll(left);
  process.exit(left.length > 0 ? 1 : 0);
}
