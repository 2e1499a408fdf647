// The generic HarnessV1Session over a bridge (every adapter gets it). It owns
// the session's cursor, the in-flight turn, the slice that consumes it, and
// the lifecycle (suspend, detach, stop, destroy). Records arrive in seq order
// exactly once from the channel; TurnTranslation turns them into parts.
// Resume payloads and the ladder live in resume-state.ts and ladder.ts.
import { randomBytes } from 'node:crypto';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import type {
  HarnessV1ContinueTurnOptions,
  HarnessV1PromptControl,
  HarnessV1PromptTurnOptions,
  HarnessV1ResumeState,
  HarnessV1Session,
  HarnessV1ToolSpec,
} from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { launchSpecSchema, type AckFrame, type JournalRecord } from '../../protocol/v1/index.ts';
import type { LaunchMode } from '../adapter-kit/adapter.ts';
import type { ChannelRequest } from '../channel/requests.ts';
import type { BridgeLink, Rung } from '../reach/ladder.ts';
import { toResumeState, type InFlightTurn, type ResumeData } from './resume-state.ts';
import { abortError } from './abort-error.ts';
import { BridgeSessionError } from './errors.ts';
import { HOST_SESSION_LIMITS } from '../limits.ts';
import { markRecomputed, TurnTranslation, type TranslationSnapshot } from '../adapter-kit/turn-translation.ts';
import type { SessionChannel, SessionContext, SessionInit } from './session-types.ts';
import { forceDestroy, promptText, toHostTool } from './session-util.ts';
import { WriteLog } from './write-log.ts';
import { sendRequest, type SendContext } from './send-request.ts';

export type { OpenChannel, SessionChannel, SessionContext, SessionInit } from './session-types.ts';
export { promptText } from './session-util.ts';

type CompactionPart = Extract<HarnessV1StreamPart, { type: 'compaction' }>;

type TurnState<S> = InFlightTurn & {
  translation: TurnTranslation<S> | undefined;
  abortRequested: boolean;
  redeliverSet: Set<string>;
};

type Slice = {
  emit: (part: HarnessV1StreamPart) => void;
  resolve: () => void;
  reject: (error: unknown) => void;
  tools: ReadonlyArray<HarnessV1ToolSpec>;
  /** Parts are collected instead of emitted (doCompact's internal turn). */
  collectOnly: boolean;
};

export class BridgeSession<S> implements HarnessV1Session {
  readonly sessionId: string;
  readonly isResume: boolean;
  readonly modelId?: string;
  /** Rungs of the recovery ladder this instance used, in order (for reports and tests). */
  readonly rungs: Rung[];

  private link: BridgeLink;
  private channel: SessionChannel | null = null;
  private cursor: number;
  private threadId: string | undefined;
  private prompted: boolean;
  private turn: TurnState<S> | null = null;
  private slice: Slice | null = null;
  private pendingRerun: boolean;
  private closed = false;
  /** Recent turn starts and stdin writes, to settle requests whose ack a dropped connection swallowed. */
  private readonly writes = new WriteLog(HOST_SESSION_LIMITS.maxRememberedWrites);
  /** Parts a compaction produced between turns, emitted on the next turn. */
  private carryParts: CompactionPart[] = [];

  constructor(
    private readonly ctx: SessionContext<S>,
    init: SessionInit,
  ) {
    this.sessionId = ctx.sessionId;
    this.isResume = init.isResume;
    if (ctx.adapter.modelId !== undefined) this.modelId = ctx.adapter.modelId;
    this.link = init.link;
    this.rungs = init.rungs;
    const resume = init.resume;
    this.cursor = resume?.cursor ?? 0;
    this.threadId = resume?.threadId;
    this.prompted = resume?.prompted ?? false;
    this.pendingRerun = init.rungs.includes('rerun') && resume?.turn !== undefined;
    if (resume?.carry) this.carryParts = [...resume.carry];
    if (resume?.turn) {
      this.turn = { ...resume.turn, translation: undefined, abortRequested: false, redeliverSet: new Set(resume.turn.redeliver) };
    }
    if (init.rungs.length > 0) {
      const recomputed = init.rungs.includes('rerun');
      this.report(recomputed ? 'warn' : 'info', `resumed via ${init.rungs.join(' → ')}${recomputed ? ' (the in-flight turn will be recomputed)' : ''}`, {
        rungs: init.rungs.join(','),
        recomputed,
        cursor: this.cursor,
      });
    }
  }

