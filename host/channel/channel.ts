// host/channel: the WebSocket client to one bridge. Owns the state machine
// connect → hello → attach → replay → live, exactly-once in-order record
// delivery across reconnects, consumer backpressure and the public entry. Its
// parts live in host/channel/: the socket and what a loss means (connection.ts),
// reconnect pacing (backoff.ts), liveness (heartbeat.ts), the request/ack queue
// (requests.ts), cursor arithmetic (sequencer.ts) and the public types
// (types.ts); the NDJSON recording is host/recording.ts. It does not interpret
// records or pick a rung of the recovery ladder: terminal errors go to the
// session layer, which decides.
//
// Guarantees:
// - onRecords sees each seq at most once and in strictly increasing,
//   contiguous order starting at cursor+1 (duplicates dropped; a gap closes the
//   socket and re-attaches from the cursor).
// - Nothing is delivered after a terminal error or close().
// - Requests: see REQUEST_DELIVERY (host/channel/requests.ts) for what a
//   reconnect does to each frame type.
// Not guaranteed: that onRecords sees everything — a terminal error (cursor
// expired, displaced, deadline) ends delivery; `cursor` says how far it got.
import { randomBytes } from 'node:crypto';
import {
  PROTOCOL_VERSION_V1,
  bridgeFrameSchema,
  decodeFrame,
  hostFrameSchema,
  isCompatibleProtocol,
  type AckFrame,
  type BridgeFrame,
  type ErrorFrame,
  type HelloFrame,
  type JournalRecord,
} from '../../protocol/v1/index.ts';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';
import { ReconnectBudget, formatSeconds } from './backoff.ts';
import { BridgeConnection, classifyLoss, type Loss } from './connection.ts';
import { HeartbeatWatchdog } from './heartbeat.ts';
import { RequestTracker, type ChannelRequest } from './requests.ts';
import { InboundQueue } from './inbound-queue.ts';
import { RecordSequencer } from './sequencer.ts';
import type { BridgeChannel, BridgeChannelOptions, ChannelStatus } from './types.ts';
import { BridgeChannelError, ChannelRequestError, type BridgeChannelErrorCode } from './errors.ts';
import { CHANNEL_LIMITS, checkLimit } from '../limits.ts';
import { FrameRecorder } from './frame-recorder.ts';

export { REQUEST_DELIVERY, type ChannelRequest, type ChannelRequestType } from './requests.ts';
export type {
  BridgeChannel,
  BridgeChannelOptions,
  ChannelSocket,
  ChannelSocketConstructor,
  ChannelSocketOptions,
  ChannelStatus,
  RecordsInfo,
} from './types.ts';

export function createBridgeChannel(options: BridgeChannelOptions): BridgeChannel {
  return new Channel(options);
}

/** Error codes that refuse an attach for good on this bridge. */
const terminalAttachCodes = new Set<string>(['cursor-expired', 'cursor-ahead', 'journal-mismatch', 'version-mismatch', 'unauthorized']);

type Phase = 'connecting' | 'awaiting-hello' | 'attaching' | 'replaying' | 'live' | 'backoff' | 'closed';

class Channel implements BridgeChannel {
  private readonly options: BridgeChannelOptions;
  private readonly connectTimeoutMs: number;
  private readonly inbound: InboundQueue;
  private readonly budget: ReconnectBudget;
  private readonly sequencer: RecordSequencer;
  private readonly requests: RequestTracker;
  private readonly recorder: FrameRecorder | null;

  private phase: Phase = 'connecting';
  private connection: BridgeConnection | null = null;
  private connectTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly heartbeat: HeartbeatWatchdog;
  private attachId = '';
  private journalId: string | undefined;
  private lastHello: HelloFrame | null = null;
  private connects = 0;
  private gapReattaches = 0;
  private cursorAtLastGap = -1;
  private stopAcked = false;
  private stickyDiagnostics: ChannelRequest | null = null;
  /** An async onRecords is running: frames wait in `inbound` until it settles. */
  private consuming = false;
  private liveWaiters: Array<{ resolve: () => void; reject: (error: BridgeChannelError) => void }> = [];
  private terminalError: BridgeChannelError | null = null;
  private resolveClosed!: (value: BridgeChannelError | null) => void;
  readonly closed: Promise<BridgeChannelError | null>;

