// The channel's state machine: connect → hello → attach → replay → live, and
// back through backoff after a loss, until a terminal error or close(). Its
// parts live beside it: the socket and what a loss means (connection.ts),
// reconnect pacing (backoff.ts), liveness (heartbeat.ts), the handshake's
// verdicts (attach.ts), records to the consumer with backpressure
// (delivery.ts), the request/ack queue (requests.ts) and the recording
// (frame-recorder.ts). It does not interpret records or pick a rung of the
// recovery ladder: terminal errors go to the session layer, which decides.
// What it guarantees callers: index.ts.
import { randomBytes } from 'node:crypto';
import {
  PROTOCOL_VERSION_V1,
  bridgeFrameSchema,
  decodeFrame,
  fastRecordsFrame,
  type AckFrame,
  type BridgeFrame,
  type ErrorFrame,
  type HelloFrame,
  type JournalRecord,
} from '../../protocol/v1/index.ts';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';
import { CHANNEL_LIMITS } from '../limits.ts';
import { reviveWithin } from './revive.ts';
import { refuseAttach, refuseHello } from './attach.ts';
import { ReconnectBudget, formatSeconds } from './backoff.ts';
import { BridgeConnection, classifyLoss, looksDead, portTaken, type Loss } from './connection.ts';
import { RecordDelivery } from './delivery.ts';
import { bridgeDiagnostic, channelDiagnostic } from './diagnostics.ts';
import { BridgeChannelError, ChannelRequestError, type BridgeChannelErrorCode } from './errors.ts';
import { channelRecorder, type FrameRecorder } from './frame-recorder.ts';
import { HeartbeatWatchdog } from './heartbeat.ts';
import { RequestTracker, type ChannelRequest } from './requests.ts';
import { channelSettings } from './settings.ts';
import type { BridgeChannel, BridgeChannelOptions, ChannelStatus, RevivedEndpoint } from './types.ts';
import { markPhase } from '../phase-marks.ts';

export function createBridgeChannel(options: BridgeChannelOptions): BridgeChannel {
  return new Channel(options);
}

type Phase = 'connecting' | 'awaiting-hello' | 'attaching' | 'replaying' | 'live' | 'backoff' | 'closed';

class Channel implements BridgeChannel {
  private readonly options: BridgeChannelOptions;
  /** Where the bridge listens: the options' until a revival (options.revive) moves it. */
  private endpoint: RevivedEndpoint;
  /**
   * Endpoints whose token a bridge vouched for: one that attached us, or one the revive hook returned (its token read
   * from the bridge the hook itself started). A 401 from one later is another process on the dead bridge's port.
   */
  private readonly vouched = new WeakSet<RevivedEndpoint>();
  /** When the recent revivals started (CHANNEL_LIMITS.maxRevives within reviveWindowMs: a bridge that keeps dying is not revived forever). */
  private revivals: number[] = [];
  /** Aborts a revival in flight when the channel ends. */
  private readonly ending = new AbortController();
  private readonly connectTimeoutMs: number;
  private readonly delivery: RecordDelivery;
  private readonly budget: ReconnectBudget;
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
  private stopAcked = false;
  private stickyDiagnostics: ChannelRequest | null = null;
  private liveWaiters: Array<{ resolve: () => void; reject: (error: BridgeChannelError) => void }> = [];
  private terminalError: BridgeChannelError | null = null;
  private resolveClosed!: (value: BridgeChannelError | null) => void;
  readonly closed: Promise<BridgeChannelError | null>;