  // ---- turns -------------------------------------------------------------

  async doPromptTurn(options: HarnessV1PromptTurnOptions): Promise<HarnessV1PromptControl> {
    this.assertOpen();
    if (this.turn) throw new BridgeSessionError('turn-busy', `turn ${this.turn.turnId} is still in flight; continue or suspend it first`);
    const text = promptText(options.prompt);
    const instructions = !this.prompted && !this.isResume ? options.instructions : undefined;
    const tools = options.tools ?? [];
    await this.ensureThread(tools);
    const { control, done } = this.beginSlice(options.emit, tools, false);
    await this.startTurn({ prompt: text, instructions, tools, rerunOf: undefined });
    this.prompted = true;
    this.watchAbort(options.abortSignal);
    void done;
    return control;
  }

  async doContinueTurn(options: HarnessV1ContinueTurnOptions): Promise<HarnessV1PromptControl> {
    this.assertOpen();
    const turn = this.turn;
    if (!turn) throw new BridgeSessionError('no-turn', 'there is no suspended turn to continue');
    const tools = options.tools ?? [];
    const { control } = this.beginSlice(options.emit, tools, false);
    if (this.pendingRerun) {
      this.pendingRerun = false;
      await this.rerun(turn, tools);
    } else {
      // With a translator snapshot taken at the cursor, attach right there; otherwise replay the
      // turn from its first record through a fresh translator (parts up to the cursor are suppressed).
      const snapshot = turn.snapshot;
      const restored =
        snapshot && snapshot.seq === this.cursor
          ? TurnTranslation.restore(this.ctx.adapter, { turnId: turn.turnId, rerun: turn.rerun }, snapshot, turn.redeliverSet)
          : null;
      turn.translation = restored ?? undefined;
      await this.openChannel(restored ? this.cursor : turn.firstSeq !== undefined ? turn.firstSeq - 1 : this.cursor);
      if (turn.firstSeq === undefined) await this.restartIfNeverStarted(turn, tools);
      // Redeliveries go out after the caller holds the control handle (it may answer them at once),
      // and before any record of this slice (onTurnRecord flushes them first if records win the race).
      if (restored) setImmediate(() => this.flushOwed(turn));
    }
    this.watchAbort(options.abortSignal);
    return control;
  }

  async doSuspendTurn(): Promise<HarnessV1ResumeState> {
    this.assertOpen();
    await this.detachChannel();
    this.slice?.resolve();
    this.slice = null;
    return this.resumeState('suspend');
  }

  async doCompact(customInstructions?: string): Promise<void> {
    this.assertOpen();
    const encode = this.ctx.adapter.encodeCompact;
    if (!encode) {
      throw new HarnessCapabilityUnsupportedError({
        message: `${this.ctx.adapter.harnessId} cannot compact on request`,
        harnessId: this.ctx.adapter.harnessId,
      });
    }
    const input = encode(customInstructions, { threadId: this.threadId, duringTurn: this.turn !== null });
    if (this.turn) {
      await this.send({ type: 'input', turnId: this.turn.turnId, text: input });
      return;
    }
    const collected: HarnessV1StreamPart[] = [];
    const { done } = this.beginSlice((part) => collected.push(part), [], true);
    await this.startTurn({ prompt: '', instructions: undefined, tools: [], rerunOf: undefined, input });
    await done;
    const failure = compactFailure(collected);
    if (failure !== null) throw new BridgeSessionError('compact-failed', `${this.ctx.adapter.harnessId} did not compact: ${failure}`);
    this.carryParts.push(...collected.filter((part): part is CompactionPart => part.type === 'compaction'));
  }

  // ---- lifecycle ---------------------------------------------------------

  async doDetach(): Promise<HarnessV1ResumeState> {
    this.assertOpen();
    await this.detachChannel();
    this.slice?.resolve();
    this.slice = null;
    this.closed = true;
    return this.resumeState(this.turn ? 'suspend' : 'detach');
  }

  async doStop(): Promise<HarnessV1ResumeState> {
    this.assertOpen();
    await this.ensureChannel();
    await this.send({ type: 'stop' }, HOST_SESSION_LIMITS.lifecycleTimeoutMs);
    await this.detachChannel();
    this.slice?.resolve();
    this.slice = null;
    this.closed = true;
    return this.resumeState('stop');
  }

