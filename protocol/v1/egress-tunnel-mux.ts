// Both ends of the egress tunnel (protocol/v1/egress-tunnel.ts) run this: the tunnels of one stream,
// each a local socket whose bytes go out as data frames and whose peer's data frames are written
// into it. Flow control per tunnel and direction: at most EGRESS_TUNNEL_LIMITS.windowBytes sent and
// not credited; past it the socket is paused (so its sender is slowed by TCP), and a credit comes
// back only once the receiver's socket took the bytes. A peer that sends past its window, or credits
// more than it was sent, breaks the protocol (TunnelProtocolError): the caller ends the stream.
import type { Duplex } from 'node:stream';
import { EGRESS_TUNNEL_LIMITS, TunnelProtocolError, type TunnelFrame } from './egress-tunnel.ts';

type Tunnel = {
  readonly id: number;
  readonly socket: Duplex;
  /** Bytes this side may still send before a credit. */
  credit: number;
  /** Bytes received and not yet written into the socket (credited once written). */
  unwritten: number;
  /** Read from the socket, waiting for credit. */
  pending: Buffer[];
  /** The socket's reading ended: an `end` goes once pending is sent. */
  readEnded: boolean;
  /** The socket closed: a `close` goes once pending is sent. */
  socketClosed: boolean;
  paused: boolean;
};

export class TunnelMux {
  readonly #send: (frame: TunnelFrame) => void;
  readonly #tunnels = new Map<number, Tunnel>();
  readonly #onClosed: (() => void) | undefined;

  /** `onClosed`: called after a tunnel is gone (its count is `size` then). */
  constructor(send: (frame: TunnelFrame) => void, onClosed?: () => void) {
    this.#send = send;
    this.#onClosed = onClosed;
  }

  get size(): number {
    return this.#tunnels.size;
  }

  has(id: number): boolean {
    return this.#tunnels.has(id);
  }

  /** Carries `socket` as tunnel `id`. Past maxTunnels: false, the socket destroyed and the peer told (`close`). */
  attach(id: number, socket: Duplex): boolean {
    if (this.#tunnels.has(id)) throw new TunnelProtocolError(`egress tunnel: tunnel ${id} opened twice`);
    if (this.#tunnels.size >= EGRESS_TUNNEL_LIMITS.maxTunnels) {
      socket.destroy();
      this.#send({ t: 'close', id });
      return false;
    }
    const tunnel: Tunnel = { id, socket, credit: EGRESS_TUNNEL_LIMITS.windowBytes, unwritten: 0, pending: [], readEnded: false, socketClosed: false, paused: false };
    this.#tunnels.set(id, tunnel);
    socket.on('data', (chunk: Buffer) => {
      tunnel.pending.push(chunk);
      this.#flush(tunnel);
    });
    socket.once('end', () => {
      tunnel.readEnded = true;
      this.#flush(tunnel);
    });
    socket.once('close', () => {
      tunnel.socketClosed = true;
      this.#flush(tunnel);
    });
    socket.on('error', () => socket.destroy());
    return true;
  }

  /** Applies one frame of the peer's (data, credit, end, close); false for a frame this class does not handle. */
  handle(frame: TunnelFrame): boolean {
    if (frame.t !== 'data' && frame.t !== 'credit' && frame.t !== 'end' && frame.t !== 'close') return false;
    const tunnel = this.#tunnels.get(frame.id);
    // A tunnel this side closed already: the peer's frames that crossed the close are dropped.
    if (tunnel === undefined) return true;
    if (frame.t === 'data') {
      const bytes = Buffer.from(frame.b64, 'base64');
      if (bytes.length > EGRESS_TUNNEL_LIMITS.maxChunkBytes) throw new TunnelProtocolError(`egress tunnel ${frame.id}: a chunk of ${bytes.length} bytes`);
      tunnel.unwritten += bytes.length;
      if (tunnel.unwritten > EGRESS_TUNNEL_LIMITS.windowBytes) throw new TunnelProtocolError(`egress tunnel ${frame.id}: ${tunnel.unwritten} bytes in flight, past the window of ${EGRESS_TUNNEL_LIMITS.windowBytes}`);
      tunnel.socket.write(bytes, (error) => {
        if (error || !this.#tunnels.has(tunnel.id)) return;
        tunnel.unwritten -= bytes.length;
        this.#send({ t: 'credit', id: tunnel.id, bytes: bytes.length });
      });
    } else if (frame.t === 'credit') {
      tunnel.credit += frame.bytes;
      if (tunnel.credit > EGRESS_TUNNEL_LIMITS.windowBytes) throw new TunnelProtocolError(`egress tunnel ${frame.id}: credited past the window`);
      this.#flush(tunnel);
    } else if (frame.t === 'end') {
      tunnel.socket.end();
    } else {
      this.#tunnels.delete(tunnel.id);
      this.#onClosed?.();
      // What the socket holds still goes out (end flushes), then it is gone.
      tunnel.socket.end();
      tunnel.socket.once('finish', () => tunnel.socket.destroy());
      if (tunnel.socket.writableFinished) tunnel.socket.destroy();
    }
    return true;
  }

  /** The stream is gone: every tunnel's socket is destroyed (its client sees the connection close). */
  closeAll(): void {
    const tunnels = [...this.#tunnels.values()];
    this.#tunnels.clear();
    for (const tunnel of tunnels) tunnel.socket.destroy();
  }

  #flush(tunnel: Tunnel): void {
    if (!this.#tunnels.has(tunnel.id)) return;
    while (tunnel.pending.length > 0 && tunnel.credit > 0) {
      const chunk = tunnel.pending[0]!;
      const size = Math.min(chunk.length, tunnel.credit, EGRESS_TUNNEL_LIMITS.maxChunkBytes);
      this.#send({ t: 'data', id: tunnel.id, b64: chunk.subarray(0, size).toString('base64') });
      tunnel.credit -= size;
      if (size === chunk.length) tunnel.pending.shift();
      else tunnel.pending[0] = chunk.subarray(size);
    }
    if (tunnel.pending.length > 0) {
      if (!tunnel.paused && !tunnel.socketClosed) {
        tunnel.paused = true;
        tunnel.socket.pause();
      }
      return;
    }
    if (tunnel.paused) {
      tunnel.paused = false;
      tunnel.socket.resume();
    }
    if (tunnel.readEnded) {
      tunnel.readEnded = false;
      this.#send({ t: 'end', id: tunnel.id });
    }
    if (tunnel.socketClosed) {
      this.#tunnels.delete(tunnel.id);
      this.#onClosed?.();
      this.#send({ t: 'close', id: tunnel.id });
    }
  }
}
