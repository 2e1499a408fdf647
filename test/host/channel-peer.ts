// A scripted bridge peer for channel unit tests: a real `ws` server on
// loopback that speaks protocol v1 as docs/bridge-internals.md#server describes it
// (hello, attach → replay-begin/records/replay-end → live, acks, ownership),
// with knobs to misbehave in ways the real bridge cannot easily be made to
// (duplicate or skipped seqs, invalid frames, wrong versions, silence). The
// headline channel tests run against the real bridge; this covers edge cases.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  CLOSE_CODES_V1,
  PROTOCOL_LIMITS_V1,
  PROTOCOL_VERSION_V1,
  decodeFrame,
  hostFrameSchema,
  type BridgeFrame,
  type HostFrame,
  type JournalRecord,
} from '../../protocol/v1/index.ts';

export type PeerReply = 'ack' | { error: string; message?: string } | 'ignore';

export type ScriptedBridgeOptions = {
  token: string;
  journalId?: string;
  protocolVersion?: string;
  /** Records per records frame during replay. */
  replayBatch?: number;
};

export class ScriptedBridge {
  readonly token: string;
  journalId: string;
  protocolVersion: string;
  bridgeId = randomUUID();
  readonly records: JournalRecord[] = [];
  /** Every valid frame hosts sent, in arrival order. */
  readonly received: HostFrame[] = [];
  owner: WebSocket | null = null;
  connections = 0;
  /** When true the peer reads frames but answers nothing (no pongs, no acks, no records). */
  silent = false;
  /** Rewrites each outgoing records batch (inject duplicates, gaps). */
  mutateBatch: ((records: JournalRecord[]) => JournalRecord[]) | null = null;
  /** Decides the answer to a request frame; default ack. */
  reply: (frame: HostFrame) => PeerReply = () => 'ack';
  /** Overrides the answer to attach; return true when handled. */
  onAttach: ((socket: WebSocket, frame: Extract<HostFrame, { type: 'attach' }>) => boolean) | null = null;
  private readonly replayBatch: number;
  private readonly server: WebSocketServer;
  /** Highest seq sent to the owner (live sends start after it). */
  private sentSeq = 0;

  private constructor(server: WebSocketServer, options: ScriptedBridgeOptions) {
    this.server = server;
    this.token = options.token;
    this.journalId = options.journalId ?? randomUUID();
    this.protocolVersion = options.protocolVersion ?? PROTOCOL_VERSION_V1;
    this.replayBatch = options.replayBatch ?? 100;
    server.on('connection', (socket) => this.onConnection(socket));
  }

  static async start(options: ScriptedBridgeOptions, port = 0): Promise<ScriptedBridge> {
    const server = new WebSocketServer({
      host: '127.0.0.1',
      port,
      maxPayload: PROTOCOL_LIMITS_V1.maxPayloadBytes,
      verifyClient: (info, done) => {
        const ok = info.req.headers.authorization === `Bearer ${options.token}`;
        if (ok) done(true);
        else done(false, 401, 'Unauthorized');
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('listening', () => resolve());
      server.once('error', reject);
    });
    return new ScriptedBridge(server, options);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  get lastSeq(): number {
    return this.records.length;
  }

  /** Journal `count` stdout records for `turnId` and send them live to the owner. */
  append(count: number, turnId = 't1'): void {
    const first = this.records.length + 1;
    for (let seq = first; seq < first + count; seq++) {
      this.records.push({ seq, turnId, ts: 1_700_000_000_000 + seq, kind: 'stdout', data: { text: `line ${seq}` } });
    }
    this.sendLive();
  }

  /** Send the owner everything after sentSeq (live path). */
  sendLive(): void {
    if (!this.owner || this.silent) return;
    const batch = this.records.slice(this.sentSeq);
    if (batch.length === 0) return;
    this.sendRecords(this.owner, batch);
  }

  send(socket: WebSocket, frame: BridgeFrame | Record<string, unknown>): void {
    socket.send(JSON.stringify(frame));
  }

  sendRaw(socket: WebSocket, text: string): void {
    socket.send(text);
  }

  /** Cut the owner's TCP connection without a close frame. */
  dropOwner(): void {
    const socket = this.owner;
    this.owner = null;
    socket?.terminate();
  }

  clients(): WebSocket[] {
    return [...this.server.clients];
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private sendRecords(socket: WebSocket, records: JournalRecord[]): void {
    const out = this.mutateBatch ? this.mutateBatch(records) : records;
    if (out.length > 0) this.send(socket, { type: 'records', records: out });
    const last = records[records.length - 1];
    if (last && socket === this.owner) this.sentSeq = Math.max(this.sentSeq, last.seq);
  }

  private onConnection(socket: WebSocket): void {
    this.connections++;
    this.send(socket, {
      type: 'hello',
      protocolVersion: this.protocolVersion,
      bridgeVersion: '0.0.0-peer',
      bridgeId: this.bridgeId,
      journalId: this.journalId,
      state: 'running',
      firstSeq: this.records.length > 0 ? 1 : 0,
      lastSeq: this.records.length,
      turns: [],
    });
    socket.on('message', (data: Buffer) => {
      const decoded = decodeFrame(data, hostFrameSchema, PROTOCOL_LIMITS_V1.maxFrameBytes);
      if (!decoded.ok) {
        this.send(socket, { type: 'error', code: decoded.code, message: decoded.message, ...(decoded.id ? { id: decoded.id } : {}) });
        return;
      }
      const frame = decoded.frame;
      this.received.push(frame);
      if (this.silent) return;
      if (frame.type === 'ping') {
        this.send(socket, { type: 'pong', ...(frame.t === undefined ? {} : { t: frame.t }) });
        return;
      }
      if (frame.type === 'pong') return;
      if (frame.type === 'attach') {
        if (this.onAttach?.(socket, frame)) return;
        this.attach(socket, frame.cursor, frame.id);
        return;
      }
      if (socket !== this.owner) {
        this.send(socket, { type: 'error', code: 'not-owner', message: 'attach first', ...(frame.id ? { id: frame.id } : {}) });
        return;
      }
      const answer = this.reply(frame);
      if (answer === 'ignore' || frame.id === undefined) return;
      if (answer === 'ack') this.send(socket, { type: 'ack', id: frame.id, of: frame.type, lastSeq: this.lastSeq });
      else this.send(socket, { type: 'error', id: frame.id, code: answer.error, message: answer.message ?? answer.error });
    });
  }

  private attach(socket: WebSocket, cursor: number, id: string | undefined): void {
    if (cursor > this.lastSeq) {
      this.send(socket, { type: 'error', code: 'cursor-ahead', message: 'cursor beyond journal', lastSeq: this.lastSeq, ...(id ? { id } : {}) });
      return;
    }
    const previous = this.owner;
    if (previous && previous !== socket) {
      this.send(previous, { type: 'error', code: 'not-owner', message: 'displaced by a newer attach' });
      previous.close(CLOSE_CODES_V1.displaced, 'displaced');
    }
    this.owner = socket;
    const to = this.lastSeq;
    this.send(socket, { type: 'replay-begin', from: cursor + 1, to });
    for (let from = cursor; from < to; from += this.replayBatch) {
      this.sendRecords(socket, this.records.slice(from, Math.min(to, from + this.replayBatch)));
    }
    this.sentSeq = to;
    this.send(socket, { type: 'replay-end', to });
  }
}