  async doDestroy(): Promise<void> {
    if (this.closed) return;
    try {
      await this.ensureChannel();
      await this.send({ type: 'destroy' }, HOST_SESSION_LIMITS.lifecycleTimeoutMs);
    } catch (error) {
      // The bridge is unreachable or refused: destroy must still leave nothing behind.
      this.report('warn', `bridge did not acknowledge destroy (${(error as Error).message}); removing its state from the sandbox`, {});
      await forceDestroy(this.ctx.sandbox, this.ctx.stateDir);
    } finally {
      await this.detachChannel();
      this.slice?.reject(new BridgeSessionError('session-closed', 'the session was destroyed'));
      this.slice = null;
      this.turn = null;
      this.closed = true;
    }
  }

  // ---- internals: slices and turns ------------------------------------------

  private beginSlice(
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
    this.slice = { emit, resolve, reject, tools, collectOnly };
    const control: HarnessV1PromptControl = {
      done,
      submitToolResult: (input) => this.submitToolResult(input),
      submitToolApproval: (input) => this.submitToolApproval(input),
      ...(this.ctx.adapter.encodeUserMessage ? { submitUserMessage: (text: string) => this.submitUserMessage(text) } : {}),
    };
    return { control, done };
  }

  private async startTurn(request: {
    prompt: string;
    instructions: string | undefined;
    tools: ReadonlyArray<HarnessV1ToolSpec>;
    rerunOf: string | undefined;
    input?: string;
  }): Promise<void> {
    await this.ensureChannel();
    const rerun = request.rerunOf !== undefined;
    const turnId = `turn-${this.cursor + 1}-${randomBytes(3).toString('hex')}`;
    const mode: LaunchMode = rerun ? 'rerun' : this.threadId ? 'resume' : 'fresh';
    const adapter = this.ctx.adapter;
    // The adapter's spec is validated (and defaulted) here, not at the bridge, so a bad adapter fails loudly in the host.
    const launch = launchSpecSchema.parse(adapter.launch({
      mode,
      threadId: this.threadId,
      prompt: request.prompt,
      sessionWorkDir: this.ctx.sessionWorkDir,
      bootstrapDir: this.ctx.bootstrapDir,
      stateDir: this.ctx.stateDir,
      permissionMode: this.ctx.permissionMode,
      tools: request.tools,
      mcp: this.ctx.mcp,
      modelId: adapter.modelId,
    }));
    const input =
      request.input ??
      adapter.encodePrompt?.({
        text: request.prompt,
        instructions: request.instructions,
        skills: this.ctx.skills,
        threadId: this.threadId,
        permissionMode: this.ctx.permissionMode,
      });
    this.turn = {
      turnId,
      prompt: request.prompt,
      rerun,
      ...(request.rerunOf === undefined ? {} : { rerunOf: request.rerunOf }),
      redeliver: [],
      redeliverSet: new Set(),
      translation: undefined,
      abortRequested: false,
    };
    const tools = request.tools.map(toHostTool);
    const frame: ChannelRequest = rerun
      ? { type: 'rerun', turnId, of: request.rerunOf!, launch, ...(input === undefined ? {} : { input }), tools }
      : { type: 'start', turnId, launch, ...(input === undefined ? {} : { input }), tools };
    const channel = this.channel;
    try {
      await this.send(frame);
    } catch (error) {
      // Suspended or detached while the ack was in flight: the turn may well be running (its
      // records can arrive before the ack); the resume state keeps it and the next slice finds out.
      if (this.channel !== channel && this.turn?.turnId === turnId) return;
      if (this.turn?.turnId === turnId) this.turn = null;
      this.slice = null;
      throw error;
    }
  }

  /**
   * The previous slice was suspended before the turn's turn-start arrived: its start (or rerun) may
   * never have reached the bridge — the suspend can close the socket under the request. Once caught
   * up, the journal says: started → keep consuming; not started → send it again as a new turn.
   */
  private async restartIfNeverStarted(turn: TurnState<S>, tools: ReadonlyArray<HarnessV1ToolSpec>): Promise<void> {
    const channel = this.channel;
    if (!channel) return;
    await channel.whenLive();
    if (this.turn !== turn || turn.firstSeq !== undefined) return;
    if (this.writes.turnStarted(turn.turnId, channel.hello)) return;
    this.report('info', `turn ${turn.turnId} never reached the bridge before the suspend; starting it again`, { turnId: turn.turnId });
    this.turn = null;
    await this.startTurn({ prompt: turn.prompt, instructions: undefined, tools, rerunOf: turn.rerun && turn.rerunOf !== undefined ? turn.rerunOf : undefined });
  }

