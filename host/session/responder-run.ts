// Runs an adapter's responder (host/adapter-kit/responder.ts) for one session: every record of a
// running turn is observed; a request no stdin record has answered yet is answered once the
// channel is live (caught up with the journal), one at a time, as an `input` frame of the turn
// that asked. What a replayed journal shows as answered is never answered again; a request whose
// turn is no longer running is dropped (a rerun's new turn asks again).
import type { JournalRecord } from '../../protocol/v1/index.ts';
import type { CliRequest, Responder, ResponderIo } from '../adapter-kit/responder.ts';

export type ResponderHooks = {
  /** Resolves once the session's channel is live; rejects when it has none. */
  whenLive(): Promise<void>;
  /** Writes `text` to the turn's stdin (an input frame; a lost ack is settled from the journal). */
  input(turnId: string, text: string): Promise<void>;
  /** The turn the session consumes now (answers go only to it). */
  currentTurn(): string | null;
  warn(message: string, attrs: Record<string, unknown>): void;
};

export class ResponderRun {
  private readonly pending = new Map<string, { turnId: string; request: CliRequest }>();
  private readonly answered = new Set<string>();
  private draining = false;

  constructor(
    private readonly responder: Responder,
    private readonly io: ResponderIo,
    private readonly hooks: ResponderHooks,
  ) {}

  /** One record of the turn the session consumes (replayed or live). */
  observe(record: JournalRecord): void {
    if (record.turnId === null) return;
    const key = this.responder.answered(record);
    if (key !== undefined) {
      this.answered.add(key);
      this.pending.delete(key);
      return;
    }
    const request = this.responder.request(record);
    if (!request || this.answered.has(request.key)) return;
    this.pending.set(request.key, { turnId: record.turnId, request });
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    let again = true;
    try {
      await this.hooks.whenLive();
      for (const [key, { turnId, request }] of this.pending) {
        this.pending.delete(key);
        if (this.answered.has(key) || this.hooks.currentTurn() !== turnId) continue;
        const text = await this.responder.answer(request, this.io).catch((error: unknown) => {
          this.hooks.warn(`the responder failed on ${request.method}: ${(error as Error).message}`, { method: request.method });
          return undefined;
        });
        if (text === undefined || this.answered.has(key) || this.hooks.currentTurn() !== turnId) continue;
        this.answered.add(key);
        await this.hooks.input(turnId, text);
      }
    } catch (error) {
      // No live channel (suspended, detached, lost): the next slice replays the turn and observes it again.
      again = false;
      this.pending.clear();
      this.hooks.warn(`the responder could not answer: ${(error as Error).message}`, {});
    } finally {
      this.draining = false;
      if (again && this.pending.size > 0) void this.drain();
    }
  }
}
