// One socket to the bridge and what its end means. Owns the upgrade options
// (bearer token, handshake timeout, payload cap), the socket's events, the
// facts a close is explained with (HTTP status of a refused upgrade, last
// socket error), the close handshake, and the classification of a loss
// (terminal close codes, 401/403). The channel owns the state machine: when to
// connect, what frames mean, and what a retryable loss costs.
import WebSocket from 'ws';
import { CLOSE_CODES_V1 } from '../../protocol/v1/index.ts';
import type { BridgeChannelErrorCode } from './errors.ts';
import { CHANNEL_LIMITS } from '../limits.ts';
import type { ChannelSocket, ChannelSocketConstructor, CreateConnection, OpenSocket } from './types.ts';

/** How long close() waits for the peer's close frame before cutting the TCP connection. */
const closeHandshakeMs = 1_000;

/**
 * Why a connection ended (or must end). `immediate`: re-attach at once, no backoff (a gap).
 * `errorCode`: the socket error's code (ECONNREFUSED; an exec relay's, exec-socket.ts), what tells a dead bridge from a slow one.
 */
export type Loss = { reason: string; closeCode?: number; httpStatus?: number; immediate?: boolean; errorCode?: string };

export type ConnectionOptions = {
  url: string;
  token: string;
  /** Extra upgrade headers (a sandbox port endpoint's); the bearer token always wins. */
  headers?: Readonly<Record<string, string>> | undefined;
  connectTimeoutMs: number;
  /** The byte stream to run over instead of TCP (the exec transport). */
  createConnection?: CreateConnection | undefined;
  /** Defaults to `ws`. */
  WebSocket?: ChannelSocketConstructor | undefined;
  /** Use this open socket (open and its frames are reported at once) instead of connecting. */
  adopt?: OpenSocket | undefined;
};

export type ConnectionEvents = {
  open(): void;
  /**
   * One frame as text, and its size on the wire. Converted on receipt so the
   * socket chunk a frame was sliced from is not kept alive by a queued frame
   * (a promoted slice pins its whole chunk until a full GC).
   */
  message(text: string, bytes: number): void;
  /** The socket closed or the upgrade was refused. */
  lost(loss: Loss): void;
};

/**
 * A socket and its listeners. Events are reported until drop() or close():
 * after that the socket is stale and whatever it still emits is expected
 * noise.
 */
export class BridgeConnection {
  readonly socket: ChannelSocket;
  private current = true;
  private httpStatus: number | undefined;
  private lastError: string | undefined;
  private lastErrorCode: string | undefined;

  constructor(options: ConnectionOptions, events: ConnectionEvents) {
    const adopted = options.adopt;
    const socket = adopted?.socket ?? new (options.WebSocket ?? WebSocket)(options.url, {
      headers: { ...options.headers, Authorization: `Bearer ${options.token}` },
      handshakeTimeout: options.connectTimeoutMs,
      maxPayload: CHANNEL_LIMITS.maxInboundFrameBytes,
      perMessageDeflate: false,
      ...(options.createConnection ? { createConnection: options.createConnection } : {}),
    });
    this.socket = socket;
    socket.on('unexpected-response', (_req, res) => {
      if (!this.current) return;
      this.httpStatus = res.statusCode;
      res.resume(); // drain the body; we only need the status
      socket.terminate();
    });
    socket.on('open', () => {
      if (this.current) events.open();
    });
    socket.on('message', (data) => {
      if (!this.current) return;
      const buffer = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      events.message(buffer.toString('utf8'), buffer.byteLength);
    });
    socket.on('error', (error) => {
      // 'close' always follows; it decides what happens.
      if (!this.current) return;
      this.lastError = error.message;
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string') this.lastErrorCode = code;
    });
    socket.on('close', (code, reason) => {
      if (!this.current) return;
      const text = reason.toString('utf8');
      const why =
        this.httpStatus !== undefined
          ? `HTTP ${this.httpStatus} on upgrade`
          : `socket closed (${code}${text ? ` ${text}` : ''}${this.lastError ? `; ${this.lastError}` : ''})`;
      events.lost({
        reason: why,
        closeCode: code,
        ...(this.httpStatus !== undefined ? { httpStatus: this.httpStatus } : {}),
        ...(this.lastErrorCode !== undefined ? { errorCode: this.lastErrorCode } : {}),
      });
    });
    if (adopted) {
      // Open already, its hello read: reported before any later socket event (those come as macrotasks).
      queueMicrotask(() => {
        if (this.current) events.open();
        for (const frame of adopted.frames) if (this.current) events.message(frame, Buffer.byteLength(frame));
      });
    }
  }