  /** Rung 3: re-drive the CLI's thread; the new turn's parts are marked recomputed. */
  private async rerun(turn: TurnState<S>, tools: ReadonlyArray<HarnessV1ToolSpec>, slice: Slice | null = this.slice): Promise<void> {
    this.report('warn', `turn ${turn.turnId} lost its producer; re-driving the CLI thread (recomputed)`, {
      rung: 'rerun',
      turnId: turn.turnId,
      threadId: this.threadId ?? null,
    });
    if (!this.rungs.includes('rerun')) this.rungs.push('rerun');
    if (this.ctx.adapter.encodeThreadStart && this.threadId === undefined) {
      // The turn died before its thread existed: nothing to re-drive; the recomputed turn starts one.
      await this.ensureThread(tools);
      this.slice = slice;
    }
    // Suspended or detached since the rerun was decided: no new turn from this slice (it would open
    // a channel the suspend just closed); the resume state still holds the interrupted turn.
    if (this.slice !== slice || this.closed) return;
    await this.startTurn({ prompt: turn.prompt, instructions: undefined, tools, rerunOf: turn.turnId });
  }

  /**
   * adapter.encodeThreadStart: while the session has no CLI thread, run the thread-start exchange
   * as an internal turn (parts dropped) so the prompt's encoder gets the thread id. The turn carries
   * the prompt's tools: a CLI that connects to the MCP endpoint at thread start lists them then.
   */
  private async ensureThread(tools: ReadonlyArray<HarnessV1ToolSpec>): Promise<void> {
    const encode = this.ctx.adapter.encodeThreadStart;
    if (!encode || this.threadId !== undefined) return;
    const { done } = this.beginSlice(() => undefined, tools, true);
    await this.startTurn({ prompt: '', instructions: undefined, tools, rerunOf: undefined, input: encode() });
    await done;
    if (this.threadId === undefined) {
      throw new BridgeSessionError('bridge-refused', `${this.ctx.adapter.harnessId} started no thread: its thread-start exchange revealed no thread id`);
    }
  }

  private onRecords(channel: SessionChannel, records: ReadonlyArray<JournalRecord>): void {
    for (const record of records) {
      // Suspended, detached or re-attached mid-batch: stop at this record boundary; the next slice replays the rest.
      if (this.channel !== channel) return;
      const thread = this.ctx.adapter.threadId(record);
      if (thread !== undefined) this.threadId = thread;
      if (record.kind === 'turn-start' || record.kind === 'stdin') this.writes.remember(record);
      const turn = this.turn;
      if (turn && record.turnId === turn.turnId) this.onTurnRecord(turn, record);
      if (record.seq > this.cursor) this.cursor = record.seq;
    }
  }

  private flushOwed(turn: TurnState<S>): void {
    if (this.turn !== turn || !turn.translation || !this.slice) return;
    for (const part of turn.translation.takeOwed()) this.slice.emit(part);
  }

  private onTurnRecord(turn: TurnState<S>, record: JournalRecord): void {
    this.flushOwed(turn);
    if (!turn.translation) {
      if (record.kind === 'turn-start') turn.firstSeq = record.seq;
      turn.translation = new TurnTranslation(this.ctx.adapter, { turnId: turn.turnId, rerun: turn.rerun }, this.cursor, turn.redeliverSet);
    }
    let parts = turn.translation.push(record);
    if (turn.rerun && record.kind === 'turn-start' && record.seq > this.cursor) parts = markRecomputed(parts, turn.turnId);
    // Carried compaction parts go to the next real turn, never into another compaction's collected parts (a failed one drops those).
    if (this.carryParts.length > 0 && parts.length > 0 && !this.slice?.collectOnly) {
      parts = [...parts.slice(0, 1), ...this.carryParts, ...parts.slice(1)];
      this.carryParts = [];
    }
    const slice = this.slice;
    if (slice) for (const part of parts) slice.emit(part);
    if (record.kind === 'turn-end') this.onTurnEnd(turn, record);
  }

