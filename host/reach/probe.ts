// One quick look at a bridge: connect, read and validate its hello, close (or
// keep the socket for the session's first channel: spare-socket.ts).
// The ladder uses it to tell "alive, same journal" from "gone" before it
// commits to a rung; it never attaches, so it displaces no owner.
import WebSocket from 'ws';
import type { CreateConnection, OpenSocket } from '../channel/index.ts';
import { bridgeFrameSchema, decodeFrame, PROTOCOL_LIMITS_V1, type HelloFrame } from '../../protocol/v1/index.ts';

export type ProbeResult =
  | { ok: true; hello: HelloFrame; /** With `keep`: the socket, open, and its hello's text. */ open?: OpenSocket }
  | { ok: false; reason: 'refused' | 'unauthorized' | 'timeout' | 'bad-hello' | 'http-error'; detail: string };

/**
 * `headers`: what the sandbox's port endpoint says the connection must carry (a port proxy's own auth).
 * `createConnection`: the byte stream to probe over instead of TCP (the exec transport, exec-relay.ts).
 * `keep`: on a hello, leave the socket open and return it (the caller owns it then).
 */
export function probeBridge(
  url: string,
  token: string,
  timeoutMs: number,
  headers: Readonly<Record<string, string>> = {},
  createConnection?: CreateConnection,
  keep = false,
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, {
      headers: { ...headers, authorization: `Bearer ${token}` },
      maxPayload: PROTOCOL_LIMITS_V1.maxPayloadBytes,
      perMessageDeflate: false, // as the channel's own sockets (connection.ts), which may adopt this one
      handshakeTimeout: timeoutMs,
      ...(createConnection ? { createConnection: createConnection as never } : {}),
    });
    let settled = false;
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.removeAllListeners();
      ws.on('error', () => undefined); // late errors after we gave up carry no information
      ws.terminate();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, reason: 'timeout', detail: `no hello within ${timeoutMs} ms` }), timeoutMs);
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      finish({
        ok: false,
        reason: status === 401 || status === 403 ? 'unauthorized' : 'http-error',
        detail: `HTTP ${status} on upgrade`,
      });
    });
    ws.on('error', (error) => finish({ ok: false, reason: 'refused', detail: error.message }));
    ws.on('close', () => finish({ ok: false, reason: 'refused', detail: 'closed before hello' }));
    ws.on('message', (data: Buffer) => {
      const decoded = decodeFrame(data, bridgeFrameSchema, PROTOCOL_LIMITS_V1.maxPayloadBytes);
      if (decoded.ok && decoded.frame.type === 'hello' && keep && !settled) {
        settled = true;
        clearTimeout(timer);
        ws.removeAllListeners();
        resolve({ ok: true, hello: decoded.frame, open: { socket: ws, frames: [data.toString('utf8')] } });
      } else if (decoded.ok && decoded.frame.type === 'hello') finish({ ok: true, hello: decoded.frame });
      else finish({ ok: false, reason: 'bad-hello', detail: decoded.ok ? `first frame was ${decoded.frame.type}` : decoded.message });
    });
  });
}