  constructor(options: BridgeChannelOptions) {
    checkLimit('cursor', options.cursor, 0);
    this.options = options;
    const deadlineMs = checkLimit('reconnectDeadlineMs', options.reconnectDeadlineMs ?? CHANNEL_LIMITS.reconnectDeadlineMs, 0);
    const initialMs = checkLimit('backoff.initialMs', options.backoff?.initialMs ?? CHANNEL_LIMITS.initialBackoffMs, 1);
    const maxMs = checkLimit('backoff.maxMs', options.backoff?.maxMs ?? CHANNEL_LIMITS.maxBackoffMs, initialMs);
    const heartbeatMs = checkLimit('heartbeatMs', options.heartbeatMs ?? CHANNEL_LIMITS.heartbeatMs, 10);
    this.connectTimeoutMs = checkLimit('connectTimeoutMs', options.connectTimeoutMs ?? CHANNEL_LIMITS.connectTimeoutMs, 10);
    const maxQueued = checkLimit('maxQueuedFrames', options.maxQueuedFrames ?? CHANNEL_LIMITS.maxQueuedFrames, 1);
    this.inbound = new InboundQueue(
      checkLimit('maxInboundQueuedFrames', options.maxInboundQueuedFrames ?? CHANNEL_LIMITS.maxInboundQueuedFrames, 1),
      checkLimit('maxInboundQueuedBytes', options.maxInboundQueuedBytes ?? CHANNEL_LIMITS.maxInboundQueuedBytes, 1),
    );
    this.budget = new ReconnectBudget({
      initialMs,
      maxMs,
      deadlineMs,
      ...(options.random ? { random: options.random } : {}),
    });
    this.heartbeat = new HeartbeatWatchdog(heartbeatMs, {
      connected: () => this.connection !== null,
      excused: () => this.consuming || this.connection?.socket.isPaused === true,
      ping: () => this.sendFrame({ type: 'ping', t: Date.now() }),
      dead: (silentTicks) => {
        this.diag('warn', `bridge missed ${silentTicks} heartbeats (${heartbeatMs} ms each); reconnecting`);
        this.lose({ reason: `heartbeat timeout (${silentTicks} × ${heartbeatMs} ms without a pong)` });
      },
    });
    this.sequencer = new RecordSequencer(options.cursor);
    this.requests = new RequestTracker(`h${randomBytes(3).toString('hex')}-`, maxQueued);
    this.journalId = options.journalId;
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.recorder = options.recordTo
      ? new FrameRecorder({
          path: options.recordTo,
          header: {
            url: options.url,
            protocolVersion: PROTOCOL_VERSION_V1,
            cursor: options.cursor,
            ...(options.journalId ? { journalId: options.journalId } : {}),
          },
          onError: (error) => this.diag('warn', `recording stopped: ${error.message}`, { path: options.recordTo }),
        })
      : null;
    this.connect();
  }

  get cursor(): number {
    return this.sequencer.cursor;
  }

  /** A method, not a field read, so TS does not narrow it across callbacks that may close the channel. */
  private get ended(): boolean {
    return this.phase === 'closed';
  }

  get hello(): HelloFrame | null {
    return this.lastHello;
  }

  get state(): ChannelStatus['state'] {
    switch (this.phase) {
      case 'awaiting-hello':
        return 'connecting';
      case 'backoff':
        return 'reconnecting';
      default:
        return this.phase;
    }
  }

  // ── connection lifecycle ──────────────────────────────────────────────

