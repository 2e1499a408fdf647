// SIGTERM and SIGINT stop the bridge through the server's stop sequence. Installed in stage 1,
// before the server exists: a signal that arrives before stage 2 connects the server is
// remembered and stops the bridge as soon as it is connected.
import type { EarlyLog } from './early-log.ts';
import type { BridgeServer } from './server/server.ts';

type Stoppable = Pick<BridgeServer, 'shutdown'>;

export class StopSignals {
  #server: Stoppable | null = null;
  #early: NodeJS.Signals | null = null;

  static install(log: EarlyLog): StopSignals {
    const signals = new StopSignals();
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      process.on(signal, () => {
        log.write('info', { signal }, 'signal: stopping');
        if (signals.#server !== null) void signals.#server.shutdown('stop');
        else signals.#early ??= signal;
      });
    }
    return signals;
  }

  private constructor() {}

  /** Stage 2, once the server is attached: signals stop it from now on, and one that came earlier stops it now. */
  connect(server: Stoppable): void {
    this.#server = server;
    if (this.#early !== null) void server.shutdown('stop');
  }
}
