// Delivery to the consumer: which records reach onRecords (exactly once, in
// seq order, via the sequencer), how many gaps in a row the bridge may send
// without progress, and backpressure from an async onRecords. While the
// consumer is busy, frames of every type wait in the inbound queue as text;
// past its limits the socket is paused, and it resumes at the low-water mark.
// The channel owns the socket and the state machine: it decides what a gap
// costs (a re-attach) and ends the channel when the consumer fails.
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';
import type { JournalRecord } from '../../protocol/v1/index.ts';
import { CHANNEL_LIMITS } from '../limits.ts';
import type { BridgeChannelErrorCode } from './errors.ts';
import { InboundQueue } from './inbound-queue.ts';
import { RecordSequencer } from './sequencer.ts';
import type { ChannelSocket, RecordsInfo } from './types.ts';

export type DeliveryOptions = {
  /** Highest seq the consumer already has. */
  cursor: number;
  maxInboundQueuedFrames: number;
  maxInboundQueuedBytes: number;
};

export type DeliveryHooks = {
  onRecords(records: JournalRecord[], info: RecordsInfo): void | Promise<void>;
  /** Decode and handle one frame: at once while the consumer is free, from the queue once it is free again. */
  handle(text: string, bytes: number): void;
  /** The current connection's socket, to pause and resume. */
  socket(): ChannelSocket | undefined;
  /** The channel has closed: nothing more is handled. */
  ended(): boolean;
  /** End the channel with this error. */
  fail(code: BridgeChannelErrorCode, message: string, extra?: { cause?: unknown }): void;
  diag(level: HarnessV1Diagnostic['level'], message: string, attrs?: Record<string, unknown>): void;
};

export class RecordDelivery {
  private readonly sequencer: RecordSequencer;
  private readonly inbound: InboundQueue;
  /** An async onRecords is running: frames wait in `inbound` until it settles. */
  private consuming = false;
  private gapReattaches = 0;
  private cursorAtLastGap = -1;

  constructor(
    options: DeliveryOptions,
    private readonly hooks: DeliveryHooks,
  ) {
    this.sequencer = new RecordSequencer(options.cursor);
    this.inbound = new InboundQueue(options.maxInboundQueuedFrames, options.maxInboundQueuedBytes);
  }

  /** Highest seq delivered to onRecords. */
  get cursor(): number {
    return this.sequencer.cursor;
  }

  /** The consumer is working on a batch: silence from the bridge is ours, not its. */
  get busy(): boolean {
    return this.consuming;
  }

  /** A frame arrived: handle it now, or queue it (pausing the socket when full) while the consumer is busy. */
  receive(text: string, bytes: number): void {
    if (this.consuming) {
      const full = this.inbound.push(text, bytes);
      const socket = this.hooks.socket();
      if (full && socket && !socket.isPaused) socket.pause();
      return;
    }
    this.hooks.handle(text, bytes);
  }

  /**
   * The records of one frame: those that extend the cursor go to the
   * consumer. Returns the gap to re-attach from when a record skipped ahead,
   * or null (also when the channel ended meanwhile, or ends here because the
   * bridge keeps sending gaps without progress).
   */
  accept(records: JournalRecord[], replay: boolean): { expected: number; got: number } | null {
    const batch = this.sequencer.accept(records);
    if (batch.duplicates > 0) {
      this.hooks.diag('debug', `dropped ${batch.duplicates} already-delivered records`, { cursor: this.cursor });
    }
    if (batch.deliver.length > 0) this.deliver(batch.deliver, replay);
    if (!batch.gap || this.hooks.ended()) return null; // deliver() may have ended the channel
    if (this.cursor > this.cursorAtLastGap) this.gapReattaches = 0;
    this.cursorAtLastGap = this.cursor;
    if (++this.gapReattaches > CHANNEL_LIMITS.maxGapReattaches) {
      this.hooks.fail('protocol-violation', `bridge sent ${this.gapReattaches} gaps without progress; last cursor ${this.cursor}`);
      return null;
    }
    return batch.gap;
  }

  /** Drop every queued frame (their socket is gone, or the channel closed; a re-attach replays them from the cursor). */
  clear(): void {
    this.inbound.clear();
  }

  private deliver(records: JournalRecord[], replay: boolean): void {
    let result: void | Promise<void>;
    try {
      result = this.hooks.onRecords(records, { replay });
    } catch (error) {
      this.hooks.fail('consumer-failed', `onRecords threw: ${(error as Error).message}; last cursor ${this.cursor}`, { cause: error });
      return;
    }
    if (result && typeof result.then === 'function') {
      this.consuming = true;
      result.then(
        () => this.drain(),
        (error: unknown) => this.hooks.fail('consumer-failed', `onRecords rejected: ${(error as Error).message}; last cursor ${this.cursor}`, { cause: error }),
      );
    }
  }

  /**
   * The async consumer finished a batch: handle queued frames until it is busy
   * again. A paused socket resumes once the queue is down to half its limits,
   * so the socket refills while the consumer works through the rest.
   */
  private drain(): void {
    this.consuming = false;
    while (!this.consuming && this.inbound.length > 0 && !this.hooks.ended()) {
      const queued = this.inbound.shift()!;
      this.hooks.handle(queued.text, queued.bytes);
    }
    const socket = this.hooks.socket();
    if (socket?.isPaused && this.inbound.lowWater) socket.resume();
  }
}