  private onTurnEnd(turn: TurnState<S>, record: Extract<JournalRecord, { kind: 'turn-end' }>): void {
    const slice = this.slice;
    // Suspended while this record's parts went out: an interrupted turn stays in flight, so the
    // resume state carries it and the next slice replays this turn-end and takes the rerun rung.
    if (record.data.reason === 'interrupted' && !turn.abortRequested && !slice) return;
    if (record.data.reason === 'interrupted' && !turn.abortRequested && slice) {
      // The bridge died while the turn ran: everything journaled was replayed;
      // the rest has to be recomputed (rung 3). The slice stays open.
      // startTurn clears this.slice when the rerun frame fails (e.g. outcome-unknown after a drop):
      // reject the captured slice, or its done would never settle.
      void this.rerun(turn, slice.tools, slice).catch((error: unknown) => {
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
    } else slice.resolve();
  }

  private failSlice(error: unknown): void {
    const slice = this.slice;
    this.slice = null;
    slice?.reject(error);
  }

  private watchAbort(signal: AbortSignal | undefined): void {
    if (!signal) return;
    const turn = this.turn;
    const onAbort = () => {
      if (!turn || this.turn !== turn) return;
      turn.abortRequested = true;
      // adapter.encodeInterrupt: the CLI's own interrupt request goes first (it names ids from the translator state).
      const interrupt = turn.translation ? this.ctx.adapter.encodeInterrupt?.(turn.translation.adapterState) : undefined;
      const sent = interrupt === undefined ? Promise.resolve() : this.send({ type: 'input', turnId: turn.turnId, text: interrupt }).then(() => undefined);
      sent.then(() => this.send({ type: 'abort', turnId: turn.turnId })).catch((error) => {
        const settle = () => {
          if (this.turn !== turn) return;
          this.turn = null;
          this.failSlice(abortError(signal.reason));
        };
        if ((error as { cause?: { code?: string } }).cause?.code === 'unknown-turn') {
          // The turn ended before the abort arrived (the CLI honoured the interrupt first). Its
          // turn-end record is journaled and on its way — the bridge's error reply can overtake
          // it — so let that record settle the slice (as aborted), with every part it carries.
          setTimeout(settle, HOST_SESSION_LIMITS.lifecycleTimeoutMs).unref();
          return;
        }
        // The bridge could not abort (channel gone): settle now.
        this.report('warn', `abort of ${turn.turnId} failed: ${(error as Error).message}`, {});
        settle();
      });
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }

  // ---- internals: control handle ------------------------------------------

  private async submitToolResult(input: { toolCallId: string; output: unknown; isError?: boolean }): Promise<void> {
    const turn = this.requireTurn();
    const call = turn.translation?.toolCalls.get(input.toolCallId);
    const encode = this.ctx.adapter.encodeToolResult;
    if (call?.source === 'cli' && encode) {
      const text = encode({ toolCallId: input.toolCallId, output: input.output, isError: input.isError ?? false }, turn.translation!.adapterState);
      await this.send({ type: 'input', turnId: turn.turnId, text });
    } else {
      await this.send({ type: 'tool-result', callId: input.toolCallId, output: input.output ?? null, isError: input.isError ?? false });
    }
    if (call) call.answered = true;
    turn.redeliverSet.delete(input.toolCallId);
  }

  private async submitToolApproval(input: { approvalId: string; approved: boolean; reason?: string }): Promise<void> {
    const turn = this.requireTurn();
    const approval = turn.translation?.approvals.get(input.approvalId);
    const encode = this.ctx.adapter.encodeApproval;
    if (approval?.source === 'cli' && encode) {
      await this.send({ type: 'input', turnId: turn.turnId, text: encode(input, turn.translation!.adapterState) });
    } else {
      await this.send({
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
    const state = turn.translation?.adapterState ?? this.ctx.adapter.translator.init({ turnId: turn.turnId, rerun: turn.rerun });
    await this.send({ type: 'input', turnId: turn.turnId, text: this.ctx.adapter.encodeUserMessage!(text, state) });
  }

  // ---- internals: channel ---------------------------------------------------

  private async ensureChannel(): Promise<void> {
    if (!this.channel) await this.openChannel(this.cursor);
  }

  private async openChannel(cursor: number): Promise<void> {
    await this.detachChannel();
    const channel = this.ctx.openChannel({
      url: this.link.url,
      token: this.link.token,
      cursor,
      journalId: this.link.hello.journalId,
      onRecords: (records) => this.onRecords(channel, records),
      onTerminal: (error) => {
        if (this.channel !== channel) return;
        this.channel = null;
        const message = `lost the bridge at cursor ${this.cursor}: ${error.message}`;
        this.report('error', message, { cursor: this.cursor });
        this.failSlice(new BridgeSessionError('channel-lost', message, error));
      },
    });
    this.channel = channel;
  }

  private async detachChannel(): Promise<void> {
    const channel = this.channel;
    this.channel = null;
    if (channel) await channel.close();
  }

  /** One request to the bridge; a lost ack is settled from the journal (session-send.ts). */
  private send(frame: ChannelRequest, timeoutMs?: number): Promise<AckFrame> {
    return sendRequest(this.sendContext, frame, timeoutMs);
  }

  private readonly sendContext: SendContext = {
    channel: () => this.channel,
    cursor: () => this.cursor,
    writes: this.writes,
    report: (level, message, attrs) => this.report(level, message, attrs),
  };

  // ---- internals: misc -------------------------------------------------------

  private resumeState(reason: ResumeData['reason']): HarnessV1ResumeState {
    const turn = this.turn;
    const data: ResumeData = {
      v: 1,
      stateDir: this.ctx.stateDir,
      bootstrapDir: this.ctx.bootstrapDir,
      journalId: this.link.hello.journalId,
      bridgeId: this.link.hello.bridgeId,
      port: this.link.port,
      cursor: this.cursor,
      prompted: this.prompted,
      reason,
      ...(this.threadId === undefined ? {} : { threadId: this.threadId }),
      ...(this.carryParts.length === 0 ? {} : { carry: this.carryParts }),
      ...(turn
        ? {
            turn: {
              turnId: turn.turnId,
              ...(turn.firstSeq === undefined ? {} : { firstSeq: turn.firstSeq }),
              prompt: turn.prompt,
              rerun: turn.rerun,
              ...(turn.rerunOf === undefined ? {} : { rerunOf: turn.rerunOf }),
              redeliver: turn.translation ? turn.translation.unanswered() : [...turn.redeliverSet],
              ...this.snapshotOf(turn),
            },
          }
        : {}),
    };
    return toResumeState(this.ctx.adapter.harnessId, data);
  }

  /** A translator snapshot for the resume payload, when the adapter offers one and it is small. */
  private snapshotOf(turn: TurnState<S>): { snapshot?: TranslationSnapshot } {
    const snapshot = turn.translation?.snapshot(this.cursor) ?? (turn.snapshot?.seq === this.cursor ? turn.snapshot : undefined);
    if (!snapshot || JSON.stringify(snapshot).length > HOST_SESSION_LIMITS.maxSnapshotChars) return {};
    return { snapshot };
  }

  private requireTurn(): TurnState<S> {
    if (!this.turn) throw new BridgeSessionError('no-turn', 'no turn is in flight');
    return this.turn;
  }

  private assertOpen(): void {
    if (this.closed) throw new BridgeSessionError('session-closed', 'this session instance was detached, stopped or destroyed');
  }

  private report(level: HarnessV1Diagnostic['level'], message: string, attrs: Record<string, unknown>): void {
    this.ctx.observability?.report?.({
      level,
      message,
      subsystem: 'harness-bridge.session',
      kind: 'event',
      attrs,
      sessionId: this.sessionId,
      timestamp: Date.now(),
    });
  }
}

/** Why doCompact's internal turn failed (its error parts, or an error finish), or null when it did not. */
function compactFailure(parts: HarnessV1StreamPart[]): string | null {
  const errors = parts.flatMap((part) => (part.type === 'error' ? [errorText(part.error)] : []));
  const finish = parts.find((part) => part.type === 'finish');
  if (errors.length === 0 && !(finish?.type === 'finish' && finish.finishReason.unified === 'error')) return null;
  const reason = finish?.type === 'finish' ? `turn finished ${finish.finishReason.unified} (${finish.finishReason.raw ?? 'no raw reason'})` : 'no finish';
  return errors.length > 0 ? `${errors.join('; ')}; ${reason}` : reason;
}

/** An error part's error as text: adapters emit Errors, `{ message }` objects or strings. */
function errorText(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
