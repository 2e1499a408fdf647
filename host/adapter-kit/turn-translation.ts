// Runs one turn's records through the adapter's translator (docs/design.md#d4) and
// decides which parts reach the consumer: only parts of records after
// `emitAfter` (the cursor of the previous slice), plus host tool calls the
// previous slice delivered but never answered (delivered exactly once more).
// It also translates the kit's own records (bridge tool calls and approval
// requests) so adapters never see them, and tracks which host tool calls are
// still waiting for a result.
//
// Blocks across slices (docs/guarantees.md#ui): a text, reasoning or
// tool-input block may open in one slice and go on in the next, whose stream
// is folded by a reader that never saw the start. The translation keeps the
// start part of every open block (also in its snapshot); a slice re-sends it
// right before the first delta or end of that block it delivers, so every
// slice's stream is well formed on its own. Nothing else is sent twice.
import type { JSONValue } from '@ai-sdk/provider';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { streamPartSchema } from '../../protocol/harness-v1/stream-part-schema.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { CliAdapter } from './adapter.ts';
import { BlockSplit } from './block-split.ts';
import type { TranslationSnapshot } from './translation-snapshot.ts';
import { blockKey, hostToolResult, requestId } from './turn-parts.ts';

export { hostToolResult, markRecomputed } from './turn-parts.ts';
export type { TranslationSnapshot } from './translation-snapshot.ts';

type BlockStart = Extract<HarnessV1StreamPart, { type: 'text-start' | 'reasoning-start' | 'tool-input-start' }>;

/** CLI calls without a result kept for a later approval request (calls whose result never comes must not pile up). */
const MAX_CLI_CALLS = 32;

