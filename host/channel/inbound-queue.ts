// Frames that arrive while an async onRecords is still busy, in arrival order
// across all frame types, bounded by count and by wire bytes. The channel
// pauses its socket when push() reports the queue full and resumes it at the
// low-water mark (half of both limits), so the socket refills while the
// consumer works through what is queued. Frames are kept as text and parsed
// only when handled: a slow consumer holds the queue's strings plus one parsed
// batch, not every queued record as objects (see CHANNEL_LIMITS.maxInboundQueuedBytes).

export type QueuedFrame = { text: string; bytes: number };

export class InboundQueue {
  #frames: QueuedFrame[] = [];
  #bytes = 0;

  constructor(
    readonly maxFrames: number,
    readonly maxBytes: number,
  ) {}

  get length(): number {
    return this.#frames.length;
  }

  /** Wire bytes queued. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Queues a frame; true when the queue is now at or over a limit (pause the socket). */
  push(text: string, bytes: number): boolean {
    this.#frames.push({ text, bytes });
    this.#bytes += bytes;
    return this.#frames.length >= this.maxFrames || this.#bytes >= this.maxBytes;
  }

  shift(): QueuedFrame | undefined {
    const frame = this.#frames.shift();
    if (frame) this.#bytes -= frame.bytes;
    return frame;
  }

  /** At or below half of both limits: a paused socket may resume. */
  get lowWater(): boolean {
    return this.#frames.length <= this.maxFrames / 2 && this.#bytes <= this.maxBytes / 2;
  }

  /** Drops everything (the socket the frames came from is gone; a re-attach replays them from the cursor). */
  clear(): void {
    this.#frames = [];
    this.#bytes = 0;
  }
}