  private connect(): void {
    this.retryTimer = null;
    if (this.phase === 'closed') return;
    this.phase = 'connecting';
    const attempt = ++this.connects;
    this.status({ state: 'connecting', attempt });
    this.recorder?.event(attempt === 1 ? 'connect' : 'reconnect', { attempt, cursor: this.cursor });
    const connection = new BridgeConnection(
      { url: this.options.url, token: this.options.token, connectTimeoutMs: this.connectTimeoutMs, WebSocket: this.options.WebSocket },
      {
        open: () => {
          this.phase = 'awaiting-hello';
          this.recorder?.event('open');
        },
        message: (text, bytes) => this.receive(text, bytes),
        lost: (loss) => this.lose(loss),
      },
    );
    this.connection = connection;
    // Bounds TCP connect + upgrade + hello + attach: a frozen peer accepts TCP and never answers.
    this.connectTimer = setTimeout(() => {
      if (this.connection === connection) this.lose({ reason: `no attach within connectTimeoutMs ${this.connectTimeoutMs}` });
    }, this.connectTimeoutMs);
  }

  /** The current connection is gone (or must go): decide between terminal, immediate re-attach and backoff. */
  private lose(loss: Loss): void {
    if (this.phase === 'closed') return;
    const connection = this.connection;
    this.connection = null;
    this.clearConnectionTimers();
    connection?.drop();
    this.inbound.clear(); // frames of the dead socket not yet consumed: the re-attach replays them from the cursor
    this.requests.onDisconnect();
    this.recorder?.event('disconnect', {
      reason: loss.reason,
      cursor: this.cursor,
      ...(loss.closeCode !== undefined ? { closeCode: loss.closeCode } : {}),
      ...(loss.httpStatus !== undefined ? { httpStatus: loss.httpStatus } : {}),
    });

    const verdict = classifyLoss(loss, { stopAcked: this.stopAcked, cursor: this.cursor });
    if (verdict.kind === 'terminal') {
      this.fail(verdict.code, verdict.message);
      return;
    }
    if (verdict.kind === 'stopped') {
      this.finish(null);
      return;
    }
    if (loss.immediate) {
      this.phase = 'backoff';
      this.retryTimer = setTimeout(() => this.connect(), 0);
      return;
    }
    const step = this.budget.failure();
    if (step.giveUp) {
      this.fail(
        'reconnect-deadline',
        `gave up reconnecting after ${formatSeconds(step.elapsedMs)}; last cursor ${this.cursor} (last failure: ${loss.reason})`,
      );
      return;
    }
    this.phase = 'backoff';
    this.diag('info', `connection lost: ${loss.reason}; retry ${step.attempt} in ${step.delayMs} ms`, {
      cursor: this.cursor,
      elapsedMs: step.elapsedMs,
    });
    this.status({ state: 'reconnecting', attempt: step.attempt, delayMs: step.delayMs, elapsedMs: step.elapsedMs, reason: loss.reason });
    this.retryTimer = setTimeout(() => this.connect(), step.delayMs);
  }

  private clearConnectionTimers(): void {
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    this.heartbeat.stop();
  }

  // ── inbound ───────────────────────────────────────────────────────────

  private receive(text: string, bytes: number): void {
    this.heartbeat.heard();
    if (this.consuming) {
      const full = this.inbound.push(text, bytes);
      const socket = this.connection?.socket;
      if (full && socket && !socket.isPaused) socket.pause();
      return;
    }
    this.decodeAndHandle(text, bytes);
  }

  private decodeAndHandle(text: string, bytes: number): void {
    const decoded = decodeFrame(text, bridgeFrameSchema, CHANNEL_LIMITS.maxInboundFrameBytes, bytes);
    if (!decoded.ok) {
      // A bad frame from the bridge is reported and dropped, never cast. A
      // dropped records frame shows up as a gap on the next one → re-attach.
      this.recorder?.invalid(text, decoded.code, decoded.message);
      this.diag('warn', `dropped an invalid frame from the bridge: ${decoded.message}`, { code: decoded.code });
      return;
    }
    this.recorder?.frame('in', text, decoded.frame);
    this.handle(decoded.frame);
  }