export type HostToolCall = {
  /** 'bridge': the CLI called it over the bridge's MCP endpoint; 'cli': the CLI asked on stdout. */
  readonly source: 'bridge' | 'cli';
  answered: boolean;
  /** The tool's name, for the tool-result part that echoes the host's answer (absent in snapshots from older versions). */
  readonly toolName?: string;
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
  private readonly split: BlockSplit;
  /** Host tool-call / approval-request parts by id, kept so a snapshot can carry the unanswered ones. */
  private readonly requestParts = new Map<string, HarnessV1StreamPart>();
  /**
   * The CLI's own tool calls (providerExecuted) without a result yet. A slice delivers an approval request with the
   * call it names unless it delivered that call: the agent takes a request only for a call of the same stream.
   */
  private readonly cliCalls = new Map<string, Extract<HarnessV1StreamPart, { type: 'tool-call' }>>();
  /** The tool-input-start of each call in cliCalls that had one: sent again with the call, its UI part keeps its type (`tool-<name>`). */
  private readonly cliCallInputs = new Map<string, Extract<BlockStart, { type: 'tool-input-start' }>>();
  /** Tool calls this slice delivered. */
  private readonly deliveredCalls = new Set<string>();
  /** Parts a restored translation owes the consumer before any new record (redeliveries). */
  private owed: HarnessV1StreamPart[] = [];
  /** The start part of every block open in the turn (text, reasoning, tool input), by blockKey. */
  private readonly openBlocks = new Map<string, BlockStart>();
  /**
   * Host calls and approvals whose answer is journaled in the batch of records being translated (the
   * look-ahead of TurnConsumer.lookAhead): a call an earlier slice delivered and this one replays for
   * redelivery is shown settled (providerExecuted, the journaled tool-result follows), an approval
   * request not repeated: never asked of the host again.
   */
  readonly answeredAhead = new Set<string>();
  /** The open blocks whose start this slice delivered (itself or re-sent): their parts need no re-opening. */
  private readonly shownBlocks = new Set<string>();
  /**
   * Tool-input blocks ended whose tool-call has not come yet, by toolCallId (their start part). The agent types a
   * tool part by the tool-input-start it saw in the same stream (a static `tool-<name>` part); a tool-call alone
   * makes a `dynamic-tool` part. A slice that delivers such a call without that start re-announces the block first.
   */
  private readonly inputsAwaitingCall = new Map<string, Extract<BlockStart, { type: 'tool-input-start' }>>();
  /** The awaiting inputs whose start this slice delivered. */
  private readonly shownInputs = new Set<string>();

  constructor(
    private readonly adapter: CliAdapter<S>,
    turn: { turnId: string; rerun: boolean },
    private readonly emitAfter: number,
    private readonly redeliver: ReadonlySet<string>,
    restored?: { state: S; snapshot: TranslationSnapshot },
  ) {
    this.turnId = turn.turnId;
    this.rerun = turn.rerun;
    this.split = new BlockSplit(restored?.snapshot.blockSplit);
    if (restored) {
      this.state = restored.state;
      for (const [id, call] of restored.snapshot.toolCalls) this.toolCalls.set(id, { ...call });
      for (const [id, approval] of restored.snapshot.approvals) this.approvals.set(id, { ...approval });
      for (const json of restored.snapshot.unansweredParts) {
        const parsed = streamPartSchema.safeParse(json);
        if (!parsed.success) continue; // not a part this version understands: the replay path would have dropped it too
        const part: HarnessV1StreamPart = parsed.data;
        const id = requestId(part);
        if (id === undefined) continue;
        this.requestParts.set(id, part);
        if (redeliver.has(id)) this.owed.push(part);
      }
      for (const json of restored.snapshot.cliCalls ?? []) {
        const parsed = streamPartSchema.safeParse(json);
        if (parsed.success && parsed.data.type === 'tool-call') this.cliCalls.set(parsed.data.toolCallId, parsed.data);
        if (parsed.success && parsed.data.type === 'tool-input-start') this.cliCallInputs.set(parsed.data.id, parsed.data);
      }
      // Each owed approval request of a CLI call comes with that call.
      this.owed = this.owed.flatMap((part) => (part.type === 'tool-approval-request' ? [...this.resentCall(part.toolCallId), part] : [part]));
      for (const json of restored.snapshot.openBlocks ?? []) {
        const parsed = streamPartSchema.safeParse(json);
        const part = parsed.success ? parsed.data : undefined;
        if (part?.type === 'text-start' || part?.type === 'reasoning-start' || part?.type === 'tool-input-start') this.openBlocks.set(blockKey(part)!.key, part);
      }
      for (const json of restored.snapshot.inputsAwaitingCall ?? []) {
        const parsed = streamPartSchema.safeParse(json);
        if (parsed.success && parsed.data.type === 'tool-input-start') this.inputsAwaitingCall.set(parsed.data.id, parsed.data);
      }
    } else {
      this.state = adapter.translator.init(turn);
    }
  }

  /**
   * Restores a translation from a resume-payload snapshot taken at `snapshot.seq`,
   * or returns null when the adapter cannot (the caller then replays the turn).
   */
  static restore<S>(
    adapter: CliAdapter<S>,
    turn: { turnId: string; rerun: boolean },
    snapshot: TranslationSnapshot,
    redeliver: ReadonlySet<string>,
  ): TurnTranslation<S> | null {
    const restore = adapter.translator.restore;
    // A snapshot without openBlocks (an earlier version's) cannot say which blocks to re-open: replaying finds them.
    if (!restore || snapshot.openBlocks === undefined) return null;
    try {
      return new TurnTranslation(adapter, turn, snapshot.seq, redeliver, { state: restore(snapshot.adapter), snapshot });
    } catch {
      return null; // a snapshot this adapter version cannot read: replaying the turn is always correct
    }
  }

  /** A JSON snapshot of the translation after record `seq`, if the adapter supports one. */
  snapshot(seq: number): TranslationSnapshot | undefined {
    const snapshot = this.adapter.translator.snapshot;
    if (!snapshot) return undefined;
    return {
      seq,
      adapter: snapshot(this.state),
      openBlocks: [...this.openBlocks.values()].map((part) => JSON.parse(JSON.stringify(part)) as JSONValue),
      inputsAwaitingCall: [...this.inputsAwaitingCall.values()].map((part) => JSON.parse(JSON.stringify(part)) as JSONValue),
      unansweredParts: this.unanswered().flatMap((id) => {
        const part = this.requestParts.get(id);
        // Parts of host tool calls are plain JSON (strings, ids, JSON input); the round trip makes that explicit.
        const json: JSONValue = part ? JSON.parse(JSON.stringify(part)) : null;
        return json === null ? [] : [json];
      }),
      cliCalls: [...this.cliCalls.values()].flatMap((part) => {
        const input = this.cliCallInputs.get(part.toolCallId);
        return (input ? [input, part] : [part]).map((one) => JSON.parse(JSON.stringify(one)) as JSONValue);
      }),
      toolCalls: [...this.toolCalls].map(([id, call]) => [
        id,
        { source: call.source, answered: call.answered, ...(call.toolName === undefined ? {} : { toolName: call.toolName }) },
      ]),
      approvals: [...this.approvals].map(([id, approval]) => [id, { source: approval.source, answered: approval.answered }]),
      blockSplit: this.split.snapshot(),
    };
  }

  get adapterState(): S {
    return this.state;
  }

  get hasEnded(): boolean {
    return this.ended;
  }

  /** Translates one record of this turn; returns the parts to hand the consumer now. */
  push(record: JournalRecord): HarnessV1StreamPart[] {
    const translated = this.translate(record);
    const replayed = record.seq <= this.emitAfter;
    // Only a replayed record can carry a call whose answer the journal holds ahead (the per-record path allocates nothing more).
    const settledAhead = replayed && this.answeredAhead.size > 0 ? this.settleAhead(translated, record) : translated;
    const parts = this.split.apply(settledAhead, record.seq);
    if (record.kind === 'turn-end') this.ended = true;
    const out: HarnessV1StreamPart[] = [];
    for (const part of parts) {
      if (part.type === 'tool-call' && part.providerExecuted === true) this.noteCliCall(part);
      if (part.type === 'tool-result') this.cliCalls.delete(part.toolCallId), this.cliCallInputs.delete(part.toolCallId);
      // A call an earlier slice delivered and did not list for redelivery was answered there.
      if (part.type === 'tool-call' && part.providerExecuted !== true && !this.toolCalls.has(part.toolCallId)) {
        const answered = replayed && !this.redeliver.has(part.toolCallId);
        this.toolCalls.set(part.toolCallId, { source: record.kind === 'tool-call' ? 'bridge' : 'cli', answered, toolName: part.toolName });
      }
      if (part.type === 'tool-approval-request' && !this.approvals.has(part.approvalId)) {
        const answered = replayed && !this.redeliver.has(part.approvalId);
        this.approvals.set(part.approvalId, { source: record.kind === 'approval-request' ? 'bridge' : 'cli', answered });
      }
      const id = requestId(part);
      if (id !== undefined) this.requestParts.set(id, part);
      const deliver = !replayed || this.isRedelivery(part);
      const block = blockKey(part);
      if (deliver) this.reopenBlocks(out);
      if (block) this.trackBlock(part, block, deliver ? out : undefined);
      else {
        if (part.type === 'tool-call') this.announceInput(part.toolCallId, deliver ? out : undefined);
        if (deliver && part.type === 'tool-approval-request') this.deliverCallOf(part.toolCallId, out);
        if (deliver) this.deliver(part, out);
      }
    }
    return out;
  }

  /** A call an earlier slice delivered (replayed here for redelivery) whose answer the journal holds: shown settled, not asked again. */
  private settleAhead(parts: ReadonlyArray<HarnessV1StreamPart>, record: JournalRecord): HarnessV1StreamPart[] {
    return parts.flatMap((part): HarnessV1StreamPart[] => {
      if (part.type === 'tool-call' && part.providerExecuted !== true && this.answeredAhead.has(part.toolCallId) && !this.toolCalls.has(part.toolCallId)) {
        return [this.settledCall(part, record)];
      }
      // An approval the journal answered (the owner-less timeout, another host) is not asked again.
      if (part.type === 'tool-approval-request' && this.answeredAhead.has(part.approvalId) && !this.approvals.has(part.approvalId)) {
        this.approvals.set(part.approvalId, { source: record.kind === 'approval-request' ? 'bridge' : 'cli', answered: true });
        return [];
      }
      return [part];
    });
  }

  /**
   * Follows `part` of a block; `out` (when it is delivered) gets it. An end the turn never opened is the
   * adapter's own: passed on unchanged.
   */
  private trackBlock(part: HarnessV1StreamPart, { key, role }: { key: string; role: 'start' | 'delta' | 'end' }, out: HarnessV1StreamPart[] | undefined): void {
    if (role === 'start') {
      this.openBlocks.set(key, part as BlockStart);
      if (out) this.shownBlocks.add(key);
    } else {
      // A delivered part's block, if an earlier slice opened it, was re-opened first (reopenBlocks).
      const start = this.openBlocks.get(key);
      if (role === 'end') {
        if (start?.type === 'tool-input-start') {
          this.inputsAwaitingCall.set(start.id, start);
          if (out || this.shownBlocks.has(key)) this.shownInputs.add(start.id);
        }
        this.openBlocks.delete(key);
        this.shownBlocks.delete(key);
      }
    }
    out?.push(part);
  }

  /**
   * Before the first part this slice delivers: the start of every block an earlier slice left open, in the order
   * they opened. The re-opened UI part then follows the part the earlier stream left streaming, before anything
   * else this slice shows (a block whose end follows another part, e.g. a compaction, stays in its place).
   */
  private reopenBlocks(out: HarnessV1StreamPart[]): void {
    for (const [key, start] of this.openBlocks) {
      if (this.shownBlocks.has(key)) continue;
      out.push(start);
      this.shownBlocks.add(key);
    }
  }

  /** A CLI call that may still be asked about; the oldest is let go past MAX_CLI_CALLS (an approval follows its call closely). */
  private noteCliCall(part: Extract<HarnessV1StreamPart, { type: 'tool-call' }>): void {
    this.cliCalls.set(part.toolCallId, part);
    const input = this.inputsAwaitingCall.get(part.toolCallId);
    if (input) this.cliCallInputs.set(part.toolCallId, input);
    if (this.cliCalls.size <= MAX_CLI_CALLS) return;
    const oldest = this.cliCalls.keys().next().value!;
    this.cliCalls.delete(oldest);
    this.cliCallInputs.delete(oldest);
  }

  /** Hands `part` to the slice, noting the calls it delivered. */
  private deliver(part: HarnessV1StreamPart, out: HarnessV1StreamPart[]): void {
    if (part.type === 'tool-call') this.deliveredCalls.add(part.toolCallId);
    out.push(part);
  }

  /** Before an approval request: the CLI call it names, when this slice has not delivered that call. */
  private deliverCallOf(toolCallId: string, out: HarnessV1StreamPart[]): void {
    if (this.deliveredCalls.has(toolCallId)) return;
    for (const part of this.resentCall(toolCallId)) this.deliver(part, out);
  }

  /** A CLI call sent again: its input block announced (start and end) when it had one, then the call. */
  private resentCall(toolCallId: string): HarnessV1StreamPart[] {
    const call = this.cliCalls.get(toolCallId);
    if (!call) return [];
    const input = this.cliCallInputs.get(toolCallId);
    return input ? [input, { type: 'tool-input-end', id: input.id }, call] : [call];
  }

  /** Before a tool-call: its input block, ended in an earlier slice, re-announced (start and end) when `out` takes the call. */
  private announceInput(toolCallId: string, out: HarnessV1StreamPart[] | undefined): void {
    const start = this.inputsAwaitingCall.get(toolCallId);
    if (!start) return;
    if (out && !this.shownInputs.has(toolCallId)) out.push(start, { type: 'tool-input-end', id: toolCallId });
    this.inputsAwaitingCall.delete(toolCallId);
    this.shownInputs.delete(toolCallId);
  }

  /**
   * Redeliveries a translation restored from a snapshot owes the consumer (once): those the journal has
   * not answered meanwhile (the session takes them once the replay caught up, so its answers are known).
   */
  takeOwed(): HarnessV1StreamPart[] {
    if (this.owed.length === 0) return []; // every record asks; nearly always nothing is owed
    const unanswered = (id: string) => !(this.answeredAhead.has(id) || this.toolCalls.get(id)?.answered === true || this.approvals.get(id)?.answered === true);
    // A CLI call sent with an approval request (its input block, the call) goes as the request goes.
    const requestOf = new Map(this.owed.flatMap((part) => (part.type === 'tool-approval-request' ? [[part.toolCallId, part.approvalId] as const] : [])));
    const owed = this.owed.filter((part) => {
      const callId = part.type === 'tool-call' && part.providerExecuted === true ? part.toolCallId : part.type === 'tool-input-start' || part.type === 'tool-input-end' ? part.id : undefined;
      const request = callId === undefined ? undefined : requestOf.get(callId);
      if (request !== undefined) return unanswered(request);
      const id = requestId(part);
      return id === undefined || unanswered(id);
    });
    this.owed = [];
    for (const part of owed) if (part.type === 'tool-call') this.deliveredCalls.add(part.toolCallId);
    return owed;
  }

  /** A host call whose answer the same batch journals: recorded answered, shown as executed (its tool-result settles it). */
  private settledCall(part: Extract<HarnessV1StreamPart, { type: 'tool-call' }>, record: JournalRecord): HarnessV1StreamPart {
    this.toolCalls.set(part.toolCallId, { source: record.kind === 'tool-call' ? 'bridge' : 'cli', answered: true, toolName: part.toolName });
    return { ...part, providerExecuted: true };
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
        // The host's answer as journaled: echoed as the tool-result part the AI SDK waits for to settle the call
        // (docs/guarantees.md#ui). A call this turn never showed (an earlier version's journal) has nothing to settle.
        const call = this.toolCalls.get(record.data.callId);
        if (!call) return [];
        call.answered = true;
        return [hostToolResult(record.data.callId, call.toolName ?? '', record.data.output, record.data.isError)];
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