  constructor(options: BridgeChannelOptions) {
    const settings = channelSettings(options);
    this.options = options;
    this.endpoint = {
      url: options.url,
      token: options.token,
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.createConnection ? { createConnection: options.createConnection } : {}),
    };
    this.connectTimeoutMs = settings.connectTimeoutMs;
    const { heartbeatMs } = settings;
    this.delivery = new RecordDelivery(
      { cursor: options.cursor, maxInboundQueuedFrames: settings.maxInboundQueuedFrames, maxInboundQueuedBytes: settings.maxInboundQueuedBytes },
      {
        onRecords: (records, info) => options.onRecords(records, info),
        handle: (text, bytes) => this.decodeAndHandle(text, bytes),
        socket: () => this.connection?.socket,
        ended: () => this.ended,
        fail: (code, message, extra) => this.fail(code, message, extra),
        diag: (level, message, attrs) => this.diag(level, message, attrs),
      },
    );
    this.budget = new ReconnectBudget({
      ...settings.backoff,
      deadlineMs: settings.reconnectDeadlineMs,
      ...(options.random ? { random: options.random } : {}),
    });
    this.heartbeat = new HeartbeatWatchdog(heartbeatMs, {
      connected: () => this.connection !== null,
      excused: () => this.delivery.busy || this.connection?.socket.isPaused === true,
      ping: () => this.sendFrame({ type: 'ping', t: Date.now() }),
      dead: (silentTicks) => {
        this.diag('warn', `bridge missed ${silentTicks} heartbeats (${heartbeatMs} ms each); reconnecting`);
        this.lose({ reason: `heartbeat timeout (${silentTicks} × ${heartbeatMs} ms without a pong)` });
      },
    });
    this.requests = new RequestTracker(`h${randomBytes(3).toString('hex')}-`, settings.maxQueuedFrames);
    this.journalId = options.journalId;
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.recorder = channelRecorder(options, (error) => this.diag('warn', `recording stopped: ${error.message}`, { path: options.recordTo }));
    this.connect();
  }

  get cursor(): number {
    return this.delivery.cursor;
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
    // The first connection, and the first after a revival, may take a probe's open socket.
    const adopt = (attempt === 1 ? this.options.adoptSocket : this.endpoint.adoptSocket)?.();
    delete this.endpoint.adoptSocket;
    const connection = new BridgeConnection(
      { url: this.endpoint.url, token: this.endpoint.token, headers: this.endpoint.headers, connectTimeoutMs: this.connectTimeoutMs, createConnection: this.endpoint.createConnection, WebSocket: this.options.WebSocket, adopt },
      {
        open: () => {
          this.phase = 'awaiting-hello';
          markPhase('channel-open');
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
    this.delivery.clear(); // frames of the dead socket not yet consumed: the re-attach replays them from the cursor
    this.requests.onDisconnect();
    this.recorder?.event('disconnect', {
      reason: loss.reason,
      cursor: this.cursor,
      ...(loss.closeCode !== undefined ? { closeCode: loss.closeCode } : {}),
      ...(loss.httpStatus !== undefined ? { httpStatus: loss.httpStatus } : {}),
    });

    // A bridge keeps its token for life: a refused token where it was vouched for is another bridge on the freed port
    // (a revived bridge that died before it attached us included). Only the caller's own token, never accepted, is wrong.
    if ((loss.httpStatus === 401 || loss.httpStatus === 403) && this.vouched.has(this.endpoint)) loss = portTaken(loss);
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
    if (looksDead(loss) && this.options.revive && this.mayRevive()) {
      this.revive(loss, this.options.revive);
      return;
    }
    this.backOff(loss);
  }

  /** A retryable loss: wait (capped exponential backoff) and connect again, or give up past the deadline. */
  private backOff(loss: Loss): void {
    const step = this.budget.failure();
    if (step.giveUp) {
      this.fail(
        'reconnect-deadline',
        `gave up reconnecting after ${formatSeconds(step.elapsedMs)}; last cursor ${this.cursor} (last failure: ${loss.reason})`,
      );
      return;
    }
    this.phase = 'backoff';
    // A refusal is a warning (the bridge may be dead and could not be revived); a drop or a timeout is routine.
    this.diag(looksDead(loss) ? 'warn' : 'info', `connection lost: ${loss.reason}; retry ${step.attempt} in ${step.delayMs} ms`, {
      cursor: this.cursor,
      elapsedMs: step.elapsedMs,
    });
    this.status({ state: 'reconnecting', attempt: step.attempt, delayMs: step.delayMs, elapsedMs: step.elapsedMs, reason: loss.reason });
    this.retryTimer = setTimeout(() => this.connect(), step.delayMs);
  }

  /**
   * The loss looks like a dead bridge: have the session layer bring one back (options.revive), then connect to it at
   * once with the same cursor and queued requests. Not dead after all (null): back off as for any loss.
   */
  private revive(loss: Loss, revive: NonNullable<BridgeChannelOptions['revive']>): void {
    this.phase = 'backoff';
    const startedAt = Date.now();
    this.revivals.push(startedAt);
    const attempt = this.revivals.length;
    this.diag('warn', `the bridge looks dead (${loss.reason}); reviving it (revival ${attempt} of at most ${CHANNEL_LIMITS.maxRevives} within ${formatSeconds(CHANNEL_LIMITS.reviveWindowMs)})`, { cursor: this.cursor, attempt });
    this.status({ state: 'reconnecting', attempt, delayMs: 0, elapsedMs: this.budget.elapsedMs, reason: loss.reason });
    this.recorder?.event('revive', { attempt, reason: loss.reason, cursor: this.cursor });
    void reviveWithin(revive, { cause: loss.reason, bridgeId: this.lastHello?.bridgeId }, CHANNEL_LIMITS.reviveTimeoutMs, this.ending.signal).then(
      (endpoint) => {
        if (this.phase !== 'backoff' || this.connection !== null || this.retryTimer !== null) return; // closed meanwhile
        if (endpoint === null) {
          this.diag('warn', `the bridge is not dead after all (a live bridge holds its state dir); reconnecting`, { cursor: this.cursor });
          this.backOff(loss);
          return;
        }
        this.endpoint = endpoint;
        this.vouched.add(endpoint);
        this.diag('warn', `the bridge was revived in ${Date.now() - startedAt} ms (it had died: ${loss.reason}); re-attaching at cursor ${this.cursor}`, {
          cursor: this.cursor,
          reviveMs: Date.now() - startedAt,
        });
        this.connect();
      },
      (error: unknown) => {
        this.fail('bridge-gone', `the bridge is gone (${loss.reason}) and could not be brought back: ${(error as Error).message}; last cursor ${this.cursor}`, { cause: error });
      },
    );
  }

  /** Fewer than maxRevives revivals started within the last reviveWindowMs. */
  private mayRevive(): boolean {
    const since = Date.now() - CHANNEL_LIMITS.reviveWindowMs;
    this.revivals = this.revivals.filter((at) => at > since);
    return this.revivals.length < CHANNEL_LIMITS.maxRevives;
  }

  private clearConnectionTimers(): void {
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = null;
    this.heartbeat.stop();
  }

  // ── inbound ───────────────────────────────────────────────────────────

  private receive(text: string, bytes: number): void {
    this.heartbeat.heard();
    this.delivery.receive(text, bytes);
  }

  private decodeAndHandle(text: string, bytes: number): void {
    const decoded = decodeFrame(text, bridgeFrameSchema, CHANNEL_LIMITS.maxInboundFrameBytes, bytes, fastRecordsFrame);
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
        this.options.onDiagnostic?.(bridgeDiagnostic(frame));
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
    const refusal = refuseHello(hello, { journalId: this.journalId, cursor: this.cursor });
    if (refusal) {
      this.fail(refusal.code, refusal.message, refusal.details);
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
      ...(this.options.owner ? { owner: this.options.owner } : {}),
    });
  }

  /** replay-begin answers our attach: we own the stream from here. */
  private onAttached(): void {
    this.vouched.add(this.endpoint);
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
    markPhase('channel-records');
    const gap = this.delivery.accept(records, this.phase === 'replaying');
    if (!gap) return;
    const reason = `gap: expected seq ${gap.expected}, got ${gap.got}; re-attaching from ${this.cursor}`;
    this.diag('warn', reason);
    this.recorder?.event('gap', { expected: gap.expected, got: gap.got });
    this.lose({ reason, immediate: true });
  }

  private onErrorFrame(frame: ErrorFrame): void {
    const refusal = refuseAttach(frame, { attachId: this.attachId, attaching: this.phase === 'attaching', cursor: this.cursor });
    if (refusal) {
      this.fail(refusal.code, refusal.message, refusal.details);
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
    const added = this.requests.add(frame);
    if (!added.ok) return Promise.reject(added.error);
    if (frame.type === 'diagnostics') this.stickyDiagnostics = frame.enabled ? frame : null;
    this.flushRequests();
    return added.promise;
  }

  /** Send every queued request, in order, if we own the stream. */
  private flushRequests(): void {
    const connection = this.connection;
    if (!connection || (this.phase !== 'replaying' && this.phase !== 'live')) return;
    for (const { text } of this.requests.drainQueued()) this.sendText(connection, text);
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
    this.ending.abort(new Error('the channel ended'));
    this.clearConnectionTimers();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const connection = this.connection;
    this.connection = null;
    connection?.close();
    this.delivery.clear();
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
    markPhase(`channel-${status.state}`);
    this.options.onStatus?.(status);
  }

  private diag(level: HarnessV1Diagnostic['level'], message: string, attrs?: Record<string, unknown>): void {
    this.options.onDiagnostic?.(channelDiagnostic(level, message, attrs));
  }
}
