// The pid record of a session: one "pid starttime" line per spawned process
// group, appended to a small file in the session dir so a resumed provider
// instance (another host process) can still stop what an earlier one spawned.
// The start time (from /proc) guards against killing a reused pid.
import { appendFile, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { errnoCode } from './errno.ts';

/** How long a group gets between SIGTERM and SIGKILL. */
export const maxKillGraceMs = 2_000;
/** Poll interval while waiting for a process we did not spawn (no exit event) to go. */
const exitPollMs = 20;

/** Field 22 of /proc/<pid>/stat (start time in clock ticks); undefined if not readable. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parens: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch (error) {
    // Gone, or no /proc on this platform: the caller treats both as "unknown".
    void error;
    return undefined;
  }
}

/** Field 3 of /proc/<pid>/stat (R, S, Z ...); undefined if not readable. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch (error) {
    // Gone, or no /proc on this platform.
    void error;
    return undefined;
  }
}

/** Alive and not a zombie: a zombie whose parent is a slow reaper (a container's init) is as good as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return errnoCode(error) === 'EPERM';
  }
  return processState(pid) !== 'Z';
}

/** Signals a whole process group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if (errnoCode(error) !== 'ESRCH') throw error;
  }
}

/** Past this size the record is compacted to the processes still running (every run() adds a line). */
export const maxPidRecordBytes = 64 * 1024;

export async function recordPid(pidFile: string, pid: number): Promise<void> {
  const line = `${pid} ${processStartTime(pid) ?? '-'}\n`;
  await appendFile(pidFile, line);
  const size = (await stat(pidFile)).size;
  if (size > maxPidRecordBytes) {
    const kept = (await readRecords(pidFile)).filter(stillOurs);
    // writeFile truncates in place (same inode), which the read-only bind in bwrap mode needs.
    await writeFile(pidFile, kept.map((record) => `${record.pid} ${record.startTime}\n`).join(''));
  }
}

interface PidRecord {
  pid: number;
  startTime: string;
}

async function readRecords(pidFile: string): Promise<PidRecord[]> {
  let text: string;
  try {
    text = await readFile(pidFile, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return [];
    throw error;
  }
  const records: PidRecord[] = [];
  for (const line of text.split('\n')) {
    const [pidText, startTime] = line.trim().split(' ');
    const pid = Number(pidText);
    if (Number.isInteger(pid) && pid > 1 && startTime) records.push({ pid, startTime });
  }
  return records;
}

/** The recorded group leader is still the process we spawned (same pid, same start time). */
function stillOurs(record: PidRecord): boolean {
  const now = processStartTime(record.pid);
  if (now === undefined) return isAlive(record.pid) && record.startTime === '-';
  return now === record.startTime;
}

async function waitGone(pids: number[], deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (pids.some(isAlive) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, exitPollMs));
  }
}

/**
 * SIGTERM every recorded group that is still ours, SIGKILL after the grace
 * period, then empty the record. Truncates in place: in bwrap mode the file is
 * bind-mounted read-only into the sandbox, so its inode must not change.
 */
export async function killRecorded(pidFile: string): Promise<void> {
  const live = (await readRecords(pidFile)).filter(stillOurs).map((record) => record.pid);
  for (const pid of live) signalGroup(pid, 'SIGTERM');
  await waitGone(live, maxKillGraceMs);
  for (const pid of live) signalGroup(pid, 'SIGKILL');
  await waitGone(live, maxKillGraceMs);
  try {
    await truncate(pidFile, 0);
  } catch (error) {
    if (errnoCode(error) !== 'ENOENT') throw error;
  }
}

/**
 * Bridge keepers still running in a local sandbox after its recorded groups
 * are gone: a keeper (launch `survive`) runs in a session of its own so its
 * CLI outlives a SIGKILLed bridge, so no recorded group holds it. Found by
 * their working directory (a keeper runs in its keeper dir, under `dir`) and
 * their `--keeper` argument; each comes with its CLI's group from
 * `cli.pid` in that dir. Nothing else that merely has its cwd there (a
 * developer's shell) is touched. Reads /proc; elsewhere there is nothing to find.
 */
export async function residentKeepers(given: string): Promise<Array<{ pid: number; cwd: string; cliGroup: number | undefined }>> {
  const { readdir, readFile, readlink, realpath } = await import('node:fs/promises');
  const dir = await realpath(given).catch(() => given); // /proc shows resolved paths
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found: Array<{ pid: number; cwd: string; cliGroup: number | undefined }> = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cwd: string;
    let argv: string[];
    try {
      cwd = await readlink(`/proc/${entry}/cwd`);
      argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
    } catch {
      continue; // gone, or not ours to read
    }
    const path = cwd.endsWith(' (deleted)') ? cwd.slice(0, -' (deleted)'.length) : cwd; // a removed dir still pins its residents
    if (!(path === dir || path.startsWith(`${dir}/`)) || !argv.includes('--keeper')) continue;
    const cli = Number((await readFile(`${path}/cli.pid`, 'utf8').catch(() => '')).trim());
    found.push({ pid: Number(entry), cwd: path, cliGroup: Number.isInteger(cli) && cli > 0 ? cli : undefined });
  }
  return found;
}

/**
 * Keepers waiting for a CLI in a bridge's state dir (started ahead, bridge/survive/spare-keeper.ts):
 * their cwd is `<stateDir>/keepers` itself, where a working keeper's is its keeper dir.
 */
export async function waitingKeepers(stateDir: string): Promise<number[]> {
  const { realpath } = await import('node:fs/promises');
  const root = `${stateDir}/keepers`;
  const resolved = await realpath(root).catch(() => root);
  return (await residentKeepers(root)).filter((keeper) => keeper.cwd === resolved).map((keeper) => keeper.pid);
}

/** SIGKILLs every keeper still running in `dir` and its CLI's group (residentKeepers), and waits for them to go. */
export async function killResidentKeepers(dir: string): Promise<void> {
  const keepers = await residentKeepers(dir);
  for (const { pid, cliGroup } of keepers) {
    for (const target of cliGroup === undefined ? [pid] : [-cliGroup, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone (or no longer ours to signal)
      }
    }
  }
  await waitGone(keepers.flatMap(({ pid, cliGroup }) => (cliGroup === undefined ? [pid] : [pid, cliGroup])), maxKillGraceMs);
}
