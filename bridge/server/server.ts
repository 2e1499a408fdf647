// server.ts owns the WebSocket side of the bridge: the HTTP upgrade and token
// check, hello, ownership (one owner; a newer attach displaces the older),
// validation and routing of host frames, acks/errors, heartbeat, diagnostics
// forwarding and the stop/destroy sequence. One socket and its control frames are
// connection.ts's; the record stream (replay, live, backpressure) record-stream.ts's;
// seq and disk journal.ts's; the child supervisor.ts's; after-ready.ts wires them.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
// Values from their own protocol modules: the index would also build the schemas of every frame the bridge only sends.
import { CLOSE_CODES_V1 } from '../../protocol/v1/close-codes.ts';
import { decodeFrame } from '../../protocol/v1/frames/decode.ts';
import { hostFrameSchema } from '../../protocol/v1/frames/host-frame.ts';
import { PROTOCOL_LIMITS_V1 } from '../../protocol/v1/limits.ts';
import { PROTOCOL_VERSION_V1, isCompatibleProtocol } from '../../protocol/v1/version.ts';
import type { AckFrame, ApprovalFrame, AttachFrame, DiagnosticFrame, HelloFrame, HostFrame, HostToolSpec, JournalEpochFrame, ToolResultFrame } from '../../protocol/v1/index.ts';
import { createTokenCheck, presentedToken } from '../auth/token-check.ts';
import { resolveServerLimits, type ServerLimits } from '../limits.ts';
import type { Logger } from '../logger.ts';
import { Connection, delay } from './connection.ts';
import { CliWaits } from './cli-waits.ts';
import { AnsweredCalls } from './answered-calls.ts';
import { OwnerWatch } from './owner-watch.ts';
import { RecordStream, type DurableBatch } from './record-stream.ts';
import type { BridgeServerOptions, CommandResult, PendingCall } from './server-seams.ts';

export type { BridgeServerOptions, CommandResult, JournalPort, Lifecycle, PendingCall, SupervisorPort } from './server-seams.ts';

type ShutdownKind = 'stop' | 'destroy';

export async function createBridgeServer(options: BridgeServerOptions): Promise<BridgeServer> {
  const server = new BridgeServer(options);
  await server.listen();
  return server;
}

export class BridgeServer {
  /** Calls awaiting a host answer, by callId (filled by the MCP endpoint). */
  readonly pendingCalls = new Map<string, PendingCall>();
  /** Calls the CLI waits on over its own stdio, as the host named them (host-wait frames). */
  readonly cliWaits: CliWaits;
  /**
   * Host answers to MCP tool calls this bridge journaled or adopted from the journal, by callId: a
   * re-sent `tool-result` (at-least-once, host/channel/requests.ts) that repeats one is acked, not refused.
   */
  readonly answeredCalls = new AnsweredCalls();

  readonly #options: BridgeServerOptions;
  readonly #limits: ServerLimits;
  readonly #log: Logger;
  readonly #tokenMatches: (presented: string | undefined) => boolean;
  readonly #http: Server;
  /** What accepts connections: #http itself, or main.ts's paused TCP listener feeding #http. */
  readonly #listener: NetServer;
  readonly #wss: WebSocketServer;
  readonly #connections = new Set<Connection>();
  #owner: Connection | null = null;
  /** The newest owner epoch and id that attached (fencing, docs/design.md#d3); kept while no one is attached. */
  #fence: { epoch: number; id: string } | null = null;
  #nextConnectionId = 1;
  #heartbeat: NodeJS.Timeout | null = null;
  #watch: OwnerWatch | null = null;
  #shuttingDown: ShutdownKind | null = null;
  /** What `error disk-full` says while the journal waits for space. */
  #diskFull: string | null = null;

