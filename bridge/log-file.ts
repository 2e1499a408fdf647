// The bridge's log file (`bridge.log` in the state dir), and a line appender for a process that shares it
// without pino: a keeper's egress proxy, whose decisions on a kept CLI's connections belong beside the bridge's.
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const logFileName = 'bridge.log';

export type LineLog = { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };

/**
 * Appends pino-shaped lines (`level`, `time`, `pid`, `subsystem`, `msg`) to `stateDir`'s bridge.log, each one whole
 * append to the existing file; an Error field is written as its message and code. A line that finds no file (the session was destroyed) is dropped.
 */
export function appendingLog(stateDir: string, subsystem: string): LineLog {
  const file = join(stateDir, logFileName);
  const at = (level: number) => (obj: object, msg?: string) => {
    const fields = Object.fromEntries(Object.entries(obj).map(([key, value]) => [key, value instanceof Error ? { message: value.message, code: (value as NodeJS.ErrnoException).code } : value]));
    try {
      // Never created here (no O_CREAT): the bridge makes the file; one removed with its state dir stays removed.
      const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND);
      try {
        writeSync(fd, `${JSON.stringify({ level, time: Date.now(), pid: process.pid, subsystem, ...fields, msg })}\n`);
      } finally {
        closeSync(fd);
      }
    } catch {
      // no log any more (the state dir is being removed): nobody is left to read it
    }
  };
  return { info: at(30), warn: at(40), error: at(50) };
}
