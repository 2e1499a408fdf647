// One host WebSocket as the server holds it: its id, its heartbeat count, its record stream while
// it owns the stream, and how control frames (hello, acks, errors, pongs) go out on it. Ownership,
// routing and shutdown are server.ts's; the record frames record-stream.ts's.
import type { WebSocket } from 'ws';
import { CLOSE_CODES_V1 } from '../../protocol/v1/close-codes.ts';
import type { ErrorCode, ErrorFrame } from '../../protocol/v1/index.ts';
import type { Logger } from '../logger.ts';
import type { RecordStream } from './record-stream.ts';

export class Connection {
  readonly ws: WebSocket;
  readonly id: number;
  missedPongs = 0;
  /** Set while this connection owns the stream. */
  stream: RecordStream | null = null;
  /** The owner epoch and id this connection attached with (fencing; absent for an attach without `owner`). */
  owner: { epoch: number; id: string } | null = null;
  readonly #maxControlBufferedBytes: number;
  readonly #log: Logger;

  constructor(ws: WebSocket, id: number, maxControlBufferedBytes: number, log: Logger) {
    this.ws = ws;
    this.id = id;
    this.#maxControlBufferedBytes = maxControlBufferedBytes;
    this.#log = log;
    ws.on('pong', () => {
      this.missedPongs = 0;
    });
  }

  /** Control frames (hello, acks, errors, pongs) are never deferred; a socket that lets them pile up is closed. */
  send(text: string): void {
    const { ws } = this;
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > this.#maxControlBufferedBytes) {
      this.#log.warn({ connection: this.id, bufferedAmount: ws.bufferedAmount }, 'control frames piling up; closing');
      ws.close(CLOSE_CODES_V1.slowConsumer, 'slow consumer');
      return;
    }
    ws.send(text);
  }

  error(code: ErrorCode, message: string, id?: string, seqs?: { firstSeq: number; lastSeq: number }): void {
    const frame: ErrorFrame = { type: 'error', ...(id === undefined ? {} : { id }), code, message, ...seqs };
    this.send(JSON.stringify(frame));
  }

  /** Sends and waits until the frame reached the kernel (bounded: the process exits right after). */
  sendAndWait(text: string): Promise<void> {
    const { ws } = this;
    if (ws.readyState !== ws.OPEN) return Promise.resolve();
    return Promise.race([new Promise<void>((resolve) => ws.send(text, () => resolve())), delay(1000)]);
  }

  /** One heartbeat: a ping, or after two unanswered ones the end of the socket. */
  beat(): void {
    if (this.missedPongs >= 2) {
      this.#log.info({ connection: this.id }, 'no pong for two heartbeats; terminating');
      this.ws.terminate();
      return;
    }
    this.missedPongs++;
    this.ws.ping();
  }
}

/** Resolves after `ms`; the timer does not keep the process alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
