import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CLOSE_CODES_V1 } from '../../../protocol/v1/index.ts';
import { BridgeConnection, classifyLoss, type Loss } from '../../../host/channel/connection.ts';
import type { ChannelSocketOptions } from '../../../host/channel/types.ts';

describe('classifyLoss', () => {
  const at = { stopAcked: false, cursor: 7 };

  it('401/403 on upgrade: unauthorized, terminal', () => {
    for (const httpStatus of [401, 403]) {
      expect(classifyLoss({ reason: `HTTP ${httpStatus} on upgrade`, closeCode: 1006, httpStatus }, at)).toEqual({
        kind: 'terminal',
        code: 'unauthorized',
        message: `the bridge refused the token (HTTP ${httpStatus})`,
      });
    }
  });

  it('terminal close codes name the code and the cursor', () => {
    const cases: Array<[number, string]> = [
      [CLOSE_CODES_V1.displaced, 'displaced'],
      [CLOSE_CODES_V1.versionMismatch, 'version-mismatch'],
      [CLOSE_CODES_V1.stopping, 'bridge-stopped'],
    ];
    for (const [closeCode, code] of cases) {
      const verdict = classifyLoss({ reason: 'socket closed', closeCode }, at);
      expect(verdict).toMatchObject({ kind: 'terminal', code });
      expect(verdict.kind === 'terminal' && verdict.message).toMatch(new RegExp(`\\(close ${closeCode}\\); last cursor 7$`));
    }
  });

  it('stopping after our stop/destroy was acked is a clean end', () => {
    expect(classifyLoss({ reason: 'socket closed', closeCode: CLOSE_CODES_V1.stopping }, { stopAcked: true, cursor: 7 })).toEqual({ kind: 'stopped' });
  });

  it('anything else is retried: 1006, 502 on upgrade, heartbeat, gap', () => {
    const losses: Loss[] = [
      { reason: 'socket closed (1006)', closeCode: 1006 },
      { reason: 'HTTP 502 on upgrade', closeCode: 1006, httpStatus: 502 },
      { reason: 'heartbeat timeout' },
      { reason: 'gap', immediate: true },
    ];
    for (const loss of losses) expect(classifyLoss(loss, { stopAcked: true, cursor: 7 })).toEqual({ kind: 'retry' });
  });
});

class FakeSocket extends EventEmitter {
  static last: FakeSocket;
  readyState = 0;
  isPaused = false;
  sent: string[] = [];
  closedWith: Array<number | undefined> = [];
  terminated = 0;
  constructor(
    readonly url: string,
    readonly options: ChannelSocketOptions,
  ) {
    super();
    FakeSocket.last = this;
  }
  send(data: string, cb?: (err?: Error) => void): void {
    this.sent.push(data);
    cb?.(this.readyState === 1 ? undefined : new Error('not open'));
  }
  close(code?: number): void {
    this.closedWith.push(code);
  }
  terminate(): void {
    this.terminated++;
  }
  pause(): void {}
  resume(): void {}
}

function connect() {
  const seen: string[] = [];
  const connection = new BridgeConnection(
    { url: 'ws://bridge.test/', token: 'tok', connectTimeoutMs: 1234, WebSocket: FakeSocket as never },
    {
      open: () => seen.push('open'),
      message: (text, bytes) => seen.push(`message ${text} (${bytes} bytes)`),
      lost: (loss) => seen.push(`lost ${JSON.stringify(loss)}`),
    },
  );
  return { connection, socket: FakeSocket.last, seen };
}

describe('BridgeConnection', () => {
  it('upgrades with the bearer token, the handshake timeout and no compression', () => {
    const { socket } = connect();
    expect(socket.url).toBe('ws://bridge.test/');
    expect(socket.options).toMatchObject({ headers: { Authorization: 'Bearer tok' }, handshakeTimeout: 1234, perMessageDeflate: false });
  });

  it('reports open, each message as one text with its wire size, and a close explained by the last socket error', () => {
    const { socket, seen } = connect();
    socket.emit('open');
    socket.emit('message', [Buffer.from('{"a":'), Buffer.from('"é"}')], false);
    socket.emit('error', new Error('read ECONNRESET'));
    socket.emit('close', 1006, Buffer.alloc(0));
    expect(seen).toEqual(['open', 'message {"a":"é"} (10 bytes)', 'lost {"reason":"socket closed (1006; read ECONNRESET)","closeCode":1006}']);
  });

  it('a refused upgrade is explained by its HTTP status', () => {
    const { socket, seen } = connect();
    let drained = false;
    socket.emit('unexpected-response', { destroy() {} }, { statusCode: 401, resume: () => (drained = true) });
    expect(drained).toBe(true);
    expect(socket.terminated).toBe(1);
    socket.emit('close', 1006, Buffer.alloc(0));
    expect(seen).toEqual(['lost {"reason":"HTTP 401 on upgrade","closeCode":1006,"httpStatus":401}']);
  });

  it('after drop() the socket is stale: terminated once, nothing more reported', () => {
    const { connection, socket, seen } = connect();
    socket.readyState = 1;
    connection.drop();
    expect(socket.terminated).toBe(1);
    socket.emit('message', Buffer.from('late'), false);
    socket.emit('close', 1006, Buffer.alloc(0));
    expect(seen).toEqual([]);
  });

  it('close() sends a normal close frame on an open socket', () => {
    const { connection, socket, seen } = connect();
    socket.readyState = 1;
    connection.close();
    expect(socket.closedWith).toEqual([CLOSE_CODES_V1.normal]);
    socket.readyState = 3;
    socket.emit('close', CLOSE_CODES_V1.normal, Buffer.alloc(0));
    expect(seen).toEqual([]);
  });
});
