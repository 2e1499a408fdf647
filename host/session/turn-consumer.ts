// The in-flight turn and the slice consuming it. Each record of the turn goes
// through its TurnTranslation and the parts go to the slice (or are collected,
// for an internal turn); the turn-end settles the slice, or, for a turn the
// bridge's death interrupted, the session re-drives it (rerun). The slice's
// control handle answers the turn (tool results, approvals, user messages) and
// an abort signal ends it. The session decides when turns start, owns the
// channel and the cursor, and calls record() for the records of this turn.
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import type { HarnessV1PromptControl, HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { AckFrame, JournalRecord } from '../../protocol/v1/index.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import { hostToolResult, markRecomputed, TurnTranslation, type TranslationSnapshot } from '../adapter-kit/turn-translation.ts';
import type { ChannelRequest } from '../channel/index.ts';
import { HOST_SESSION_LIMITS } from '../limits.ts';
import { abortError } from './abort-error.ts';
import { noteMark, withMarks, type BlockMark, type SliceMarks } from './marks.ts';
import { BridgeSessionError } from './errors.ts';
import type { InFlightTurn } from './resume-state.ts';

export type CompactionPart = Extract<HarnessV1StreamPart, { type: 'compaction' }>;

export type TurnState<S> = InFlightTurn & {
  translation: TurnTranslation<S> | undefined;
  abortRequested: boolean;
  /**
   * Aborted before the CLI named what its interrupt request needs (e.g. Codex's turn id): the
   * request goes out with the first record that makes adapter.encodeInterrupt answer.
   */
  interruptPending?: boolean;
  redeliverSet: Set<string>;
  /** Calls the look-ahead found answered in the journal before this turn's translation existed (lookAhead). */
  answeredAhead?: Set<string>;
  /**
   * The turn came from a resume payload: this host took it over after another let go. A turn the
   * replay shows ended `stopped` is over (docs/guarantees.md#stop: @ai-sdk/harness 1.0.x's
   * session.stop() with a turn in flight suspends it, then stops the sandbox): the slice gets what
   * the last host did not receive and its finish, nothing re-driven.
   */
  restored: boolean;
  /**
   * Tool results the host gave for calls whose producer was gone (the bridge no longer had the turn):
   * kept and sent when the re-driven turn asks for the same call id; dropped when it ends.
   */
  held: Map<string, { output: unknown; isError: boolean }>;
  /** The tool call of each approval request this host delivered (approval id → tool call id). */
  approvalCalls?: Map<string, string>;
  /** Tool calls whose approval the host denied: the CLI's result for them is not passed on (deniedResult). */
  denied?: Set<string>;
};

export type Slice = {
  emit: (part: HarnessV1StreamPart) => void;
  resolve: () => void;
  reject: (error: unknown) => void;
  tools: ReadonlyArray<HarnessV1ToolSpec>;
  /** Parts are collected instead of emitted (doCompact's internal turn). */
  collectOnly: boolean;
  /** What this slice delivered recomputed or again, carried on its finish parts (marks.ts). */
  marks: SliceMarks;
};

export type TurnConsumerHooks<S> = {
  /** One request to the bridge (the session's send: a lost ack is settled from the journal). */
  send(frame: ChannelRequest): Promise<AckFrame>;
  /** Rung 3: re-drive the interrupted `turn` into `slice`. */
  rerun(turn: TurnState<S>, tools: ReadonlyArray<HarnessV1ToolSpec>, slice: Slice): Promise<void>;
  report(level: HarnessV1Diagnostic['level'], message: string, attrs: Record<string, unknown>): void;
  /** Whether the bridge, as its current hello tells, runs `turnId` (true when unknown). */
  turnRunning(turnId: string): boolean;
  /** The bridge takes `host-wait` frames (protocol 1.1). */
  hostWaits?(): boolean;
  /** Resolves once the channel has replayed the journal up to live (rejects when it is gone). */
  caughtUp?(): Promise<void>;
  /** A turn of the caller's ended as the CLI finished it (not aborted, not failed to start). */
  turnEnded?(): void;
};

/** What the CLI reads when the bridge's owner-less timeout fails a call it waits on over its stdio (the bridge journals the same words). */
const ownerlessAnswer = 'no host answered this call: the session had no host attached for the owner-less timeout';

export class TurnConsumer<S> {
  /** The turn in flight at the bridge, null between turns. */
  turn: TurnState<S> | null = null;
  /** Who receives the turn's parts now; null while suspended or between turns. */
  slice: Slice | null = null;
  /** Parts a compaction produced between turns, emitted on the next turn. */
  carry: CompactionPart[] = [];

  constructor(
    private readonly adapter: CliAdapter<S>,
    private readonly hooks: TurnConsumerHooks<S>,
  ) {}

  /** A new slice receives the turn's parts from here on; `done` settles when the turn ends (or the slice fails). */
  begin(
    emit: (part: HarnessV1StreamPart) => void,
    tools: ReadonlyArray<HarnessV1ToolSpec>,
    collectOnly: boolean,
  ): { control: HarnessV1PromptControl; done: Promise<void> } {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined); // the caller observes `done`; this only prevents an unhandled rejection when it does not
    this.slice = { emit, resolve, reject, tools, collectOnly, marks: {} };
    const control: HarnessV1PromptControl = {
      done,
      submitToolResult: (input) => this.submitToolResult(input),
      submitToolApproval: (input) => this.submitToolApproval(input),
      ...(this.adapter.encodeUserMessage ? { submitUserMessage: (text: string) => this.submitUserMessage(text) } : {}),
    };
    return { control, done };
  }

  /** The slice lets go of the turn (suspend, detach, stop): its `done` resolves, the turn stays in flight. */
  release(): void {
    this.slice?.resolve();
    this.slice = null;
  }

  /** The slice ends with `error`. */
  fail(error: unknown): void {
    const slice = this.slice;
    this.slice = null;
    slice?.reject(error);
  }

  /** Parts a restored translation owes the slice (redeliveries), before any record of it. */
  flushOwed(turn: TurnState<S>): void {
    if (this.turn !== turn || !turn.translation || !this.slice) return;
    for (const part of turn.translation.takeOwed()) {
      noteApproval(turn, part);
      this.slice.emit(part);
    }
  }

  /**
   * One record of the in-flight turn; `cursor` is the session's cursor before it; `redelivered`: the
   * range of records a lost host may have received, when this record is in it. True when its parts
   * ask the host to act (a host tool call or an approval request, whatever the CLI's channel: MCP or
   * its own stdout): the session's checkpoint milestone.
   */
  /**
   * Before a batch of records is translated: the host calls it journals answers to (tool-result and approval
   * records of this turn), so a call shown in the same batch is shown settled, not asked again (TurnTranslation.answeredAhead).
   */
  lookAhead(turn: TurnState<S>, records: ReadonlyArray<JournalRecord>): void {
    for (const record of records) {
      if ((record.kind !== 'tool-result' && record.kind !== 'approval') || record.turnId !== turn.turnId) continue;
      if (turn.translation) turn.translation.answeredAhead.add(record.data.callId);
      else (turn.answeredAhead ??= new Set()).add(record.data.callId);
    }
  }

  record(turn: TurnState<S>, record: JournalRecord, cursor: number, redelivered?: { afterSeq: number; throughSeq: number }): boolean {
    this.flushOwed(turn);
    if (!turn.translation) {
      if (record.kind === 'turn-start') turn.firstSeq = record.seq;
      turn.translation = new TurnTranslation(this.adapter, { turnId: turn.turnId, rerun: turn.rerun }, cursor, turn.redeliverSet);
      for (const id of turn.answeredAhead ?? []) turn.translation.answeredAhead.add(id);
      delete turn.answeredAhead;
    }
    let parts = turn.translation.push(record);
    if (turn.rerun && record.kind === 'turn-start' && record.seq > cursor) parts = markRecomputed(parts, turn.turnId);
    // Carried compaction parts go to the next real turn, never into another compaction's collected parts (a failed one drops those).
    if (this.carry.length > 0 && parts.length > 0 && !this.slice?.collectOnly) {
      parts = [...parts.slice(0, 1), ...this.carry, ...parts.slice(1)];
      this.carry = [];
    }
    const slice = this.slice;
    // The recomputed / re-delivered marks in the forms the AI SDK passes on (marks.ts, docs/guarantees.md#marks).
    const block: BlockMark | undefined = turn.rerun
      ? { recomputed: { turnId: turn.turnId, ...(turn.rerunOf === undefined ? {} : { rerunOf: turn.rerunOf }) } }
      : redelivered
        ? { redelivered }
        : undefined;
    if (slice && !slice.collectOnly) {
      if (block && parts.length > 0) noteMark(slice.marks, block);
      parts = withMarks(parts, block, slice.marks);
    }
    if (turn.denied) parts = parts.filter((part) => !deniedResult(turn, part));
    for (const part of parts) noteApproval(turn, part);
    this.tellWaits(turn, parts); // before the parts reach the application, which may suspend in its emit
    if (slice) for (const part of parts) slice.emit(part);
    this.answerHeld(turn, parts);
    if (turn.interruptPending && record.kind !== 'turn-end') this.sendPendingInterrupt(turn);
    if (record.kind === 'turn-end') this.onTurnEnd(turn, record);
    return parts.some(asksHost);
  }

  /**
   * The CLI waits on the host over its own stdio (a stdin tool call, a CLI approval): the bridge cannot
   * see that itself, so a `host-wait` frame tells it, carrying the error answer / denial the CLI reads if
   * no host is attached for the owner-less timeout (protocol/v1/frames/host/host-wait.ts).
   */
  private tellWaits(turn: TurnState<S>, parts: ReadonlyArray<HarnessV1StreamPart>): void {
    const translation = turn.translation;
    // The bridge's protocol is asked only for a part that may wait (hostWaits parses its version).
    if (!translation || !parts.some(mayWait) || !this.hooks.hostWaits?.()) return;
    for (const part of parts) {
      let frame: Extract<ChannelRequest, { type: 'host-wait' }> | undefined;
      if (part.type === 'tool-call' && this.adapter.encodeToolResult) {
        const call = translation.toolCalls.get(part.toolCallId);
        if (call?.source !== 'cli' || call.answered) continue;
        const onTimeout = this.adapter.encodeToolResult({ toolCallId: part.toolCallId, output: ownerlessAnswer, isError: true }, translation.adapterState);
        frame = { type: 'host-wait', turnId: turn.turnId, callId: part.toolCallId, kind: 'tool-call', onTimeout };
      } else if (part.type === 'tool-approval-request' && this.adapter.encodeApproval) {
        const approval = translation.approvals.get(part.approvalId);
        if (approval?.source !== 'cli' || approval.answered) continue;
        const onTimeout = this.adapter.encodeApproval({ approvalId: part.approvalId, approved: false, reason: ownerlessAnswer }, translation.adapterState);
        frame = { type: 'host-wait', turnId: turn.turnId, callId: part.approvalId, kind: 'approval-request', onTimeout };
      }
      if (!frame) continue;
      this.hooks.send(frame).catch((error: unknown) => {
        this.hooks.report('warn', `the bridge did not take the wait for ${frame.callId}: ${(error as Error).message}`, { callId: frame.callId });
      });
    }
  }

  /** TurnState.interruptPending: the CLI's interrupt request, once the translator state can name it. */
  private sendPendingInterrupt(turn: TurnState<S>): void {
    const interrupt = turn.translation ? this.adapter.encodeInterrupt?.(turn.translation.adapterState) : undefined;
    if (interrupt === undefined) return;
    turn.interruptPending = false;
    this.hooks.send({ type: 'input', turnId: turn.turnId, text: interrupt }).catch(() => undefined); // the bridge's abort is under way either way
  }

  /** The re-driven turn asks again for a call the host already answered (TurnState.held): the answer goes out now. */
  private answerHeld(turn: TurnState<S>, parts: ReadonlyArray<HarnessV1StreamPart>): void {
    if (turn.held.size === 0) return;
    for (const part of parts) {
      const held = part.type === 'tool-call' ? turn.held.get(part.toolCallId) : undefined;
      if (part.type !== 'tool-call' || !held) continue;
      turn.held.delete(part.toolCallId);
      void this.submitToolResult({ toolCallId: part.toolCallId, ...held }).catch((error: unknown) => {
        this.hooks.report('warn', `the held result for ${part.toolCallId} could not be sent: ${(error as Error).message}`, { toolCallId: part.toolCallId });
      });
    }
  }

  private onTurnEnd(turn: TurnState<S>, record: Extract<JournalRecord, { kind: 'turn-end' }>): void {
    const slice = this.slice;
    // Suspended while this record's parts went out: an interrupted turn stays in flight, so the
    // resume state carries it and the next slice replays this turn-end and takes the rerun rung.
    if (record.data.reason === 'interrupted' && !turn.abortRequested && !slice) return;
    if (record.data.reason === 'interrupted' && !turn.abortRequested && slice) {
      // The bridge died while the turn ran: everything journaled was replayed;
      // the rest has to be recomputed (rung 3). The slice stays open.
      // startTurn clears the slice when the rerun frame fails (e.g. outcome-unknown after a drop):
      // reject the captured slice, or its done would never settle.
      void this.hooks.rerun(turn, slice.tools, slice).catch((error: unknown) => {
        if (this.slice === slice) this.slice = null;
        slice.reject(error);
      });
      return;
    }
    this.turn = null;
    this.slice = null;
    if (!slice) return;
    if (turn.abortRequested) slice.reject(abortError());
    else if (record.data.reason === 'spawn-failed') {
      slice.reject(new BridgeSessionError('bridge-refused', `the CLI could not be started: ${record.data.message ?? 'spawn failed'}`));
    } else {
      slice.resolve();
      this.hooks.turnEnded?.();
    }
  }

  /** The in-flight turn as a resume payload keeps it (with a translator snapshot at `cursor` when the adapter offers a small one). */
  resumeTurn(cursor: number): InFlightTurn | undefined {
    const turn = this.turn;
    if (!turn) return undefined;
    return {
      turnId: turn.turnId,
      ...(turn.firstSeq === undefined ? {} : { firstSeq: turn.firstSeq }),
      prompt: turn.prompt,
      rerun: turn.rerun,
      ...(turn.rerunOf === undefined ? {} : { rerunOf: turn.rerunOf }),
      redeliver: turn.translation ? turn.translation.unanswered() : [...turn.redeliverSet],
      ...snapshotOf(turn, cursor),
    };
  }

  /** Abort the in-flight turn when `signal` fires: the CLI's own interrupt first (if the adapter has one), then the bridge's abort. */
  watchAbort(signal: AbortSignal | undefined): void {
    if (!signal) return;
    const turn = this.turn;
    const onAbort = () => {
      if (!turn || this.turn !== turn) return;
      turn.abortRequested = true;
      // adapter.encodeInterrupt: the CLI's own interrupt request goes first (it names ids from the translator state).
      const interrupt = turn.translation ? this.adapter.encodeInterrupt?.(turn.translation.adapterState) : undefined;
      if (interrupt === undefined && this.adapter.encodeInterrupt) turn.interruptPending = true;
      const sent = interrupt === undefined ? Promise.resolve() : this.hooks.send({ type: 'input', turnId: turn.turnId, text: interrupt }).then(() => undefined);
      sent.then(() => this.hooks.send({ type: 'abort', turnId: turn.turnId })).catch((error) => {
        const settle = () => {
          if (this.turn !== turn) return;
          this.turn = null;
          this.fail(abortError(signal.reason));
        };
        if ((error as { cause?: { code?: string } }).cause?.code === 'unknown-turn') {
          // The turn ended before the abort arrived (the CLI honoured the interrupt first). Its
          // turn-end record is journaled and on its way — the bridge's error reply can overtake
          // it — so let that record settle the slice (as aborted), with every part it carries.
          setTimeout(settle, HOST_SESSION_LIMITS.lifecycleTimeoutMs).unref();
          return;
        }
        // The bridge could not abort (channel gone): settle now.
        this.hooks.report('warn', `abort of ${turn.turnId} failed: ${(error as Error).message}`, {});
        settle();
      });
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }

  // ---- the control handle ----------------------------------------------------

  private async submitToolResult(input: { toolCallId: string; output: unknown; isError?: boolean }): Promise<void> {
    const turn = this.requireTurn();
    // @ai-sdk/harness answers a host tool it denied (toolApproval) with an execution-denied output: no echo for it (deniedResult).
    if (isExecutionDenied(input.output)) (turn.denied ??= new Set()).add(input.toolCallId);
    const call = (await this.knownRequest(turn, (translation) => translation.toolCalls.get(input.toolCallId))) ?? undefined;
    const encode = this.adapter.encodeToolResult;
    try {
      if (call?.source === 'cli' && encode) {
        const text = encode({ toolCallId: input.toolCallId, output: input.output, isError: input.isError ?? false }, turn.translation!.adapterState);
        await this.hooks.send({
          type: 'input',
          turnId: turn.turnId,
          text,
          ...this.answering(input.toolCallId, { output: input.output ?? null, isError: input.isError ?? false }),
        });
      } else {
        await this.hooks.send({ type: 'tool-result', callId: input.toolCallId, output: input.output ?? null, isError: input.isError ?? false });
      }
    } catch (error) {
      // A taken-over turn whose producer is gone (the bridge does not run it): keep the answer for the
      // re-driven turn (TurnState.held). A turn the bridge still runs (an adopted CLI) refuses for real.
      const code = (error as { cause?: { code?: string } }).cause?.code;
      // The journal answered it already (the owner-less timeout failed it while no host was attached):
      // refused for good, never kept for a re-driven turn.
      if (call?.answered === true && code === 'unknown-call') {
        throw new BridgeSessionError('bridge-refused', `call ${input.toolCallId} was already answered in the journal (failed by the owner-less timeout while no host was attached); this answer is not delivered`, error);
      }
      if (!turn.restored || (code !== 'unknown-turn' && code !== 'unknown-call') || this.hooks.turnRunning(turn.turnId)) throw error;
      turn.held.set(input.toolCallId, { output: input.output, isError: input.isError ?? false });
      this.hooks.report('info', `the bridge no longer runs the turn that asked for ${input.toolCallId}; its result is kept for the re-driven turn`, {
        toolCallId: input.toolCallId,
        turnId: turn.turnId,
      });
      return;
    }
    if (call) call.answered = true;
    turn.redeliverSet.delete(input.toolCallId);
    // The answer is echoed from its journaled tool-result record (TurnTranslation): the bridge journals the host's
    // result for a call over MCP, and for a stdin call when the input frame carries it (protocol 1.1). A bridge
    // older than that journals only the stdin bytes: the echo goes out from here.
    if (call?.source === 'cli' && !this.hooks.hostWaits?.() && this.turn === turn && !isExecutionDenied(input.output)) {
      this.slice?.emit(hostToolResult(input.toolCallId, call.toolName ?? '', input.output, input.isError ?? false));
    }
  }

  private async submitToolApproval(input: { approvalId: string; approved: boolean; reason?: string }): Promise<void> {
    const turn = this.requireTurn();
    const approval = await this.knownRequest(turn, (translation) => translation.approvals.get(input.approvalId));
    const encode = this.adapter.encodeApproval;
    // Marked before the answer goes: the CLI's reply to it (its error result) may arrive before the ack does.
    if (!input.approved) (turn.denied ??= new Set()).add(turn.approvalCalls?.get(input.approvalId) ?? input.approvalId);
    if (approval?.source === 'cli' && encode) {
      await this.hooks.send({ type: 'input', turnId: turn.turnId, text: encode(input, turn.translation!.adapterState), ...this.answering(input.approvalId) });
    } else {
      await this.hooks.send({
        type: 'approval',
        callId: input.approvalId,
        approved: input.approved,
        ...(input.reason === undefined ? {} : { reason: input.reason }),
      });
    }
    if (approval) approval.answered = true;
    turn.redeliverSet.delete(input.approvalId);
  }

  private async submitUserMessage(text: string): Promise<void> {
    const turn = this.requireTurn();
    const state = turn.translation?.adapterState ?? this.adapter.translator.init({ turnId: turn.turnId, rerun: turn.rerun });
    await this.hooks.send({ type: 'input', turnId: turn.turnId, text: this.adapter.encodeUserMessage!(text, state) });
  }

  /** The `input` answering a CLI-side call names it (protocol 1.1): the bridge stops waiting, or refuses once the owner-less timeout failed it. */
  private answering(callId: string, answer?: { output: unknown; isError: boolean }): { callId?: string; answer?: { output: unknown; isError: boolean } } {
    if (!this.hooks.hostWaits?.()) return {};
    return answer === undefined ? { callId } : { callId, answer };
  }

  /**
   * The call or approval an answer is for, as the turn's translation knows it. A slice that replays the turn
   * (a continue in the same process: a fresh translation from its first record) may be asked before the replay
   * reached it: the answer waits until the channel is caught up, so it takes the call's own route (the CLI's
   * stdin or the bridge).
   */
  private async knownRequest<T>(turn: TurnState<S>, find: (translation: TurnTranslation<S>) => T | undefined): Promise<T | undefined> {
    const known = turn.translation ? find(turn.translation) : undefined;
    if (known !== undefined || !this.hooks.caughtUp) return known;
    await this.hooks.caughtUp().catch(() => undefined);
    return turn.translation ? find(turn.translation) : undefined;
  }

  private requireTurn(): TurnState<S> {
    if (!this.turn) throw new BridgeSessionError('no-turn', 'no turn is in flight');
    return this.turn;
  }
}

/** A translator snapshot for the resume payload, when the adapter offers one and it is small. */
function snapshotOf<S>(turn: TurnState<S>, cursor: number): { snapshot?: TranslationSnapshot } {
  const snapshot = turn.translation?.snapshot(cursor) ?? (turn.snapshot?.seq === cursor ? turn.snapshot : undefined);
  if (!snapshot || JSON.stringify(snapshot).length > HOST_SESSION_LIMITS.maxSnapshotChars) return {};
  return { snapshot };
}

/** Remembers which tool call an approval request delivered to the host is for. */
function noteApproval<S>(turn: TurnState<S>, part: HarnessV1StreamPart): void {
  if (part.type === 'tool-approval-request') (turn.approvalCalls ??= new Map()).set(part.approvalId, part.toolCallId);
}

/**
 * The result of a call the host denied that is the denial itself: the CLI's error result, or the echo of the
 * host's execution-denied answer. @ai-sdk/harness shows a denial by the approval response it sends itself (the
 * UI tool part `approval-responded`, approved false, the reason: what useChat shows and convertToModelMessages
 * reads as execution-denied); this result would turn the part into an error or an output
 * (docs/guarantees.md#denial). A result that says the tool ran all the same is passed on.
 */
function deniedResult<S>(turn: TurnState<S>, part: HarnessV1StreamPart): boolean {
  return part.type === 'tool-result' && turn.denied!.has(part.toolCallId) && (part.isError === true || isExecutionDenied(part.result));
}

/** An AI SDK tool output that says the call was denied (`{ type: 'execution-denied', reason? }`). */
function isExecutionDenied(output: unknown): boolean {
  return typeof output === 'object' && output !== null && (output as { type?: unknown }).type === 'execution-denied';
}

/** A part the CLI may wait on over its own stdio (tellWaits). */
function mayWait(part: HarnessV1StreamPart): boolean {
  return part.type === 'tool-call' || part.type === 'tool-approval-request';
}

/** A part the host must answer: a host tool call (not run by the CLI itself) or an approval request. */
function asksHost(part: HarnessV1StreamPart): boolean {
  return (part.type === 'tool-call' && part.providerExecuted !== true) || part.type === 'tool-approval-request';
}
