// Runs one turn's records through the adapter's translator (DESIGN D4) and
// decides which parts reach the consumer: only parts of records after
// `emitAfter` (the cursor of the previous slice), plus host tool calls the
// previous slice delivered but never answered (delivered exactly once more).
// It also translates the kit's own records (bridge tool calls and approval
// requests) so adapters never see them, and tracks which host tool calls are
// still waiting for a result.
import type { HarnessV1StreamPart } from '../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../protocol/v1/record.ts';
import type { CliAdapter } from './adapter.ts';

export type HostToolCall = {
  /** 'bridge': the CLI called it over the bridge's MCP endpoint; 'cli': the CLI asked on stdout. */
  readonly source: 'bridge' | 'cli';
  answered: boolean;
};

export class TurnTranslation<S> {
  readonly turnId: string;
  readonly rerun: boolean;
  /** Host tool calls seen in this turn, by toolCallId. */
  readonly toolCalls = new Map<string, HostToolCall>();
  /** Approval requests seen in this turn, by approvalId, and whether they were answered. */
  readonly approvals = new Map<string, { source: 'bridge' | 'cli'; answered: boolean }>();
  private state: S;
  private ended = false;

  constructor(
    private readonly adapter: CliAdapter<S>,
    turn: { turnId: string; rerun: boolean },
    private readonly emitAfter: number,
    private readonly redeliver: ReadonlySet<string>,
  ) {
    this.turnId = turn.turnId;
    this.rerun = turn.rerun;
    this.state = adapter.translator.init(turn);
  }

  get adapterState(): S {
    return this.state;
  }

  get hasEnded(): boolean {
    return this.ended;
  }

  /** Translates one record of this turn; returns the parts to hand the consumer now. */
  push(record: JournalRecord): HarnessV1StreamPart[] {
    const parts = this.translate(record);
    if (record.kind === 'turn-end') this.ended = true;
    const replayed = record.seq <= this.emitAfter;
    const out: HarnessV1StreamPart[] = [];
    for (const part of parts) {
      // A call an earlier slice delivered and did not list for redelivery was answered there.
      if (part.type === 'tool-call' && part.providerExecuted !== true && !this.toolCalls.has(part.toolCallId)) {
        const answered = replayed && !this.redeliver.has(part.toolCallId);
        this.toolCalls.set(part.toolCallId, { source: record.kind === 'tool-call' ? 'bridge' : 'cli', answered });
      }
      if (part.type === 'tool-approval-request' && !this.approvals.has(part.approvalId)) {
        const answered = replayed && !this.redeliver.has(part.approvalId);
        this.approvals.set(part.approvalId, { source: record.kind === 'approval-request' ? 'bridge' : 'cli', answered });
      }
      if (!replayed || this.isRedelivery(part)) out.push(part);
    }
    return out;
  }

  /** Host tool calls and approvals delivered but not answered: the next slice delivers them again. */
  unanswered(): string[] {
    const ids: string[] = [];
    for (const [id, call] of this.toolCalls) if (!call.answered) ids.push(id);
    for (const [id, approval] of this.approvals) if (!approval.answered) ids.push(id);
    return ids;
  }

  private isRedelivery(part: HarnessV1StreamPart): boolean {
    if (part.type === 'tool-call') return this.redeliver.has(part.toolCallId);
    if (part.type === 'tool-approval-request') return this.redeliver.has(part.approvalId);
    return false;
  }

  private translate(record: JournalRecord): ReadonlyArray<HarnessV1StreamPart> {
    switch (record.kind) {
      case 'tool-call':
        return [
          {
            type: 'tool-call',
            toolCallId: record.data.callId,
            toolName: record.data.name,
            input: JSON.stringify(record.data.input ?? {}),
          },
        ];
      case 'tool-result': {
        const call = this.toolCalls.get(record.data.callId);
        if (call) call.answered = true;
        return [];
      }
      case 'approval-request':
        return [
          {
            type: 'tool-approval-request',
            approvalId: record.data.callId,
            toolCallId: record.data.toolCallId ?? record.data.callId,
          },
        ];
      case 'approval': {
        const approval = this.approvals.get(record.data.callId);
        if (approval) approval.answered = true;
        return [];
      }
      default: {
        const { state, parts } = this.adapter.translator.step(this.state, record);
        this.state = state;
        return parts;
      }
    }
  }
}
