// Host → bridge requests awaiting their ack: validation and serialization,
// ids, the bounded queue, and what a reconnect does to each frame type
// (REQUEST_DELIVERY). The channel owns the socket and calls
// drainQueued/onDisconnect; this module never touches a socket.
import type { z } from 'zod';
import { hostFrameSchema, type AckFrame, type HostFrame } from '../../protocol/v1/index.ts';
import { CHANNEL_LIMITS } from '../limits.ts';
import { ChannelRequestError, type ChannelRequestErrorCode } from './errors.ts';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Frames the channel itself manages (attach, heartbeat) are not requests. */
export type ChannelRequestType = Exclude<HostFrame['type'], 'attach' | 'ping' | 'pong'>;
/**
 * A request as the caller writes it (schema input: defaults such as a launch
 * spec's `stdin` may be left out); the channel assigns the `id`.
 */
export type ChannelRequest = DistributiveOmit<Extract<z.input<typeof hostFrameSchema>, { type: ChannelRequestType }>, 'id'>;

/**
 * What happens to a request that was SENT but not acked when the connection
 * dropped. (A request still queued — never sent — is always sent after the
 * re-attach, in order; that is safe for every type.)
 * - at-least-once: re-sent after re-attach with the same id. Safe because the
 *   bridge settles a duplicate by state: the same tool-result again for an MCP
 *   call whose answer it journaled is acked (bridge/server/answered-calls.ts);
 *   another answer, or a second approval, for an answered call gets
 *   unknown-call, a second abort of an ended turn
 *   unknown-turn, stop/destroy/diagnostics are idempotent. A rejection of a
 *   re-sent request carries `resent: true` so the caller can read such a code
 *   as "the first copy probably landed".
 * - at-most-once: NOT re-sent; rejected with `outcome-unknown`. A second start
 *   or rerun would launch a second turn, a second input would type the message
 *   twice, a second SIGINT may kill a CLI that treats double Ctrl-C as exit.
 *   The session decides from the journal: hello's `turns` (did turn X start?)
 *   and the replayed `stdin` / `signal` records.
 */
export const REQUEST_DELIVERY: Record<ChannelRequestType, 'at-least-once' | 'at-most-once'> = {
  start: 'at-most-once',
  rerun: 'at-most-once',
  input: 'at-most-once',
  signal: 'at-most-once',
  abort: 'at-least-once',
  'tool-result': 'at-least-once',
  approval: 'at-least-once',
  'host-wait': 'at-least-once', // the bridge keeps one wait per callId: a second copy is a no-op
  'journal-epoch': 'at-most-once', // a second copy after the first landed would be refused (journal-mismatch): the session reads the hello instead
  stop: 'at-least-once',
  destroy: 'at-least-once',
  diagnostics: 'at-least-once',
  expect: 'at-least-once', // a hint: a second copy makes nothing more
};

type Pending = {
  id: string;
  type: ChannelRequestType;
  /** Serialized once; reused for every send and for the recording. */
  text: string;
  state: 'queued' | 'sent';
  sends: number;
  resolve: (ack: AckFrame) => void;
  reject: (error: ChannelRequestError) => void;
};

export class RequestTracker {
  /** Insertion order = send order; a re-queued entry keeps its place. */
  private readonly pending = new Map<string, Pending>();
  private nextId = 1;

  constructor(
    private readonly idPrefix: string,
    private readonly maxQueuedFrames: number,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  /**
   * Queue a request. Returns the promise for its ack, or the error when the
   * frame fails the schema (a programming error surfaces here, not as a bridge
   * error) or the queue is full. The parsed frame is what gets sent, so schema
   * defaults are explicit on the wire.
   */
  add(frame: ChannelRequest): { ok: true; id: string; promise: Promise<AckFrame> } | { ok: false; error: ChannelRequestError } {
    const type = frame.type;
    const check = hostFrameSchema.safeParse({ ...frame, id: 'x' });
    if (!check.success) {
      const message = `invalid ${type} request: ${check.error.issues[0]?.message ?? 'schema mismatch'}`;
      return { ok: false, error: new ChannelRequestError('bad-frame', message, { frameType: type }) };
    }
    if (this.pending.size >= this.maxQueuedFrames) {
      const message = `${this.pending.size} requests already await their ack (maxQueuedFrames ${this.maxQueuedFrames})`;
      return { ok: false, error: new ChannelRequestError('queue-full', message, { frameType: type }) };
    }
    const id = `${this.idPrefix}${this.nextId++}`;
    const text = JSON.stringify({ ...check.data, id });
    let resolve!: (ack: AckFrame) => void;
    let reject!: (error: ChannelRequestError) => void;
    const promise = new Promise<AckFrame>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.pending.set(id, { id, type, text, state: 'queued', sends: 0, resolve, reject });
    return { ok: true, id, promise };
  }

  /**
   * Queued entries, in order, marked sent (the caller writes `text` to the
   * socket). One over CHANNEL_LIMITS.maxOutboundFrameBytes is rejected with
   * `too-large` instead.
   */
  *drainQueued(): Generator<{ id: string; text: string }> {
    for (const entry of this.pending.values()) {
      if (entry.state !== 'queued') continue;
      entry.state = 'sent';
      entry.sends++;
      if (Buffer.byteLength(entry.text) > CHANNEL_LIMITS.maxOutboundFrameBytes) {
        this.fail(entry.id, 'too-large', `request exceeds ${CHANNEL_LIMITS.maxOutboundFrameBytes} bytes`);
        continue;
      }
      yield { id: entry.id, text: entry.text };
    }
  }

  /** Drop an entry the socket refused to take (send callback error); it was never really sent. */
  requeue(id: string): void {
    const entry = this.pending.get(id);
    if (entry) {
      entry.state = 'queued';
      entry.sends--;
    }
  }

  ack(frame: AckFrame): boolean {
    const entry = this.pending.get(frame.id);
    if (!entry) return false;
    this.pending.delete(frame.id);
    entry.resolve(frame);
    return true;
  }

  fail(id: string, code: ChannelRequestErrorCode, message: string): boolean {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.pending.delete(id);
    entry.reject(new ChannelRequestError(code, message, { frameType: entry.type, resent: entry.sends > 1 }));
    return true;
  }

  /** The connection dropped: apply REQUEST_DELIVERY to every sent, unacked entry. */
  onDisconnect(): void {
    for (const entry of [...this.pending.values()]) {
      if (entry.state !== 'sent') continue;
      if (REQUEST_DELIVERY[entry.type] === 'at-least-once') {
        entry.state = 'queued';
      } else {
        this.fail(
          entry.id,
          'outcome-unknown',
          `connection lost before the bridge acknowledged ${entry.type} ${entry.id}; not re-sent (at-most-once) — check the journal`,
        );
      }
    }
  }

  rejectAll(code: ChannelRequestErrorCode, message: string): void {
    for (const id of [...this.pending.keys()]) this.fail(id, code, message);
  }
}