  private handle(frame: BridgeFrame): void {
    switch (frame.type) {
      case 'hello':
        return this.onHelloFrame(frame);
      case 'replay-begin':
        if (this.phase === 'attaching') {
          this.phase = 'replaying';
          this.status({ state: 'replaying', from: frame.from, to: frame.to });
          this.onAttached();
          return;
        }
        this.diag('warn', `replay-begin while ${this.phase}; treated as a new replay`);
        this.phase = 'replaying';
        return;
      case 'records':
        return this.onRecordsFrame(frame.records);
      case 'replay-end':
        if (this.phase !== 'replaying') {
          this.diag('warn', `replay-end while ${this.phase}; ignored`);
          return;
        }
        this.phase = 'live';
        this.recorder?.event('live', { cursor: this.cursor });
        this.status({ state: 'live', cursor: this.cursor });
        for (const waiter of this.liveWaiters.splice(0)) waiter.resolve();
        return;
      case 'ack':
        if (this.requests.ack(frame)) {
          if (frame.of === 'stop' || frame.of === 'destroy') this.stopAcked = true;
        } else if (frame.id !== this.attachId) {
          this.diag('debug', `ack for unknown request ${frame.id}`);
        }
        return;
      case 'error':
        return this.onErrorFrame(frame);
      case 'diagnostic':
        this.options.onDiagnostic?.({
          level: frame.level,
          message: frame.message,
          subsystem: `bridge.${frame.subsystem}`,
          kind: 'log',
          source: 'bridge',
          ...(frame.attrs ? { attrs: frame.attrs } : {}),
          timestamp: frame.ts,
        });
        return;
      case 'ping':
        this.sendFrame({ type: 'pong', ...(frame.t === undefined ? {} : { t: frame.t }) });
        return;
      case 'pong':
        return; // liveness already noted in receive()
    }
  }

  private onHelloFrame(hello: HelloFrame): void {
    if (this.phase !== 'awaiting-hello') {
      this.diag('warn', `unexpected hello while ${this.phase}; ignored`);
      return;
    }
    if (!isCompatibleProtocol(hello.protocolVersion)) {
      this.fail(
        'version-mismatch',
        `bridge speaks protocol ${hello.protocolVersion}, this host speaks ${PROTOCOL_VERSION_V1}; last cursor ${this.cursor}`,
      );
      return;
    }
    if (this.journalId !== undefined && hello.journalId !== this.journalId) {
      this.fail(
        'journal-mismatch',
        `bridge holds journal ${hello.journalId}, expected ${this.journalId}; last cursor ${this.cursor}`,
        { firstSeq: hello.firstSeq, lastSeq: hello.lastSeq },
      );
      return;
    }
    if (this.lastHello && this.lastHello.bridgeId !== hello.bridgeId) {
      this.diag('info', `bridge restarted on the same journal (bridge ${this.lastHello.bridgeId} → ${hello.bridgeId})`);
    }
    this.journalId = hello.journalId;
    this.lastHello = hello;
    this.options.onHello?.(hello);
    if (this.phase !== 'awaiting-hello') return; // onHello closed the channel
    this.phase = 'attaching';
    this.status({ state: 'attaching', bridgeId: hello.bridgeId, journalId: hello.journalId, cursor: this.cursor });
    this.attachId = `attach-${this.connects}`;
    this.sendFrame({
      type: 'attach',
      id: this.attachId,
      protocolVersion: PROTOCOL_VERSION_V1,
      cursor: this.cursor,
      journalId: hello.journalId,
    });
  }

  /** replay-begin answers our attach: we own the stream from here. */
  private onAttached(): void {
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    this.budget.success();
    this.heartbeat.start();
    this.recorder?.event('attached', { cursor: this.cursor });
    if (this.stickyDiagnostics) {
      // Bridge log forwarding is per connection: re-ask on every attach.
      const frame = this.stickyDiagnostics;
      this.request(frame).catch((error: unknown) => {
        this.diag('debug', `re-enabling bridge diagnostics failed: ${(error as Error).message}`);
      });
    }
    this.flushRequests();
  }

