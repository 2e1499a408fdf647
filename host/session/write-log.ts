// What the journal has shown of this session's own writes: recent turn starts
// and stdin records. A start, rerun or input whose connection dropped before
// its ack is not re-sent blindly by the channel (at-most-once); once the
// channel is live again this log says whether it landed.
import type { HelloFrame, JournalRecord } from '../../protocol/v1/index.ts';
import type { ChannelRequest } from '../channel/index.ts';

type Entry = { seq: number; kind: 'turn-start' | 'stdin'; turnId: string | null; text: string };

export class WriteLog {
  private readonly entries: Entry[] = [];

  constructor(private readonly maxEntries: number) {}

  remember(record: Extract<JournalRecord, { kind: 'turn-start' | 'stdin' }>): void {
    this.entries.push({ seq: record.seq, kind: record.kind, turnId: record.turnId, text: record.kind === 'stdin' ? record.data.text : '' });
    if (this.entries.length > this.maxEntries) this.entries.shift();
  }

  /**
   * Whether `frame`, sent when the cursor was `sentAt`, took effect: a turn-start
   * for its turn id (or the turn in hello's list), or a stdin record with the
   * same text after `sentAt`. A signal counts as landed: it is never repeated
   * (a second SIGINT can kill a CLI that reads double Ctrl-C as exit).
   */
  landed(frame: ChannelRequest, sentAt: number, hello: HelloFrame | null): boolean {
    if (frame.type === 'start' || frame.type === 'rerun') return this.turnStarted(frame.turnId, hello);
    if (frame.type === 'input') {
      return this.entries.some((e) => e.kind === 'stdin' && e.seq > sentAt && e.turnId === frame.turnId && e.text === frame.text);
    }
    return true;
  }

  /** Whether turn `turnId` started: in hello's list of turns or running there (its turn-start not yet durable), or a turn-start record seen since. */
  turnStarted(turnId: string, hello: HelloFrame | null): boolean {
    const inHello = hello !== null && (hello.runningTurnId === turnId || hello.turns.some((t) => t.turnId === turnId));
    return inHello || this.entries.some((e) => e.kind === 'turn-start' && e.turnId === turnId);
  }
}