  constructor(options: BridgeServerOptions) {
    this.#options = options;
    this.#limits = resolveServerLimits(options.limits);
    this.#log = options.logger.child('server');
    this.#tokenMatches = createTokenCheck(options.token);
    this.cliWaits = new CliWaits(options.supervisor, options.record);
    this.#wss = new WebSocketServer({
      noServer: true,
      maxPayload: PROTOCOL_LIMITS_V1.maxPayloadBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
    const refuse = (request: IncomingMessage, response: ServerResponse): void => {
      response.writeHead(426, { 'content-type': 'text/plain', connection: 'close' }).end('websocket only\n');
    };
    this.#http = createServer();
    this.#http.on('request', refuse);
    this.#http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => this.#upgrade(request, socket, head));
    this.#listener = options.listener ?? this.#http;
    this.#listener.maxConnections = this.#limits.maxConnections;
    if (this.#listener !== this.#http) {
      // Accepted paused (pauseOnConnect): the HTTP server takes the socket unread, then reading starts.
      this.#listener.on('connection', (socket: Socket) => {
        this.#http.emit('connection', socket);
        socket.resume();
      });
    }
  }

  /** The bound port (after listen). */
  get port(): number {
    const address = this.#listener.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  listen(): Promise<void> {
    if (this.#listener.listening) {
      this.#listening();
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.#listener.once('error', reject);
      this.#listener.listen(this.#options.port, this.#options.host, () => {
        this.#listener.off('error', reject);
        this.#listening();
        resolve();
      });
    });
  }

  #listening(): void {
    this.#listener.on('error', (error) => this.#log.error({ err: error }, 'http server error'));
    this.#heartbeat = setInterval(this.#beat, this.#limits.heartbeatMs);
    this.#heartbeat.unref();
    this.#watch = new OwnerWatch(this.#options.policy ?? {}, {
      hasOwner: () => this.#owner !== null,
      idle: () => this.#options.supervisor.state === 'idle',
      pendingCalls: this.pendingCalls,
      cliWaits: this.cliWaits,
      stop: () => void this.shutdown('stop'),
    }, this.#log);
    this.#log.info({ host: this.#options.host, port: this.port }, 'listening');
  }

  /** journal onDurable → the owner's stream (main wires this). */
  onDurable(batch: DurableBatch): void {
    this.#owner?.stream?.offer(batch);
  }

  /**
   * The record path's disk-full report (docs/bridge-internals.md#disk-full): the owner gets
   * `error disk-full` naming the errno now, and each new owner on attach, until space returns
   * (null), which the owner hears as an info diagnostic.
   */
  diskFull(error: Error | null): void {
    this.#diskFull = error === null ? null : diskFullText(error);
    const owner = this.#owner;
    if (owner === null) return;
    if (this.#diskFull !== null) owner.error('disk-full', this.#diskFull);
    else owner.send(JSON.stringify(diskBackDiagnostic()));
  }

  /** Stop or destroy the bridge: lifecycle step, ack the requester, close sockets, exit. Also SIGTERM's path. */
  async shutdown(kind: ShutdownKind, graceMs?: number, requester?: { connection: Connection; id?: string }): Promise<void> {
    if (this.#shuttingDown !== null) {
      if (requester) requester.connection.error('stopping', `the bridge is already ${this.#shuttingDown}ping`, requester.id);
      return;
    }
    this.#shuttingDown = kind;
    this.#log.info({ kind }, 'shutting down');
    const { lifecycle, journal } = this.#options;
    let code = 0;
    try {
      if (kind === 'stop') await lifecycle.stop(graceMs);
      else await lifecycle.destroy();
    } catch (error) {
      code = 70;
      this.#log.error({ err: error }, `${kind} failed`);
    }
    if (requester?.id !== undefined) {
      const ack: AckFrame = { type: 'ack', id: requester.id, of: kind, lastSeq: journal.durableSeq };
      if (code !== 0) requester.connection.error('internal', `${kind} failed; see bridge.log`, requester.id);
      else await requester.connection.sendAndWait(JSON.stringify(ack));
    }
    await this.close(CLOSE_CODES_V1.stopping, kind);
    lifecycle.exit(code);
  }

  /** Closes every socket and the listener. */
  async close(code: number = CLOSE_CODES_V1.goingAway, reason = 'closing'): Promise<void> {
    if (this.#heartbeat !== null) clearInterval(this.#heartbeat);
    this.#heartbeat = null;
    this.#watch?.close();
    this.#options.logger.setForward(null);
    const closed: Promise<void>[] = [];
    for (const connection of this.#connections) {
      connection.stream?.close();
      closed.push(new Promise((resolve) => connection.ws.once('close', () => resolve())));
      connection.ws.close(code, reason);
    }
    this.#listener.close();
    if (this.#listener !== this.#http) this.#http.close(); // idle keep-alive connections it parsed
    // Give close frames a moment to go out; a peer that never answers does not hold the exit.
    await Promise.race([Promise.all(closed), delay(500)]);
    for (const connection of this.#connections) connection.ws.terminate();
  }

  #upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', (error) => this.#log.debug({ err: error }, 'upgrade socket error'));
    if (!this.#tokenMatches(presentedToken(request))) {
      this.#log.warn({ remote: request.socket.remoteAddress }, 'refused a connection: wrong or missing token');
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (this.#shuttingDown !== null) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.#wss.handleUpgrade(request, socket, head, (ws) => this.#connected(ws));
  }

  #connected(ws: WebSocket): void {
    const connection = new Connection(ws, this.#nextConnectionId++, this.#limits.maxControlBufferedBytes, this.#log);
    this.#connections.add(connection);
    const log = this.#log;
    log.debug({ connection: connection.id }, 'connected');
    ws.on('message', (data: RawData, isBinary: boolean) => this.#received(connection, data, isBinary));
    ws.on('error', (error) => log.debug({ connection: connection.id, err: error }, 'socket error'));
    ws.on('close', (code: number) => {
      log.debug({ connection: connection.id, code }, 'closed');
      this.#connections.delete(connection);
      connection.stream?.close();
      connection.stream = null;
      if (this.#owner === connection) this.#release();
    });
    connection.send(JSON.stringify(this.#hello()));
  }

  #hello(): HelloFrame {
    const { journal, supervisor, turns, recipeIdentity, isolation } = this.#options;
    const lastSeq = journal.durableSeq;
    return {
      type: 'hello',
      protocolVersion: PROTOCOL_VERSION_V1,
      bridgeVersion: this.#options.bridgeVersion,
      bridgeId: this.#options.bridgeId,
      journalId: journal.journalId,
      state: this.#shuttingDown !== null ? 'stopping' : supervisor.state,
      ...(supervisor.turnId === null ? {} : { runningTurnId: supervisor.turnId }),
      firstSeq: lastSeq === 0 ? 0 : journal.firstSeq,
      lastSeq,
      turns: turns.snapshot(lastSeq),
      ...(recipeIdentity === undefined ? {} : { recipeIdentity }),
      ...(isolation === undefined ? {} : { isolation }),
    };
  }

  #received(connection: Connection, data: RawData, isBinary: boolean): void {
    // ws hands over one Buffer per message with the default binaryType; the others are normalised for safety.
    const raw = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const decoded = decodeFrame(raw, hostFrameSchema, PROTOCOL_LIMITS_V1.maxFrameBytes);
    if (!decoded.ok) {
      this.#log.debug({ connection: connection.id, code: decoded.code, isBinary }, 'refused a frame');
      connection.error(decoded.code, decoded.message, decoded.id);
      return;
    }
    this.#route(connection, decoded.frame).catch((error: unknown) => {
      this.#log.error({ err: error, type: decoded.frame.type }, 'frame handler failed');
      connection.error('internal', `handling ${decoded.frame.type} failed`, requestId(decoded.frame));
    });
  }

  async #route(connection: Connection, frame: HostFrame): Promise<void> {
    switch (frame.type) {
      case 'ping':
        connection.send(frame.t === undefined ? '{"type":"pong"}' : JSON.stringify({ type: 'pong', t: frame.t }));
        return;
      case 'pong':
        return; // an answer to a ping frame; the heartbeat uses ws-level pings
      case 'attach':
        this.#attach(connection, frame);
        return;
    }
    if (this.#owner !== connection) {
      connection.error('not-owner', `${frame.type} needs ownership of the stream: attach first`, frame.id);
      return;
    }
    if (connection.owner !== null && this.#fence !== null && connection.owner.id !== this.#fence.id) {
      connection.error('fenced', `owner epoch ${connection.owner.epoch} is fenced off by epoch ${this.#fence.epoch}`, frame.id);
      return;
    }
    if (this.#shuttingDown !== null) {
      connection.error('stopping', `the bridge is ${this.#shuttingDown === 'stop' ? 'stopping' : 'being destroyed'}`, frame.id);
      return;
    }
    const { supervisor, turns } = this.#options;
    switch (frame.type) {
      case 'start':
        return this.#settle(connection, frame, supervisor.start(frame.turnId, frame.launch, frame.input, tools(frame.tools)));
      case 'rerun':
        if (!turns.has(frame.of)) {
          connection.error('unknown-turn', `rerun of ${frame.of}: no such turn in this journal`, frame.id);
          return;
        }
        return this.#settle(
          connection,
          frame,
          supervisor.start(frame.turnId, frame.launch, frame.input, { ...tools(frame.tools), rerun: true }),
        );
      case 'input': {
        // An answer to a call the owner-less timeout already failed is refused, never written (cli-waits.ts).
        const refused = frame.callId === undefined ? null : this.cliWaits.answer(frame.callId, frame.turnId, frame.answer);
        // Held by a launch handshake, the write settles once written: only this frame's ack waits (#received does not await #route).
        return this.#settle(connection, frame, refused ?? supervisor.write(frame.turnId, frame.text));
      }
      case 'host-wait':
        if (turns.unfinished?.turnId !== frame.turnId) {
          connection.error('unknown-turn', `host-wait for ${frame.turnId}: that turn is not running`, frame.id);
          return;
        }
        // An MCP call is the bridge's own already; a CLI-side one is kept for the owner-less timeout.
        return this.#settle(connection, frame, this.pendingCalls.has(frame.callId) ? { ok: true } : this.cliWaits.add(frame));
      case 'signal':
        return this.#settle(connection, frame, supervisor.signal(frame.turnId, frame.signal));
      case 'abort':
        return this.#settle(connection, frame, supervisor.abort(frame.turnId, frame.graceMs));
      case 'tool-result':
      case 'approval':
        return this.#answerCall(connection, frame);
      case 'journal-epoch':
        return this.#newEpoch(connection, frame);
      case 'expect':
        return this.#settle(connection, frame, supervisor.expect?.(frame.launch) ?? { ok: true });
      case 'diagnostics':
        this.#setDiagnostics(frame.enabled ? connection : null, frame.level);
        return this.#settle(connection, frame, { ok: true });
      case 'stop':
        return this.shutdown('stop', frame.graceMs, { connection, ...idOf(frame) });
      case 'destroy':
        return this.shutdown('destroy', undefined, { connection, ...idOf(frame) });
    }
  }

  #attach(connection: Connection, frame: AttachFrame): void {
    const { journal } = this.#options;
    if (!isCompatibleProtocol(frame.protocolVersion)) {
      connection.error('version-mismatch', `this bridge speaks protocol ${PROTOCOL_VERSION_V1}, not ${frame.protocolVersion}`, frame.id);
      connection.ws.close(CLOSE_CODES_V1.versionMismatch, 'version mismatch');
      return;
    }
    if (frame.journalId !== undefined && frame.journalId !== journal.journalId) {
      connection.error('journal-mismatch', `this bridge holds journal ${journal.journalId}, not ${frame.journalId}`, frame.id);
      return;
    }
    const lastSeq = journal.durableSeq;
    const firstSeq = lastSeq === 0 ? 0 : journal.firstSeq;
    if (frame.cursor > lastSeq) {
      connection.error('cursor-ahead', `cursor ${frame.cursor} is beyond the journal's last seq ${lastSeq}`, frame.id, { firstSeq, lastSeq });
      return;
    }
    if (firstSeq > 0 && frame.cursor < firstSeq - 1) {
      connection.error('cursor-expired', `cursor ${frame.cursor} is older than the journal's first seq ${firstSeq}`, frame.id, { firstSeq, lastSeq });
      return;
    }
    if (this.#shuttingDown !== null) {
      connection.error('stopping', 'the bridge is stopping', frame.id);
      return;
    }
    const fenced = this.#fenced(connection, frame.owner);
    if (fenced !== null) {
      connection.error('fenced', fenced, frame.id);
      return;
    }
    if (frame.owner !== undefined) {
      // A takeover from an older state keeps the newest epoch seen, so the host it replaced stays fenced off.
      this.#fence = { epoch: Math.max(frame.owner.epoch, this.#fence?.epoch ?? 0), id: frame.owner.id };
      connection.owner = this.#fence;
    }
    const previous = this.#owner;
    if (previous !== null && previous !== connection) {
      this.#release();
      previous.stream?.close();
      previous.stream = null;
      previous.error('not-owner', 'displaced by a newer attach');
      previous.ws.close(CLOSE_CODES_V1.displaced, 'displaced');
      this.#log.info({ connection: previous.id, by: connection.id }, 'owner displaced');
    }
    connection.stream?.close(); // a second attach on the same socket restarts its stream
    const stream = new RecordStream(connection.ws, journal, this.#limits, this.#log);
    connection.stream = stream;
    this.#owner = connection;
    this.#log.info({ connection: connection.id, cursor: frame.cursor, lastSeq }, 'attached');
    if (frame.id !== undefined) connection.send(JSON.stringify({ type: 'ack', id: frame.id, of: 'attach', lastSeq } satisfies AckFrame));
    stream.start(frame.cursor);
    if (this.#diskFull !== null) connection.error('disk-full', this.#diskFull);
  }

  /**
   * Fencing (docs/design.md#d3): an attach naming its owner gets in with a newer epoch than the fence,
   * as the fence's own host again (a reconnect, by id), or when no other connection owns the stream (its
   * host is gone: a host crash resumed from an older state), or when the connected owner runs no turn
   * (a finished host left attached is displaced, as without fencing). Otherwise the reason it is refused.
   */
  #fenced(connection: Connection, owner: AttachFrame['owner']): string | null {
    const fence = this.#fence;
    if (owner === undefined || fence === null || owner.id === fence.id || owner.epoch > fence.epoch) return null;
    const current = this.#owner;
    if (current === null || current === connection) return null;
    if (this.#options.supervisor.state !== 'running') return null;
    return owner.epoch < fence.epoch
      ? `owner epoch ${owner.epoch} is older than that of the host driving the running turn (${fence.epoch}): another host resumed the session since`
      : `another host resumed this session from the same state (owner epoch ${fence.epoch}) and drives the running turn`;
  }

  /** Acks a command once its records are durable (and so already on their way to the owner), or reports its error. */
  async #settle(connection: Connection, frame: HostFrame & { id?: string }, pending: CommandResult | Promise<CommandResult>): Promise<void> {
    const result = await pending;
    if (!result.ok) {
      connection.error(result.code, result.message, frame.id);
      return;
    }
    if (frame.id === undefined) return;
    const { journal } = this.#options;
    await journal.flush();
    connection.send(JSON.stringify({ type: 'ack', id: frame.id, of: frame.type, lastSeq: journal.durableSeq } satisfies AckFrame));
  }

  /** A host read this journal further than it goes (docs/design.md#d5): a new journal id before any record the host causes. */
  async #newEpoch(connection: Connection, frame: JournalEpochFrame): Promise<void> {
    const { journal } = this.#options;
    const before = journal.journalId;
    if (frame.journalId !== before || frame.cursor <= journal.durableSeq || journal.newEpoch === undefined) {
      const why = frame.journalId !== before ? `this bridge holds journal ${before}, not ${frame.journalId}` : `journal ${before} is not behind cursor ${frame.cursor} (last seq ${journal.durableSeq})`;
      connection.error('journal-mismatch', journal.newEpoch === undefined ? 'this bridge cannot renew its journal id' : why, frame.id);
      return;
    }
    const journalId = await journal.newEpoch();
    this.#log.warn({ before, journalId, cursor: frame.cursor, lastSeq: journal.durableSeq }, 'journal found behind a host\'s cursor (restored from an earlier snapshot); new journal id');
    if (frame.id !== undefined) connection.send(JSON.stringify({ type: 'ack', id: frame.id, of: frame.type, lastSeq: journal.durableSeq, journalId } satisfies AckFrame));
  }

  async #answerCall(connection: Connection, frame: ToolResultFrame | ApprovalFrame): Promise<void> {
    const call = this.pendingCalls.get(frame.callId);
    const wanted = frame.type === 'tool-result' ? 'tool-call' : 'approval-request';
    if (call === undefined || call.kind !== wanted) {
      // The same answer again (the host re-sent it after losing the ack, perhaps to a bridge that adopted the call):
      // it is journaled once already, so it is acked; a different answer to an answered call stays refused.
      if (frame.type === 'tool-result' && this.answeredCalls.repeats(frame)) {
        this.#log.info({ callId: frame.callId }, 're-sent tool-result repeats the journaled answer; acked');
        await this.#settle(connection, frame, { ok: true });
        return;
      }
      connection.error('unknown-call', `no pending ${wanted} with callId ${frame.callId}`, frame.id);
      return;
    }
    this.pendingCalls.delete(frame.callId);
    if (frame.type === 'tool-result') this.answeredCalls.add(frame.callId, frame);
    if (call.kind === 'tool-call' && frame.type === 'tool-result') call.answer(frame);
    else if (call.kind === 'approval-request' && frame.type === 'approval') call.answer(frame);
    await this.#settle(connection, frame, { ok: true });
  }

  #setDiagnostics(connection: Connection | null, level: DiagnosticFrame['level'] | undefined): void {
    const { logger } = this.#options;
    if (connection === null) {
      logger.setForward(null);
      return;
    }
    const maxBytes = this.#limits.maxDiagnosticBytes;
    logger.setForward((frame) => {
      // Only to the current owner, and dropped (never queued) while it is behind: diagnostics are not journaled.
      if (this.#owner !== connection || connection.stream === null || connection.stream.isBehind) return;
      let text = JSON.stringify(frame);
      if (text.length > maxBytes) text = JSON.stringify({ ...frame, attrs: { truncated: true } });
      connection.ws.send(text);
    }, level ?? 'info');
  }

  /** The owner went away: nobody to forward diagnostics to. */
  #release(): void {
    this.#owner = null;
    this.#options.logger.setForward(null);
  }

  readonly #beat = (): void => {
    for (const connection of this.#connections) connection.beat();
  };
}

/** `ENOSPC: no space left on device, write` → what the owner reads, errno first. */
function diskFullText(error: Error): string {
  return `the journal cannot be written: ${error.message}; the CLI's output is paused and the write is retried until space returns`;
}

function diskBackDiagnostic(): DiagnosticFrame {
  return { type: 'diagnostic', level: 'info', subsystem: 'journal', message: "journal writes resumed: space is back; the CLI's output continues", ts: Date.now(), attrs: { code: 'disk-ok' } };
}

function tools(list: HostToolSpec[] | undefined): { tools?: HostToolSpec[] } {
  return list === undefined ? {} : { tools: list };
}

function idOf(frame: { id?: string }): { id?: string } {
  return frame.id === undefined ? {} : { id: frame.id };
}

function requestId(frame: HostFrame): string | undefined {
  return 'id' in frame ? frame.id : undefined;
}
