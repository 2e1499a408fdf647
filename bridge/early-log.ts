// The bridge's `main` log from its first line on: calls made before pino is loaded (stage 1, and
// stage 2 until it has created the logger) are queued, then replayed in order into the logger's
// `main` child, which takes every later call directly. Log files and levels are logger.ts's.
import type { BridgeLogger, Logger } from './logger.ts';

export type EarlyLogLevel = 'info' | 'warn' | 'fatal';
type EarlyLogCall = { level: EarlyLogLevel; obj: object; msg: string };

export class EarlyLog {
  readonly #queue: EarlyLogCall[] = [];
  #logger: BridgeLogger | null = null;
  #main: Logger | null = null;

  write(level: EarlyLogLevel, obj: object, msg: string): void {
    if (this.#main !== null) this.#main[level](obj, msg);
    else this.#queue.push({ level, obj, msg });
  }

  /** Stage 2 created the logger: the queued calls go to its `main` child, in order, and so does every later one. Returns that child. */
  loaded(logger: BridgeLogger): Logger {
    this.#logger = logger;
    const main = logger.child('main');
    this.#main = main;
    for (const call of this.#queue.splice(0)) main[call.level](call.obj, call.msg);
    return main;
  }

  /** The logger once loaded, else null (the crash handlers and a fatal journal error flush it before exiting). */
  get logger(): BridgeLogger | null {
    return this.#logger;
  }
}
