// The generic HarnessV1Session over a bridge (every adapter gets it). It owns
// the session's cursor, its channel, when turns start (prompt, continue,
// compact, the rerun rung) and the lifecycle (suspend, detach, stop,
// destroy). Records arrive in seq order exactly once from the channel; the
// in-flight turn and the slice consuming it are turn-consumer.ts. Resume
// payloads and the ladder live in resume-state.ts and ladder.ts.
import { createHash, randomBytes } from 'node:crypto';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import type {
  HarnessV1ContinueTurnOptions,
  HarnessV1ContinueTurnState,
  HarnessV1PromptControl,
  HarnessV1PromptTurnOptions,
  HarnessV1ResponseFormat,
  HarnessV1ResumeSessionState,
  HarnessV1Session,
  HarnessV1Skill,
  HarnessV1ToolSpec,
} from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { protocolMinor, type AckFrame, type HelloFrame, type JournalRecord } from '../../protocol/v1/index.ts';
import { TurnTranslation } from '../adapter-kit/turn-translation.ts';
import type { ChannelRequest } from '../channel/index.ts';
import { HOST_SESSION_LIMITS } from '../limits.ts';
import type { BridgeLink, Rung } from '../reach/ladder.ts';
import { compactFailure } from './compact-failure.ts';
import { BridgeSessionError } from './errors.ts';
import { forceDestroy } from './force-destroy.ts';
import { promptText } from './prompt.ts';
import { toContinueState, toResumeSessionState, type ResumeData } from './resume-state.ts';
import { removeSandboxFiles } from './remove-files.ts';
import { ResponderRun } from './responder-run.ts';
import { sandboxResponderIo } from '../adapter-kit/responder.ts';
import { sendRequest, type SendContext } from './send-request.ts';
import type { SessionChannel, SessionContext, SessionInit } from './session-types.ts';
import { hostToolsKey, withHostToolsKey } from './host-tools-key.ts';
import { startFrame, type TurnRequest } from './start-frame.ts';
import { expectedLaunch } from './expected-launch.ts';
import { TurnConsumer, type CompactionPart, type Slice, type TurnState } from './turn-consumer.ts';
import { WriteLog } from './write-log.ts';
import { markPhase } from '../phase-marks.ts';
import { revivedReport } from './self-heal.ts';

