// The channel's public types: the options a caller passes, the handle it gets
// back, the status stream, and the socket seam tests fill with a fake. No
// values live here; host/channel/index.ts re-exports every name, and that is the
// import path callers use.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';
import type { AckFrame, HelloFrame, JournalRecord } from '../../protocol/v1/index.ts';
import type { BridgeChannelError } from './errors.ts';
import type { ChannelRequest } from './requests.ts';

/** The subset of a `ws` client the channel uses; `ws` itself satisfies it (tests may pass a fake). */
export interface ChannelSocket {
  readonly readyState: number;
  readonly isPaused: boolean;
  send(data: string, cb?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  pause(): void;
  resume(): void;
  on(event: 'open', listener: () => void): this;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void): this; // ws's RawData, spelled out so the published .d.ts need no @types/ws
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'unexpected-response', listener: (req: { destroy(): void }, res: IncomingMessage) => void): this;
}
export type ChannelSocketOptions = {
  headers: Record<string, string>;
  handshakeTimeout: number;
  maxPayload: number;
  perMessageDeflate: boolean;
  /** Opens the byte stream the upgrade runs over instead of a TCP connection to the URL (Node's http `createConnection`). */
  createConnection?: CreateConnection;
};
/** A byte stream to the bridge other than TCP: the exec transport's relay (host/reach/exec-relay.ts). */
export type CreateConnection = (options: object) => Duplex;
export type ChannelSocketConstructor = new (url: string, options: ChannelSocketOptions) => ChannelSocket;

export type ChannelStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'attaching'; bridgeId: string; journalId: string; cursor: number }
  | { state: 'replaying'; from: number; to: number }
  | { state: 'live'; cursor: number }
  | { state: 'reconnecting'; attempt: number; delayMs: number; elapsedMs: number; reason: string }
  | { state: 'closed'; error: BridgeChannelError | null };

export type RecordsInfo = { replay: boolean };

/** A socket to the bridge already open, with the frames it received so far (its hello first): a probe's, handed over. */
export type OpenSocket = { readonly socket: ChannelSocket & { removeAllListeners(): unknown }; readonly frames: readonly string[] };

export type BridgeChannelOptions = {
  url: string;
  token: string;
  /** Headers the sandbox's port endpoint requires on every upgrade (HarnessV1PortEndpoint.headers). */
  headers?: Readonly<Record<string, string>>;
  /** How to open each connection when the bridge is not reached over TCP (the exec transport, docs/remote-providers.md). */
  createConnection?: CreateConnection;
  /** Highest seq the consumer already has; delivery starts at cursor+1. */
  cursor: number;
  /** Expected journal; when unset the first hello's journalId is pinned for later reconnects. */
  journalId?: string;
  /** Sent with every attach (fencing, docs/design.md#d3): the session's owner epoch and this host instance's id. */
  owner?: { epoch: number; id: string };
  reconnectDeadlineMs?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  heartbeatMs?: number;
  connectTimeoutMs?: number;
  maxQueuedFrames?: number;
  /** Frames queued for a busy async onRecords before the socket is paused (CHANNEL_LIMITS.maxInboundQueuedFrames). */
  maxInboundQueuedFrames?: number;
  /** The same queue bounded in wire bytes (CHANNEL_LIMITS.maxInboundQueuedBytes). */
  maxInboundQueuedBytes?: number;
  /** NDJSON recording of every frame both ways (docs/recording-format.md). */
  recordTo?: string;
  /**
   * Records in seq order, each exactly once. Returning a promise pauses
   * delivery (and, past the inbound queue's limits, the socket) until it settles.
   * A throw or rejection ends the channel with `consumer-failed`.
   */
  onRecords: (records: JournalRecord[], info: RecordsInfo) => void | Promise<void>;
  onHello?: (hello: HelloFrame) => void;
  onStatus?: (status: ChannelStatus) => void;
  onDiagnostic?: (diagnostic: HarnessV1Diagnostic) => void;
  WebSocket?: ChannelSocketConstructor;
  /** An open socket to the same bridge for the first connection instead of a new one (reach/spare-socket.ts); undefined: connect. */
  adoptSocket?: () => OpenSocket | undefined;
  /**
   * Called when a loss looks like a dead bridge (connection refused on its port, an exec relay that cannot
   * reach it or cannot be spawned: connection.ts looksDead), before any backoff. It brings a bridge back
   * (the session layer climbs the ladder, host/reach/revive.ts) and says where it now listens: the channel
   * connects there at once, its cursor and queued requests kept. `null`: the bridge is not dead after all
   * (a live one holds its state dir), keep reconnecting as before. A rejection ends the channel with
   * `bridge-gone`, its message naming the cause, and so does a revival past CHANNEL_LIMITS.reviveTimeoutMs (`signal`
   * aborts then). At most CHANNEL_LIMITS.maxRevives calls within reviveWindowMs (a crash loop then ends in the backoff).
   */
  revive?: (dead: { cause: string; bridgeId: string | undefined }, signal: AbortSignal) => Promise<RevivedEndpoint | null>;
  /** [0, 1) source for backoff jitter (tests). */
  random?: () => number;
};

/** Where a revived bridge listens (BridgeChannelOptions.revive). */
export type RevivedEndpoint = {
  url: string;
  token: string;
  headers?: Readonly<Record<string, string>>;
  createConnection?: CreateConnection;
  /** The revival's probe socket, open, for the next connection (as adoptSocket). */
  adoptSocket?: () => OpenSocket | undefined;
};

export type BridgeChannel = {
  /** Highest seq delivered to onRecords. */
  readonly cursor: number;
  /** The latest hello, or null before the first one. */
  readonly hello: HelloFrame | null;
  readonly state: ChannelStatus['state'];
  /** Send a request; resolves on its ack, rejects with ChannelRequestError (with the bridge's code). */
  request(frame: ChannelRequest): Promise<AckFrame>;
  /** Resolves once replay-end arrived on the current attach; rejects with the terminal error. */
  whenLive(): Promise<void>;
  /** Resolves when the channel has ended: null after close(), the error after a terminal one. */
  readonly closed: Promise<BridgeChannelError | null>;
  /** Close cleanly (close frame, pending requests rejected with `closed`, recording flushed). */
  close(): Promise<void>;
};