  private onRecordsFrame(records: JournalRecord[]): void {
    if (this.phase !== 'replaying' && this.phase !== 'live') {
      this.diag('warn', `records while ${this.phase}; dropped (a re-attach replays them)`);
      return;
    }
    const batch = this.sequencer.accept(records);
    if (batch.duplicates > 0) {
      this.diag('debug', `dropped ${batch.duplicates} already-delivered records`, { cursor: this.cursor });
    }
    if (batch.deliver.length > 0) this.deliver(batch.deliver, this.phase === 'replaying');
    if (batch.gap && !this.ended) { // deliver() may have ended the channel
      if (this.cursor > this.cursorAtLastGap) this.gapReattaches = 0;
      this.cursorAtLastGap = this.cursor;
      if (++this.gapReattaches > CHANNEL_LIMITS.maxGapReattaches) {
        this.fail('protocol-violation', `bridge sent ${this.gapReattaches} gaps without progress; last cursor ${this.cursor}`);
        return;
      }
      const reason = `gap: expected seq ${batch.gap.expected}, got ${batch.gap.got}; re-attaching from ${this.cursor}`;
      this.diag('warn', reason);
      this.recorder?.event('gap', { expected: batch.gap.expected, got: batch.gap.got });
      this.lose({ reason, immediate: true });
    }
  }

  private deliver(records: JournalRecord[], replay: boolean): void {
    let result: void | Promise<void>;
    try {
      result = this.options.onRecords(records, { replay });
    } catch (error) {
      this.fail('consumer-failed', `onRecords threw: ${(error as Error).message}; last cursor ${this.cursor}`, { cause: error });
      return;
    }
    if (result && typeof result.then === 'function') {
      this.consuming = true;
      result.then(
        () => this.drainInbound(),
        (error: unknown) =>
          this.fail('consumer-failed', `onRecords rejected: ${(error as Error).message}; last cursor ${this.cursor}`, { cause: error }),
      );
    }
  }

  /**
   * The async consumer finished a batch: handle queued frames until it is busy
   * again. A paused socket resumes once the queue is down to half its limits,
   * so the socket refills while the consumer works through the rest.
   */
  private drainInbound(): void {
    this.consuming = false;
    while (!this.consuming && this.inbound.length > 0 && this.phase !== 'closed') {
      const queued = this.inbound.shift()!;
      this.decodeAndHandle(queued.text, queued.bytes);
    }
    const socket = this.connection?.socket;
    if (socket?.isPaused && this.inbound.lowWater) socket.resume();
  }

  private onErrorFrame(frame: ErrorFrame): void {
    const isAttach = frame.id === undefined || frame.id === this.attachId;
    if (isAttach && terminalAttachCodes.has(frame.code) && (this.phase === 'attaching' || frame.id === this.attachId)) {
      const held = frame.firstSeq !== undefined ? ` (journal holds ${frame.firstSeq}..${frame.lastSeq ?? '?'})` : '';
      this.fail(frame.code as BridgeChannelErrorCode, `attach refused: ${frame.code}: ${frame.message}${held}; last cursor ${this.cursor}`, {
        ...(frame.firstSeq !== undefined ? { firstSeq: frame.firstSeq } : {}),
        ...(frame.lastSeq !== undefined ? { lastSeq: frame.lastSeq } : {}),
      });
      return;
    }
    if (frame.id !== undefined && this.requests.fail(frame.id, frame.code, frame.message)) return;
    if (frame.id === undefined && frame.code === 'not-owner' && (this.phase === 'replaying' || this.phase === 'live')) {
      this.fail('displaced', `another host attached to this session; last cursor ${this.cursor}`);
      return;
    }
    this.diag(frame.code === 'stopping' ? 'info' : 'warn', `bridge error ${frame.code}: ${frame.message}`, {
      code: frame.code,
      ...(frame.id ? { id: frame.id } : {}),
    });
  }

  // ── outbound ──────────────────────────────────────────────────────────

