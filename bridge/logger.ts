// Structured logs for the bridge: pino to `bridge.log` in the state dir
// (sonic-boom, async), one child logger per subsystem, the token redacted, and
// optional forwarding of log events as `diagnostic` frames (the server decides
// whom to send them to). When forwarding is off a log line costs pino's own
// level check plus one boolean test here.
import { join } from 'node:path';
import pino from 'pino';
import * as z from 'zod';
import type { DiagnosticFrame, LogLevel } from '../protocol/v1/index.ts';
import { logFileName } from './log-file.ts';

export type Logger = pino.Logger;
export { logFileName };

const levelValues: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50 };

/** Keys pino puts on every line; everything else on the line becomes a diagnostic's attrs. */
const reservedKeys = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'subsystem']);

export type BridgeLogger = {
  readonly root: Logger;
  /** The logger for one subsystem (`server`, `journal`, ...); one per name, created once. */
  child(subsystem: string): Logger;
  /** Forward events at `level` or above to `send` (null: stop forwarding). */
  setForward(send: ((frame: DiagnosticFrame) => void) | null, level?: LogLevel): void;
  /** Write out everything buffered, synchronously (before process.exit). */
  flushSync(): void;
};

export type LoggerOptions = {
  /** The log file, or a state dir to put `bridge.log` in. */
  stateDir: string;
  /** Redacted from every line it would appear in (never logged on purpose either). */
  token?: string;
  /** File level; `HARNESS_BRIDGE_LOG_LEVEL` overrides in main. */
  level?: LogLevel;
};

type MetadataStream = {
  [key: symbol]: unknown;
  lastLevel: number;
  write(line: string): void;
};

export function createBridgeLogger(options: LoggerOptions): BridgeLogger {
  const fileLevel = levelValues[options.level ?? 'info'];
  const destination = pino.destination({ dest: join(options.stateDir, logFileName), sync: false, mode: 0o600, mkdir: false });
  // A log file that cannot be opened or written (state dir removed by destroy, disk full) must not
  // take the bridge down: report once on stderr and carry on without file logs.
  let reported = false;
  destination.on('error', (error: Error) => {
    if (reported) return;
    reported = true;
    process.stderr.write(`harness-bridge: logging to ${logFileName} failed: ${error.message}\n`);
  });
  const token = options.token !== undefined && options.token.length > 0 ? options.token : undefined;

  let forward: ((frame: DiagnosticFrame) => void) | null = null;
  let forwardLevel = Number.POSITIVE_INFINITY;
  let forwarding = false; // re-entrancy guard: sending a diagnostic must not forward its own logs

  // pino fills lastLevel before each write when the stream asks for metadata
  // (pino.symbols.needsMetadataGsym), which is how multistream routes by level.
  const tee: MetadataStream = {
    [Symbol.for('pino.metadata')]: true,
    lastLevel: 0,
    write(line: string) {
      const scrubbed = token !== undefined && line.includes(token) ? line.split(token).join('[Redacted]') : line;
      if (tee.lastLevel >= fileLevel) destination.write(scrubbed);
      if (forward !== null && tee.lastLevel >= forwardLevel && !forwarding) {
        const frame = diagnosticFromLine(scrubbed);
        if (frame === null) return;
        forwarding = true;
        try {
          forward(frame);
        } finally {
          forwarding = false;
        }
      }
    },
  };

  const root = pino(
    {
      level: levelName(fileLevel),
      base: { pid: process.pid },
      redact: {
        paths: ['token', '*.token', 'authorization', '*.authorization', 'headers.authorization', '*.headers.authorization'],
        censor: '[Redacted]',
      },
    },
    tee,
  );
  const children = new Map<string, Logger>();

  function applyLevel(): void {
    const name = levelName(Math.min(fileLevel, forwardLevel));
    root.level = name;
    for (const child of children.values()) child.level = name;
  }

  return {
    root,
    child(subsystem) {
      let child = children.get(subsystem);
      if (child === undefined) {
        child = root.child({ subsystem });
        children.set(subsystem, child);
      }
      return child;
    },
    setForward(send, level = 'info') {
      forward = send;
      forwardLevel = send === null ? Number.POSITIVE_INFINITY : levelValues[level];
      applyLevel();
    },
    flushSync() {
      try {
        destination.flushSync();
      } catch {
        // sonic-boom throws if the fd is not open yet (an exit right after start); nothing buffered to lose then
      }
    },
  };
}

/** pino's numeric level as a protocol level name (fatal counts as error). */
function levelName(value: number): LogLevel {
  if (value <= 10) return 'trace';
  if (value <= 20) return 'debug';
  if (value <= 30) return 'info';
  if (value <= 40) return 'warn';
  return 'error';
}

/** The fields of a pino line we read; the rest become attrs. */
const pinoLineSchema = z.looseObject({ level: z.number(), time: z.number(), msg: z.string().optional(), subsystem: z.string().optional() });

/** A diagnostic frame from one pino line (already redacted). Null if the line is not one of pino's. */
function diagnosticFromLine(line: string): DiagnosticFrame | null {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return null; // pino always writes whole JSON lines; nothing to forward otherwise
  }
  const parsed = pinoLineSchema.safeParse(json);
  if (!parsed.success) return null;
  const fields = parsed.data;
  let attrs: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(fields)) {
    if (reservedKeys.has(key)) continue;
    attrs ??= {};
    attrs[key] = value;
  }
  return {
    type: 'diagnostic',
    level: levelName(fields.level),
    subsystem: fields.subsystem ?? 'bridge',
    message: fields.msg ?? '',
    ...(attrs === undefined ? {} : { attrs }),
    ts: fields.time,
  };
}