export type { CheckpointPolicy, OpenChannel, SessionChannel, SessionContext, SessionInit } from './session-types.ts';
export { promptText } from './prompt.ts';

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
  /** The in-flight turn, the slice consuming it, and compaction parts carried to the next turn. */
  private readonly consumer: TurnConsumer<S>;
  /** adapter.responder: answers the CLI's requests to its host (responder-run.ts). */
  private readonly responder: ResponderRun | undefined;
  private pendingRerun: boolean;
  /** Records after `after` up to `through` may have reached a host that is gone: their parts are marked re-delivered (redeliveryMarker). */
  private redelivery: { after: number; through: number; begun: boolean } | undefined;
  /** Fencing (docs/design.md#d3): the epoch this instance took (the state's + 1; 1 when fresh) and its id, sent with every attach. */
  private readonly owner: { epoch: number; id: string };
  /** The journal was found behind this cursor (rebaseOnLostJournal): the first channel asks the bridge for a new journal id. */
  private behindCursor: number | undefined;
  /** The cursor of the last checkpoint handed to onCheckpoint. */
  private checkpointCursor = 0;
  /** The journal was gone or behind at resume (rebaseOnLostJournal): a rerun of a turn it does not hold goes out as a start. */
  private journalRebased = false;
  private closed = false;
  /**
   * Bumped by every suspend, detach, stop and destroy, as it begins. A slice remembers the value it began
   * under (sliceGeneration): work it started before one of those (its start, a rerun, a restart) opens no
   * connection and starts no turn after it, so nothing of this host runs on once the suspend has resolved.
   */
  private generation = 0;
  private sliceGeneration = 0;
  /** Started from a suspend's state and not yet continued: a continue that finds no turn (it ended before the suspend took) finishes empty. */
  private fromSuspend: boolean;
  /** The model the caller chose for the latest turn; internal turns and reruns keep it (undefined: the adapter's). */
  private model: string | undefined;
  /** The first turn's `expect` while it is on its way (expectFirstTurn). */
  private expected: Promise<void> | undefined;
  /** The host-tool set of the last turn started (host-tools-key.ts): internal turns keep it. */
  private toolsKey: string | undefined;
  /** The tools of the last prompt turn: the next one likely has them too (expectNextTurn). */
  private lastTools: ReadonlyArray<HarnessV1ToolSpec> = [];
  /** SHA-256 of the instructions last sent to the CLI. */
  private instructionsDigest: string | undefined;
  /** The skill files the CLI sees now (ResumeData.skills). */
  private skills: { digest: string; paths: string[] } | undefined;
  /** Recent turn starts and stdin writes, to settle requests whose ack a dropped connection swallowed. */
  private readonly writes = new WriteLog(HOST_SESSION_LIMITS.maxRememberedWrites);

  constructor(
    private readonly ctx: SessionContext<S>,
    init: SessionInit,
  ) {
    this.sessionId = ctx.sessionId;
    this.isResume = init.isResume;
    if (ctx.adapter.modelId !== undefined) this.modelId = ctx.adapter.modelId;
    this.link = init.link;
    this.rungs = init.rungs;
    this.consumer = new TurnConsumer(ctx.adapter, {
      send: (frame) => this.send(frame),
      rerun: (turn, tools, slice) => this.rerun(turn, tools, slice),
      report: (level, message, attrs) => this.report(level, message, attrs),
      turnRunning: (turnId) => this.channel?.hello?.turns.some((turn) => turn.turnId === turnId && turn.status === 'running') ?? true,
      hostWaits: () => protocolMinor((this.channel?.hello ?? this.link.hello).protocolVersion) >= 1,
      caughtUp: () => (this.channel ? this.channel.whenLive() : Promise.resolve()),
      turnEnded: () => this.expectNextTurn(),
    });
    this.responder = ctx.adapter.responder
      ? new ResponderRun(ctx.adapter.responder, sandboxResponderIo(ctx.sandbox, ctx.sessionWorkDir, ctx.permissionMode), {
          whenLive: () => (this.channel ? this.channel.whenLive() : Promise.reject(new Error('no channel'))),
          input: async (turnId, text) => void (await this.send({ type: 'input', turnId, text })),
          currentTurn: () => this.consumer.turn?.turnId ?? null,
          warn: (message, attrs) => this.report('warn', message, attrs),
        })
      : undefined;
    const resume = init.resume;
    this.cursor = resume?.cursor ?? 0;
    this.owner = { epoch: (resume?.epoch ?? 0) + 1, id: randomBytes(12).toString('hex') };
    this.threadId = resume?.threadId;
    this.prompted = resume?.prompted ?? false;
    this.fromSuspend = resume?.reason === 'suspend';
    this.model = resume?.model;
    this.instructionsDigest = resume?.instructions;
    this.skills = resume?.skills;
    this.pendingRerun = init.rungs.includes('rerun') && resume?.turn !== undefined;
    if (resume?.carry) this.consumer.carry = [...resume.carry];
    if (resume?.turn) {
      this.consumer.turn = {
        ...resume.turn,
        translation: undefined,
        abortRequested: false,
        redeliverSet: new Set(resume.turn.redeliver),
        restored: true,
        held: new Map(),
      };
    }
    // A journal that is gone or older than our cursor (docs/design.md#d5, journal epochs): go on from its end.
    if (resume) this.rebaseOnLostJournal(resume, init.link.hello);
    if (resume && !this.journalRebased) this.takeOverFromLostHost(resume, init.link.hello);
    // The suspend came as the turn's interrupted end was read, before its rerun went out (the suspend wins):
    // the state's cursor is past that end, so no replay shows it again; the journal says so, and it is re-driven.
    const turnId = resume?.turn?.turnId;
    if (turnId !== undefined && !this.journalRebased && interruptedBy(init.link.hello, turnId, this.cursor)) this.pendingRerun = true;
    this.checkpointCursor = this.cursor;
    if (init.rungs.length > 0) {
      const recomputed = init.rungs.includes('rerun');
      this.report(recomputed ? 'warn' : 'info', `resumed via ${init.rungs.join(' → ')}${recomputed ? ' (the in-flight turn will be recomputed)' : ''}`, {
        rungs: init.rungs.join(','),
        recomputed,
        cursor: this.cursor,
      });
    }
  }

  /**
   * The bridge's journal is another one (gone: a new bridge started a fresh journal) or ends before
   * our cursor (behind: a sandbox restored from an earlier snapshot). Attaching at our cursor would be
   * refused with cursor-ahead on every start, so this host opens a new journal epoch: its cursor
   * becomes the journal's end, and the in-flight turn is re-driven from the host's own state (its
   * prompt, the CLI thread), marked recomputed. Records the journal lost are not delivered again.
   */
  private rebaseOnLostJournal(resume: ResumeData, hello: HelloFrame): void {
    const gone = hello.journalId !== resume.journalId;
    if (!gone && hello.lastSeq >= resume.cursor) return;
    const lost = gone ? 'gone' : 'behind';
    this.cursor = hello.lastSeq;
    this.journalRebased = true;
    // Behind: the records past hello.lastSeq this host read are lost, and new ones would reuse their seqs under the same journal id.
    if (!gone && protocolMinor(hello.protocolVersion) >= 1) this.behindCursor = resume.cursor;
    const turn = this.consumer.turn;
    if (turn) {
      delete turn.firstSeq;
      delete turn.snapshot;
      this.pendingRerun = true;
    }
    if (!this.rungs.includes('rerun')) this.rungs.push('rerun');
    this.report('warn', `the journal is ${lost}: this host's cursor is ${resume.cursor} in journal ${resume.journalId}, the bridge holds journal ${hello.journalId} ending at seq ${hello.lastSeq}; continuing from there${turn ? `, turn ${turn.turnId} recomputed` : ''}`, {
      journal: lost,
      cursor: resume.cursor,
      journalId: hello.journalId,
      lastSeq: hello.lastSeq,
      recomputed: turn !== null,
    });
  }

  /**
   * A host that is gone may have received records past the state's cursor (docs/guarantees.md#host-crash):
   * a checkpoint is cut while records keep coming, and an older state (an earlier detach) knows nothing
   * of the turns started after it. Delivery resumes at the cursor and the parts of records up to the
   * journal's end at resume are marked re-delivered. A turn started after the state's cursor (the latest
   * one the bridge lists) is taken over: doContinueTurn continues it, host tool calls included.
   */
  private takeOverFromLostHost(resume: ResumeData, hello: HelloFrame): void {
    if (resume.reason !== 'checkpoint' && (resume.turn || resume.reason === 'suspend')) return;
    if (!resume.turn) {
      const later = hello.turns.filter((turn) => turn.firstSeq > resume.cursor).at(-1);
      if (later && (later.status === 'interrupted' || later.status === 'stopped')) {
        // Its producer died with its bridge, and this state does not hold its prompt: nothing can re-drive it.
        this.report('warn', `turn ${later.turnId} was started by a host that is gone and ended ${later.status}; its prompt is not in this state, so it cannot be re-driven`, { turnId: later.turnId });
      } else if (later) {
        this.consumer.turn = {
          turnId: later.turnId,
          firstSeq: later.firstSeq,
          prompt: '',
          rerun: later.rerun ?? false,
          redeliver: [],
          redeliverSet: new Set(),
          translation: undefined,
          abortRequested: false,
          restored: true,
          held: new Map(),
        };
        this.fromSuspend = true;
        this.report('info', `turn ${later.turnId} was started by a host that is gone; doContinueTurn continues it`, { turnId: later.turnId, status: later.status });
      }
    }
    if (this.consumer.turn && hello.lastSeq > resume.cursor) this.redelivery = { after: resume.cursor, through: hello.lastSeq, begun: false };
  }

  /**
   * A resume state of this session as it is now, without letting go of anything: what an application
   * persists during a turn so that a new host can take over if this one dies (docs/guarantees.md#host-crash).
   * Resuming from it delivers from its cursor on (at-least-once: parts past it may come again, marked).
   */
  checkpoint(): HarnessV1ResumeSessionState {
    this.assertOpen();
    return toResumeSessionState(this.ctx.adapter.harnessId, this.resumeData('checkpoint'));
  }

  // ---- turns -------------------------------------------------------------

  async doPromptTurn(options: HarnessV1PromptTurnOptions): Promise<HarnessV1PromptControl> {
    this.assertOpen();
    this.sliceGeneration = this.generation;
    const inFlight = this.consumer.turn;
    if (inFlight && this.endedByStop(inFlight)) {
      // A stopped turn is over (docs/guarantees.md#stop): a new prompt lets go of it; what it showed stays shown.
      this.report('info', `turn ${inFlight.turnId} was stopped; the new prompt leaves it as it ended`, { turnId: inFlight.turnId });
      this.consumer.turn = null;
    } else if (inFlight) throw new BridgeSessionError('turn-busy', `turn ${inFlight.turnId} is still in flight; continue or suspend it first`);
    this.fromSuspend = false;
    const responseFormat = this.jsonFormat(options.responseFormat);
    const text = promptText(options.prompt);
    if (options.model !== undefined) this.model = options.model;
    const skills = options.skills ?? this.ctx.skills;
    await this.applySkills(skills);
    const instructions = this.instructionsToSend(options.instructions);
    const tools = options.tools ?? [];
    await this.ensureThread(tools);
    // A suspend (or detach) began while the skills or the thread were set up: the prompt is in no state it returns.
    this.assertNotSuspended('the prompt was not sent');
    const { control, done } = this.consumer.begin(options.emit, tools, false);
    await this.startTurn({ prompt: text, instructions, tools, rerunOf: undefined, skills, responseFormat });
    this.prompted = true;
    if (instructions !== undefined) this.instructionsDigest = digest(instructions);
    this.consumer.watchAbort(options.abortSignal);
    void done;
    return control;
  }

  async doContinueTurn(options: HarnessV1ContinueTurnOptions): Promise<HarnessV1PromptControl> {
    this.assertOpen();
    this.sliceGeneration = this.generation;
    const turn = this.consumer.turn;
    if (options.model !== undefined) this.model = options.model;
    const firstContinue = this.fromSuspend;
    this.fromSuspend = false;
    if (!turn && firstContinue) {
      // Nothing to continue: the turn ended before the suspend took, and the slice that suspended received every part of it.
      return { done: Promise.resolve(), submitToolResult: async () => {
        throw new BridgeSessionError('no-turn', 'no turn is in flight');
      } };
    }
    if (!turn) throw new BridgeSessionError('no-turn', 'there is no suspended turn to continue');
    const tools = options.tools ?? [];
    const { control } = this.consumer.begin(options.emit, tools, false);
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
      markPhase('restored');
      await this.openChannel(restored ? this.cursor : turn.firstSeq !== undefined ? turn.firstSeq - 1 : this.cursor);
      if (turn.firstSeq === undefined) await this.restartIfNeverStarted(turn, tools);
      // Redeliveries go out after the caller holds the control handle (it may answer them at once),
      // and before any record of this slice (TurnConsumer.record flushes them first if records win the race),
      // but only once the bridge admitted this host: a resumer fenced off by another delivers nothing.
      const channel = this.channel;
      if (restored && channel) void channel.whenLive().then(() => setImmediate(() => this.consumer.flushOwed(turn)), () => undefined);
    }
    this.consumer.watchAbort(options.abortSignal);
    return control;
  }

  async doSuspendTurn(): Promise<HarnessV1ContinueTurnState> {
    this.assertOpen();
    this.generation++;
    await this.detachChannel();
    this.consumer.release();
    return toContinueState(this.ctx.adapter.harnessId, this.resumeData('suspend'));
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
    const input = encode(customInstructions, { threadId: this.threadId, duringTurn: this.consumer.turn !== null });
    const inFlight = this.consumer.turn;
    if (inFlight) {
      await this.send({ type: 'input', turnId: inFlight.turnId, text: input });
      return;
    }
    const collected: HarnessV1StreamPart[] = [];
    this.sliceGeneration = this.generation;
    const { done } = this.consumer.begin((part) => collected.push(part), [], true);
    await this.startTurn({ prompt: '', instructions: undefined, tools: [], rerunOf: undefined, input });
    await done;
    const failure = compactFailure(collected);
    if (failure !== null) throw new BridgeSessionError('compact-failed', `${this.ctx.adapter.harnessId} did not compact: ${failure}`);
    this.consumer.carry.push(...collected.filter((part): part is CompactionPart => part.type === 'compaction'));
  }

  // ---- lifecycle ---------------------------------------------------------

  async doDetach(): Promise<HarnessV1ResumeSessionState> {
    this.assertOpen();
    this.generation++;
    await this.detachChannel();
    this.consumer.release();
    this.closed = true;
    return toResumeSessionState(this.ctx.adapter.harnessId, this.resumeData(this.consumer.turn ? 'suspend' : 'detach'));
  }

  async doStop(): Promise<HarnessV1ResumeSessionState> {
    this.assertOpen();
    this.sliceGeneration = ++this.generation;
    await this.ensureChannel();
    await this.send({ type: 'stop' }, HOST_SESSION_LIMITS.lifecycleTimeoutMs);
    await this.detachChannel();
    this.consumer.release();
    this.closed = true;
    return toResumeSessionState(this.ctx.adapter.harnessId, this.resumeData('stop'));
  }

  async doDestroy(): Promise<void> {
    if (this.closed) return;
    this.sliceGeneration = ++this.generation;
    try {
      await this.ensureChannel();
      await this.send({ type: 'destroy' }, HOST_SESSION_LIMITS.lifecycleTimeoutMs);
    } catch (error) {
      // The bridge is unreachable or refused: destroy must still leave nothing behind.
      this.report('warn', `bridge did not acknowledge destroy (${(error as Error).message}); removing its state from the sandbox`, {});
      await forceDestroy(this.ctx.sandbox, this.ctx.stateDir);
    } finally {
      await this.detachChannel();
      this.consumer.slice?.reject(new BridgeSessionError('session-closed', 'the session was destroyed'));
      this.consumer.slice = null;
      this.consumer.turn = null;
      this.closed = true;
    }
  }

  /** A turn taken over from a resume state that the journal lists as ended by a stop (the session's stop, or its sandbox's). */
  private endedByStop(turn: TurnState<S>): boolean {
    if (!turn.restored) return false;
    return (this.channel?.hello ?? this.link.hello).turns.some((known) => known.turnId === turn.turnId && known.status === 'stopped');
  }

  // ---- internals: starting turns ---------------------------------------------

  private async startTurn(request: TurnRequest): Promise<void> {
    const generation = this.sliceGeneration;
    const rerun = request.rerunOf !== undefined;
    const turnId = `turn-${this.cursor + 1}-${randomBytes(3).toString('hex')}`;
    const previous = this.consumer.turn;
    // In flight from here on, before any await: a suspend that begins while the connection opens or the
    // ack is on its way returns a state that holds this turn, and the next slice finds out whether it started.
    this.consumer.turn = {
      turnId,
      prompt: request.prompt,
      rerun,
      ...(request.rerunOf === undefined ? {} : { rerunOf: request.rerunOf }),
      redeliver: [],
      redeliverSet: new Set(),
      translation: undefined,
      abortRequested: false,
      restored: false,
      // A rerun inherits the answers the host gave for calls of the turn it recomputes (TurnState.held).
      held: rerun && previous && previous.turnId === request.rerunOf ? previous.held : new Map(),
    };
    let frame: ChannelRequest;
    try {
      const expected = this.expected;
      this.expected = undefined;
      await expected;
      await this.ensureChannel();
      // Suspended or detached while the connection opened (it opened none): not sent; the state holds it, never started.
      if (this.overtaken(generation)) return;
      // An internal turn (thread start, compaction) keeps the process the last turn's tools chose; a prompt's tools choose.
      const toolsKey = request.input !== undefined && this.toolsKey !== undefined ? this.toolsKey : hostToolsKey(request.tools);
      frame = withHostToolsKey(this.ctx.adapter, startFrame(this.ctx, { turnId, threadId: this.threadId }, { model: this.model, ...request }), toolsKey);
      this.toolsKey = toolsKey;
      if (request.input === undefined) this.lastTools = request.tools;
    } catch (error) {
      // No connection, or a launch spec that is refused (bad-launch): nothing was sent.
      if (this.consumer.turn?.turnId === turnId) this.consumer.turn = previous;
      throw error;
    }
    const channel = this.channel;
    try {
      await this.send(frame);
    } catch (error) {
      // Suspended or detached while the ack was in flight: the turn may well be running (its
      // records can arrive before the ack); the resume state keeps it and the next slice finds out.
      if (this.channel !== channel && this.consumer.turn?.turnId === turnId) return;
      if (this.consumer.turn?.turnId === turnId) this.consumer.turn = null;
      this.consumer.slice = null;
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
    if (this.consumer.turn !== turn || turn.firstSeq !== undefined || this.overtaken()) return;
    if (this.writes.turnStarted(turn.turnId, channel.hello)) return;
    this.report('info', `turn ${turn.turnId} never reached the bridge before the suspend; starting it again`, { turnId: turn.turnId });
    this.consumer.turn = null;
    await this.startTurn({ prompt: turn.prompt, instructions: undefined, tools, rerunOf: turn.rerun && turn.rerunOf !== undefined ? turn.rerunOf : undefined });
  }

  /** Rung 3: re-drive the CLI's thread; the new turn's parts are marked recomputed. */
  private async rerun(turn: TurnState<S>, tools: ReadonlyArray<HarnessV1ToolSpec>, slice: Slice | null = this.consumer.slice): Promise<void> {
    this.report('warn', `turn ${turn.turnId} lost its producer; re-driving the CLI thread (recomputed)`, {
      rung: 'rerun',
      turnId: turn.turnId,
      threadId: this.threadId ?? null,
    });
    if (!this.rungs.includes('rerun')) this.rungs.push('rerun');
    if (this.ctx.adapter.encodeThreadStart && this.threadId === undefined) {
      // The turn died before its thread existed: nothing to re-drive; the recomputed turn starts one.
      await this.ensureThread(tools);
      this.consumer.slice = slice;
    }
    // Suspended or detached since the rerun was decided: no new turn from this slice (it would open
    // a channel the suspend just closed); the resume state still holds the interrupted turn, and a
    // continue re-drives it (here: pendingRerun; in another host: the journal says it was interrupted).
    if (this.consumer.slice !== slice || this.closed || this.overtaken()) {
      if (this.consumer.turn === turn) this.pendingRerun = true;
      return;
    }
    const unknownToJournal = this.journalRebased && !(this.channel?.hello ?? this.link.hello).turns.some((known) => known.turnId === turn.turnId);
    await this.startTurn({ prompt: turn.prompt, instructions: undefined, tools, rerunOf: turn.turnId, ...(unknownToJournal ? { originLost: true } : {}) });
  }

  /**
   * adapter.encodeThreadStart: while the session has no CLI thread, run the thread-start exchange
   * as an internal turn (parts dropped) so the prompt's encoder gets the thread id. The turn carries
   * the prompt's tools: a CLI that connects to the MCP endpoint at thread start lists them then.
   */
  private async ensureThread(tools: ReadonlyArray<HarnessV1ToolSpec>): Promise<void> {
    const encode = this.ctx.adapter.encodeThreadStart;
    if (!encode || this.threadId !== undefined) return;
    // Its parts are dropped but for what says why it failed (error parts, raw stderr): a CLI that cannot start is named by its own words.
    const said: string[] = [];
    const { done } = this.consumer.begin((part) => void (said.length < 5 && pushSaid(said, part)), tools, true);
    await this.startTurn({ prompt: '', instructions: undefined, tools, rerunOf: undefined, input: encode({ sessionWorkDir: this.ctx.sessionWorkDir, mcp: this.ctx.mcp }) });
    await done;
    this.assertNotSuspended('the thread was not started');
    if (this.threadId === undefined) {
      const why = said.length > 0 ? ` (the CLI said: ${said.join('; ')})` : '';
      throw new BridgeSessionError('bridge-refused', `${this.ctx.adapter.harnessId} started no thread: its thread-start exchange revealed no thread id${why}`);
    }
  }

  // ---- internals: channel and records ----------------------------------------

  private onRecords(channel: SessionChannel, records: ReadonlyArray<JournalRecord>): void {
    let milestone = false;
    if (this.consumer.turn && this.channel === channel) this.consumer.lookAhead(this.consumer.turn, records);
    for (const record of records) {
      // Suspended, detached or re-attached mid-batch: stop at this record boundary; the next slice replays the rest.
      if (this.channel !== channel) return;
      const thread = this.ctx.adapter.threadId(record);
      if (thread !== undefined) this.threadId = thread;
      if (record.kind === 'turn-start' || record.kind === 'stdin') this.writes.remember(record);
      const turn = this.consumer.turn;
      if (turn && record.turnId === turn.turnId) {
        if (this.redelivery) this.markRedelivery(record);
        const range = this.redelivery?.begun ? { afterSeq: this.redelivery.after, throughSeq: this.redelivery.through } : undefined;
        // Part-level: a host call translated from the CLI's own output (stdin tools, CLI approvals) is a milestone too.
        milestone = this.consumer.record(turn, record, this.cursor, range) || milestone;
        this.responder?.observe(record);
      }
      if (record.seq > this.cursor) this.cursor = record.seq;
      milestone ||= record.kind === 'turn-start' || record.kind === 'turn-end' || record.kind === 'tool-call' || record.kind === 'approval-request';
    }
    this.offerCheckpoint(milestone);
  }

  /** Raw parts around the parts of records a lost host may have received already (takeOverFromLostHost). */
  private markRedelivery(record: JournalRecord): void {
    const range = this.redelivery!;
    const slice = this.consumer.slice;
    if (!slice || record.seq <= range.after) return;
    // The range ends before the first record past it, or before the turn's end (finish parts stay last).
    if (range.begun && (record.seq > range.through || record.kind === 'turn-end')) {
      slice.emit({ type: 'raw', rawValue: redeliveryMarker('end', range) });
      this.redelivery = undefined;
      return;
    }
    if (!range.begun && record.seq <= range.through && record.kind !== 'turn-end') {
      range.begun = true;
      slice.emit({ type: 'raw', rawValue: redeliveryMarker('begin', range) });
    }
  }

  /** onCheckpoint, after a batch's parts went out: at turn starts, ends and host calls, and every `everyRecords` records. */
  private offerCheckpoint(milestone: boolean): void {
    const policy = this.ctx.checkpoints;
    if (!policy || this.closed || this.cursor === this.checkpointCursor) return;
    if (!milestone && this.cursor - this.checkpointCursor < policy.everyRecords) return;
    this.checkpointCursor = this.cursor;
    try {
      policy.onCheckpoint(this.checkpoint());
    } catch (error) {
      this.report('warn', `onCheckpoint threw: ${(error as Error).message}`, { cursor: this.cursor });
    }
  }

  private async ensureChannel(): Promise<void> {
    if (!this.channel) await this.openChannel(this.cursor);
  }

  private async openChannel(cursor: number): Promise<void> {
    await this.detachChannel();
    // Work of a slice that a suspend, detach, stop or destroy has ended since it began opens nothing.
    if (this.overtaken()) return;
    const channel = this.ctx.openChannel({
      url: this.link.url,
      token: this.link.token,
      cursor,
      journalId: this.link.hello.journalId,
      owner: this.owner,
      onRecords: (records) => this.onRecords(channel, records),
      onTerminal: (error) => {
        if (this.channel !== channel) return;
        this.channel = null;
        if ((error as { code?: string }).code === 'fenced' || (error as { code?: string }).code === 'displaced') {
          // Another host resumed this session and drives it: this one must not (docs/design.md#d3).
          const message = `another host drives this session (owner epoch ${this.owner.epoch} fenced off): ${error.message}`;
          this.report('error', message, { cursor: this.cursor, epoch: this.owner.epoch });
          this.consumer.fail(new BridgeSessionError('fenced', message, error));
          return;
        }
        const message = `lost the bridge at cursor ${this.cursor}: ${error.message}`;
        this.report('error', message, { cursor: this.cursor });
        this.consumer.fail(new BridgeSessionError('channel-lost', message, error));
      },
      onRevived: (revived) => {
        if (this.channel !== channel) return;
        const { message, attrs } = revivedReport(this.link, revived, this.cursor);
        this.report('warn', message, attrs);
        this.link = revived.link;
        this.rungs.push(revived.rung);
      },
    });
    this.channel = channel;
    if (this.behindCursor !== undefined) await this.renewJournalId(this.behindCursor);
  }

  /**
   * The journal was found behind (restored from an earlier snapshot): before this host causes any new
   * record, the bridge gives the journal a new id (journal-epoch), so (journal id, seq) names one record
   * forever; the channel is opened again on that id (its reconnects check it).
   */
  private async renewJournalId(cursor: number): Promise<void> {
    this.behindCursor = undefined;
    const before = this.link.hello.journalId;
    const ack = await this.send({ type: 'journal-epoch', journalId: before, cursor });
    if (ack.journalId === undefined) throw new BridgeSessionError('bridge-refused', 'the bridge acked journal-epoch without a journal id');
    this.link = { ...this.link, hello: { ...this.link.hello, journalId: ack.journalId } };
    this.report('info', `journal ${before} was behind this host's cursor ${cursor}: the bridge renamed it ${ack.journalId}`, { journalId: ack.journalId, before, cursor });
    await this.openChannel(this.cursor);
  }

  private async detachChannel(): Promise<void> {
    const channel = this.channel;
    this.channel = null;
    if (channel) await channel.close();
  }

  /** One request to the bridge; a lost ack is settled from the journal (send-request.ts). */
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

  private resumeData(reason: ResumeData['reason']): ResumeData {
    const turn = this.consumer.resumeTurn(this.cursor);
    const carry = this.consumer.carry;
    const data: ResumeData = {
      v: 1,
      stateDir: this.ctx.stateDir,
      bootstrapDir: this.ctx.bootstrapDir,
      journalId: this.link.hello.journalId,
      bridgeId: this.link.hello.bridgeId,
      port: this.link.port,
      cursor: this.cursor,
      epoch: this.owner.epoch,
      prompted: this.prompted,
      reason,
      ...(this.threadId === undefined ? {} : { threadId: this.threadId }),
      ...(carry.length === 0 ? {} : { carry }),
      ...(turn ? { turn } : {}),
      ...(this.model === undefined ? {} : { model: this.model }),
      ...(this.instructionsDigest === undefined ? {} : { instructions: this.instructionsDigest }),
      ...(this.skills === undefined ? {} : { skills: this.skills }),
    };
    return data;
  }

  /** A JSON response format, if the adapter can honour it; never silently ignored. */
  private jsonFormat(format: HarnessV1ResponseFormat | undefined): Extract<HarnessV1ResponseFormat, { type: 'json' }> | undefined {
    if (format === undefined || format.type === 'text') return undefined;
    if (this.ctx.adapter.supportsJsonResponseFormat) return format;
    throw new HarnessCapabilityUnsupportedError({
      message: `${this.ctx.adapter.harnessId} cannot make its CLI answer in a JSON response format; ask for text (no output schema)`,
      harnessId: this.ctx.adapter.harnessId,
    });
  }

  /**
   * The instructions to send with this prompt: on the session's first prompt, and again when they
   * change, never the same twice (1.0.x passes them every turn; canary.3 expects them applied once).
   */
  private instructionsToSend(instructions: string | undefined): string | undefined {
    if (!instructions) return undefined;
    if (this.instructionsDigest !== undefined) return digest(instructions) === this.instructionsDigest ? undefined : instructions;
    // A payload from before digests were kept: a session that was prompted already carries them in its history.
    return this.prompted ? undefined : instructions;
  }

  /**
   * Makes the CLI see exactly `skills`: writes their files when the set changed and removes the files of skills
   * that are gone. Each prompt turn calls it with the turn's skills; doStart with canary.3's session skills.
   */
  /**
   * After a turn, the launch the next one will likely start with (the same tools and model, the thread as it is now): a
   * bridge whose live CLI cannot take it (a CLI per turn, or a long-lived one the next launch respawns) makes that CLI's
   * jail ahead (docs/bridge-internals.md#jail-ahead). A hint: one that cannot be sent (the session is being left) is dropped.
   */
  private expectNextTurn(): void {
    const channel = this.channel;
    if (channel === null || this.closed || protocolMinor(this.link.hello.protocolVersion) < 2) return;
    const launch = expectedLaunch(this.ctx, { threadId: this.threadId, tools: this.lastTools, model: this.model, toolsKey: this.toolsKey ?? hostToolsKey(this.lastTools) });
    if (launch !== undefined) channel.request({ type: 'expect', launch }).catch(() => undefined);
  }

  /**
   * A fresh session tells the bridge the launch its first turn will likely start with (protocol 1.2 `expect`), so the
   * bridge makes ahead what that spawn needs (a kept CLI's jail: docs/bridge-internals.md#jail-ahead) while the caller
   * prepares its prompt. The channel opens for it, and the first turn uses that channel once the bridge acked it. A
   * hint: one that cannot be sent is reported, and the turn opens its channel as usual.
   */
  expectFirstTurn(): void {
    if (protocolMinor(this.link.hello.protocolVersion) < 2) return;
    const launch = expectedLaunch(this.ctx, { threadId: this.threadId, tools: [], model: this.model, toolsKey: hostToolsKey([]) });
    if (launch === undefined) return;
    this.expected = (async () => {
      await this.ensureChannel();
      await this.send({ type: 'expect', launch });
    })().catch((error: unknown) => this.report('info', `the first turn's launch was not announced: ${(error as Error).message}`, {}));
  }

  async applySkills(skills: ReadonlyArray<HarnessV1Skill>): Promise<void> {
    const skillFiles = this.ctx.adapter.skillFiles;
    const files = skillFiles && skills.length > 0 ? skillFiles(skills, this.ctx.sessionWorkDir) : [];
    if (files.length === 0 && this.skills === undefined) return;
    const setDigest = digest(JSON.stringify(files.map((file) => [file.path, file.content])));
    if (this.skills?.digest === setDigest) return;
    for (const file of files) await this.ctx.sandbox.writeTextFile({ path: file.path, content: file.content });
    const kept = new Set(files.map((file) => file.path));
    await removeSandboxFiles(this.ctx.sandbox, (this.skills?.paths ?? []).filter((path) => !kept.has(path)));
    this.skills = { digest: setDigest, paths: [...kept] };
  }

  /** A suspend, detach, stop or destroy began since the slice did (the one that began under `generation`). */
  private overtaken(generation = this.sliceGeneration): boolean {
    return generation !== this.generation;
  }

  /** A suspend or detach began since this slice did: what it was about to do does not happen (code `suspended`). */
  private assertNotSuspended(what: string): void {
    if (this.overtaken()) throw new BridgeSessionError('suspended', `the turn was suspended (or the session detached) while it began; ${what}`);
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

/** What a re-delivered range's raw parts carry: `harnessBridge.redelivered` names the seqs it spans. */
function redeliveryMarker(edge: 'begin' | 'end', range: { after: number; through: number }) {
  return { harnessBridge: { redelivered: edge, afterSeq: range.after, throughSeq: range.through } };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** What an error or raw stderr part says, for the thread-start failure's message (at most 500 characters each). */
function pushSaid(said: string[], part: HarnessV1StreamPart): void {
  const raw = part.type === 'raw' && typeof part.rawValue === 'object' && part.rawValue !== null && 'stderr' in part.rawValue ? part.rawValue.stderr : undefined;
  const error = part.type === 'error' ? part.error : undefined;
  const message = typeof error === 'object' && error !== null && 'message' in error ? error.message : error;
  const text = raw ?? message;
  if (text === undefined) return;
  const line = typeof text === 'string' ? text : JSON.stringify(text) ?? String(text);
  said.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
}

/** The journal ended `turnId` interrupted (its producer died with a bridge) at or before `cursor`. */
function interruptedBy(hello: HelloFrame, turnId: string, cursor: number): boolean {
  return hello.turns.some((turn) => turn.turnId === turnId && turn.status === 'interrupted' && turn.lastSeq <= cursor);
}