  request(frame: ChannelRequest): Promise<AckFrame> {
    if (this.phase === 'closed') {
      const why = this.terminalError ? `channel ended: ${this.terminalError.code}` : 'channel closed';
      return Promise.reject(new ChannelRequestError('closed', why, { frameType: frame.type }));
    }
    // Validate what we send too (a programming error surfaces here, not as a
    // bridge error), and send the parsed frame so schema defaults are explicit.
    const check = hostFrameSchema.safeParse({ ...frame, id: 'x' });
    if (!check.success) {
      const message = `invalid ${frame.type} request: ${check.error.issues[0]?.message ?? 'schema mismatch'}`;
      return Promise.reject(new ChannelRequestError('bad-frame', message, { frameType: frame.type }));
    }
    const parsed = check.data;
    const added = this.requests.add(frame.type, (id) => JSON.stringify({ ...parsed, id }));
    if (!added.ok) return Promise.reject(added.error);
    if (frame.type === 'diagnostics') this.stickyDiagnostics = frame.enabled ? frame : null;
    this.flushRequests();
    return added.promise;
  }

  /** Send every queued request, in order, if we own the stream. */
  private flushRequests(): void {
    const connection = this.connection;
    if (!connection || (this.phase !== 'replaying' && this.phase !== 'live')) return;
    for (const { id, text } of this.requests.drainQueued()) {
      if (Buffer.byteLength(text) > CHANNEL_LIMITS.maxOutboundFrameBytes) {
        this.requests.fail(id, 'too-large', `request exceeds ${CHANNEL_LIMITS.maxOutboundFrameBytes} bytes`);
        continue;
      }
      this.sendText(connection, text);
    }
  }

  private sendFrame(frame: { type: string } & Record<string, unknown>): void {
    if (this.connection) this.sendText(this.connection, JSON.stringify(frame), frame);
  }

  private sendText(connection: BridgeConnection, text: string, parsed?: unknown): void {
    this.recorder?.frame('out', text, parsed);
    connection.send(text);
  }

  // ── ending ────────────────────────────────────────────────────────────

  whenLive(): Promise<void> {
    if (this.phase === 'live') return Promise.resolve();
    if (this.phase === 'closed') {
      return Promise.reject(this.terminalError ?? new BridgeChannelError('closed', 'channel closed', { lastCursor: this.cursor }));
    }
    return new Promise((resolve, reject) => this.liveWaiters.push({ resolve, reject }));
  }

  private fail(
    code: BridgeChannelErrorCode,
    message: string,
    extra: { firstSeq?: number; lastSeq?: number; cause?: unknown } = {},
  ): void {
    if (this.phase === 'closed') return;
    const error = new BridgeChannelError(code, message, { lastCursor: this.cursor, ...extra });
    this.diag('error', message, { code });
    this.recorder?.event('terminal', { code, message, cursor: this.cursor });
    this.finish(error);
  }

  private finish(error: BridgeChannelError | null): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.terminalError = error;
    this.clearConnectionTimers();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const connection = this.connection;
    this.connection = null;
    connection?.close();
    this.inbound.clear();
    this.requests.rejectAll('closed', error ? `channel ended: ${error.code}` : 'channel closed');
    const waiterError = error ?? new BridgeChannelError('closed', 'channel closed', { lastCursor: this.cursor });
    for (const waiter of this.liveWaiters.splice(0)) waiter.reject(waiterError);
    this.status({ state: 'closed', error });
    const recorded = this.recorder ? this.recorder.close() : Promise.resolve();
    void recorded.then(() => this.resolveClosed(error));
  }

  async close(): Promise<void> {
    if (this.phase !== 'closed') {
      this.recorder?.event('close', { cursor: this.cursor });
      this.finish(null);
    }
    await this.closed;
  }

  private status(status: ChannelStatus): void {
    this.options.onStatus?.(status);
  }

  private diag(level: HarnessV1Diagnostic['level'], message: string, attrs?: Record<string, unknown>): void {
    this.options.onDiagnostic?.({
      level,
      message,
      subsystem: 'host.channel',
      kind: 'event',
      ...(attrs ? { attrs } : {}),
      timestamp: Date.now(),
    });
  }
}
