// One process as the supervisor tracks it (ProcEntry): its reuse identity across turns, whether
// its last output piece was `cont`, and a pty's current line for turnEnd matching. Spawning,
// reading and signalling the process are supervised-process.ts's; turns are supervisor.ts's.
import type { LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import { hashKey } from '../survive/keeper-dir.ts';
import type { OutputStream } from './output-line.ts';
import { StartGate } from './process-start.ts';
import type { ProcessEvents, SupervisedProcess } from './supervised-process.ts';

/** One spawned process and what the supervisor tracks about its output. */
export type ProcEntry = {
  proc: SupervisedProcess;
  lifetime: LaunchSpec['lifetime'];
  /** Identity for reuse across turns (argv, env, cwd, stdin, io). */
  key: string;
  /** The previous piece on this stream had cont:true, so the next piece is not a complete line. */
  cont: { stdout: boolean; stderr: boolean };
  /** pty only: text of the current line, for turnEnd matching. */
  ptyLine: string;
  ptyLineOverlong: boolean;
  /** launch `start`: the handshake still holding writes back (process-start.ts); null once done or without one. */
  gate: StartGate | null;
  /** The env launch `stdinSecrets` take values from when it is not the launch's own (a kept CLI's relayed MCP URL; an adopted CLI's MCP variables). */
  secretsEnv?: Record<string, string>;
};

/** What the supervisor does with an entry's process events. */
export type EntryHandlers = {
  line(entry: ProcEntry, stream: OutputStream, text: string, cont: boolean, off: number | undefined): void;
  chunk(entry: ProcEntry, text: string, off: number | undefined): void;
  exit(entry: ProcEntry, code: number | null, signal: string | null): void;
};

/** Event handlers for a process about to be spawned; `attach` completes the entry once it exists. */
export function newEntry(launch: LaunchSpec, handlers: EntryHandlers): { events: ProcessEvents; attach(proc: SupervisedProcess): ProcEntry } {
  let entry: ProcEntry | null = null;
  const events: ProcessEvents = {
    line: (stream, text, cont, off) => entry && handlers.line(entry, stream, text, cont, off),
    chunk: (text, off) => entry && handlers.chunk(entry, text, off),
    exit: (code, signal) => entry && handlers.exit(entry, code, signal),
  };
  return {
    events,
    attach: (proc) => {
      entry = {
        proc,
        lifetime: launch.lifetime,
        key: entryKey(launch),
        cont: { stdout: false, stderr: false },
        ptyLine: '',
        ptyLineOverlong: false,
        gate: launch.start && launch.lifetime === 'session' ? new StartGate(launch.start) : null,
      };
      return entry;
    },
  };
}

/**
 * pty only: hands `onLine` each line a pty chunk completes (one `\r` before the `\n` stripped),
 * for turnEnd matching. The current line is capped like a pipe line: one over `maxLineBytes`
 * is skipped whole.
 */
export function ptyLines(entry: Pick<ProcEntry, 'ptyLine' | 'ptyLineOverlong'>, text: string, maxLineBytes: number, onLine: (line: string) => void): void {
  let buf = entry.ptyLine + text;
  let start = 0;
  for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n', start)) {
    const overlong = entry.ptyLineOverlong;
    entry.ptyLineOverlong = false;
    let line = buf.slice(start, nl);
    start = nl + 1;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (!overlong) onLine(line);
  }
  buf = buf.slice(start);
  if (buf.length > maxLineBytes) {
    entry.ptyLineOverlong = true;
    buf = '';
  }
  entry.ptyLine = buf;
}

function processKey(launch: LaunchSpec): string {
  if (launch.reuseKey !== undefined) return JSON.stringify(['reuse-key', launch.reuseKey]);
  return JSON.stringify([launch.argv, launch.env ?? null, launch.cwd ?? null, launch.stdin, launch.io]);
}

/** A process entry's reuse identity: for a kept CLI its hash (saved in the keeper dir, so an adopting bridge can compare it without the env). */
export function entryKey(launch: LaunchSpec): string {
  return launch.survive === true ? `sha256:${hashKey(survivorKey(launch))}` : processKey(launch);
}

/**
 * A kept CLI's identity across bridge processes: the bridge's MCP endpoint variables are left out
 * (each bridge process has its own port and token, so an adopted CLI would otherwise never be reused).
 */
export function survivorKey(launch: LaunchSpec): string {
  if (launch.env === undefined) return processKey(launch);
  const env = { ...launch.env };
  delete env[MCP_ENV_V1.urlEnvVar];
  delete env[MCP_ENV_V1.tokenEnvVar];
  return processKey({ ...launch, env });
}