  send(text: string): void {
    // A send error means the socket is dying; 'close' follows and the reconnect handles it.
    this.socket.send(text, (error) => {
      if (error && this.current) this.lastError = error.message;
    });
  }

  /** Stop reporting and cut the connection (no close handshake: the peer is gone or misbehaving). */
  drop(): void {
    this.current = false;
    if (this.socket.readyState !== WebSocket.CLOSED) this.socket.terminate();
  }

  /** Stop reporting and close: close frame first, cut the TCP connection if the peer does not answer in time. */
  close(): void {
    this.current = false;
    const socket = this.socket;
    if (socket.readyState === WebSocket.OPEN) {
      socket.close(CLOSE_CODES_V1.normal, 'host closed');
      const timer = setTimeout(() => socket.terminate(), closeHandshakeMs);
      timer.unref();
      socket.on('close', () => clearTimeout(timer));
    } else if (socket.readyState !== WebSocket.CLOSED) {
      socket.terminate();
    }
  }
}

/** Terminal close codes and what they mean for the channel. */
const terminalCloseCodes: Partial<Record<number, BridgeChannelErrorCode>> = {
  [CLOSE_CODES_V1.displaced]: 'displaced',
  [CLOSE_CODES_V1.versionMismatch]: 'version-mismatch',
  [CLOSE_CODES_V1.stopping]: 'bridge-stopped',
  [CLOSE_CODES_V1.failed]: 'bridge-failed',
};

const terminalCloseText: Record<string, string> = {
  displaced: 'another host attached to this session (close 4000)',
  'version-mismatch': 'the bridge refused our protocol version (close 4001)',
  'bridge-stopped': 'the bridge is stopping (close 4003)',
};

export type LossVerdict =
  /** The channel ends with this error. */
  | { kind: 'terminal'; code: BridgeChannelErrorCode; message: string }
  /** The bridge closed with `stopping` after acking our stop/destroy: a clean end. */
  | { kind: 'stopped' }
  /** Reconnect (at once when `loss.immediate`, else paced by the backoff). */
  | { kind: 'retry' };

/** What a lost connection means: refused token and terminal close codes end the channel, anything else is retried. */
export function classifyLoss(loss: Loss, context: { stopAcked: boolean; cursor: number }): LossVerdict {
  if (loss.httpStatus === 401 || loss.httpStatus === 403) {
    return { kind: 'terminal', code: 'unauthorized', message: `the bridge refused the token (HTTP ${loss.httpStatus})` };
  }
  const code = loss.closeCode !== undefined ? terminalCloseCodes[loss.closeCode] : undefined;
  if (code === 'bridge-stopped' && context.stopAcked) return { kind: 'stopped' };
  // 4005: the bridge is exiting and its close reason says why (ENOSPC…): retrying a dead port would only hide that.
  if (code === 'bridge-failed') return { kind: 'terminal', code, message: `the bridge exited: ${loss.reason}; last cursor ${context.cursor}` };
  if (code) return { kind: 'terminal', code, message: `${terminalCloseText[code] ?? loss.reason}; last cursor ${context.cursor}` };
  return { kind: 'retry' };
}

/**
 * Socket error codes that say nothing listens where the bridge was: TCP's refusal on its port, or an exec
 * relay that could not reach the port or could not be spawned at all (the sandbox is gone or stopped;
 * exec-socket.ts). A slow or partitioned bridge times out instead, and a port proxy answers with an HTTP status.
 */
const deadBridgeCodes: ReadonlySet<string> = new Set(['ECONNREFUSED', 'HB_RELAY_UNREACHABLE', 'HB_RELAY_SPAWN_FAILED', 'HB_PORT_TAKEN']);

/**
 * A refused token (HTTP 401/403) on the port of a bridge that held this token (it attached us, or the revive hook
 * read the token from the bridge it started): the bridge is gone and another process (the machine's ports are
 * reused) holds its port. A dead bridge, not a wrong token.
 */
export function portTaken(loss: Loss): Loss {
  return { reason: `${loss.reason}: another process answers on the port of the bridge that held this token`, errorCode: 'HB_PORT_TAKEN' };
}

/** The loss looks like a dead bridge (deadBridgeCodes): the channel asks its `revive` hook before backing off. */
export function looksDead(loss: Loss): boolean {
  return loss.httpStatus === undefined && loss.errorCode !== undefined && deadBridgeCodes.has(loss.errorCode);
}
