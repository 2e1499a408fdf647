// Server-sent-events writer for one HTTP response: frames events, paces them, and notices
// when the client hangs up so scenarios stop writing. Knows nothing about any API's events.
import type { ServerResponse } from 'node:http';

export class SseSink {
  #closed = false;
  #closedWaiters: Array<() => void> = [];
  /** Number of `send` calls that reached the socket. */
  sent = 0;

  constructor(private readonly res: ServerResponse) {
    res.on('close', () => {
      if (!res.writableFinished) this.#markClosed();
    });
  }

  get closed(): boolean {
    return this.#closed || this.res.destroyed;
  }

  #markClosed(): void {
    this.#closed = true;
    for (const w of this.#closedWaiters.splice(0)) w();
  }

  start(): void {
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    this.res.flushHeaders();
  }

  /** Write one event; `event` null means a bare `data:` frame (Chat Completions). */
  send(event: string | null, data: unknown): boolean {
    if (this.closed) return false;
    const payload = typeof data === 'string' ? data : JSON.stringify(data);
    if (!this.res.write(`${event !== null ? `event: ${event}\n` : ''}data: ${payload}\n\n`)) this.backlogged = true;
    this.sent++;
    return true;
  }

  /** True after a write the socket could not take at once; `drain()` clears it. */
  backlogged = false;

  /** Wait until the socket drained (or closed); false if the client hung up. */
  drain(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (!this.backlogged) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onClose = () => finish(false);
      const onDrain = () => finish(true);
      const finish = (v: boolean) => {
        this.res.off('drain', onDrain);
        const i = this.#closedWaiters.indexOf(onClose);
        if (i >= 0) this.#closedWaiters.splice(i, 1);
        this.backlogged = false;
        resolve(v && !this.closed);
      };
      this.res.once('drain', onDrain);
      this.#closedWaiters.push(onClose);
    });
  }

  /** Wait `ms`; resolves false early if the client hung up. */
  sleep(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        clearTimeout(timer);
        const i = this.#closedWaiters.indexOf(onClose);
        if (i >= 0) this.#closedWaiters.splice(i, 1);
        resolve(v);
      };
      const onClose = () => done(false);
      const timer = setTimeout(() => done(true), ms);
      this.#closedWaiters.push(onClose);
    });
  }

  end(): void {
    if (!this.closed) this.res.end();
  }
}

/** Send text chunks as deltas, pacing by `intervalMs`; false if the client went away. */
export async function streamChunks(
  sink: SseSink,
  chunks: string[],
  intervalMs: number,
  emit: (chunk: string) => boolean,
): Promise<boolean> {
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && intervalMs > 0 && !(await sink.sleep(intervalMs))) return false;
    if (!emit(chunks[i]!)) return false;
    // Respect socket backpressure so long unpaced streams do not pile up in memory.
    if (sink.backlogged && !(await sink.drain())) return false;
  }
  return !sink.closed;
}
