// The egress tunnel over the local provider's exec stream (no Docker): the bridge file's
// `--egress-tunnel` mode as the CLI's proxy, every connection carried to this host's egress proxy and
// decided there under the session's policy (docs/remote-providers.md#egress-tunnel). Real sockets:
// a 127.0.0.1 HTTP server on the host, reached through the tunnel; a host the policy does not name
// refused with 403; live policy changes; 1 MiB each way through CONNECT (flow control); a dropped
// stream ends the open tunnel (the client sees the close) and the next connection goes through a new
// stream. Plus the mux's window, counted frame by frame.
import { createServer as createHttpServer, request, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressTunnel, type EgressTunnelSpawn } from '../../host/reach/egress-tunnel.ts';
import { hostedExecSession } from '../fixtures/hosted-sandbox.ts';
import { createLocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import type { LocalSandboxSession } from '../../host/sandbox/local/session.ts';
import { TunnelMux } from '../../protocol/v1/egress-tunnel-mux.ts';
import { EGRESS_TUNNEL_LIMITS, TunnelProtocolError, decodeTunnelFrame, type TunnelFrame } from '../../protocol/v1/egress-tunnel.ts';

const bridgeFile = join(import.meta.dirname, '../../dist/bridge.mjs');

/** GET `url` through the HTTP proxy at 127.0.0.1:`proxyPort` (absolute-form). */
export function proxiedGet(proxyPort: number, url: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, path: url, method: 'GET', headers: { host: new URL(url).host, connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (piece: string) => (body += piece));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A CONNECT through the proxy: the socket once established, or the refusal's status line. */
function proxiedConnect(proxyPort: number, target: string): Promise<{ socket: Socket; status: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: proxyPort });
    let head = Buffer.alloc(0);
    const onData = (piece: Buffer) => {
      head = Buffer.concat([head, piece]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const rest = head.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve({ socket, status: head.subarray(0, head.indexOf('\r\n')).toString('latin1') });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`);
  });
}

/** `size` bytes (byte i = `byte(i)`) through a CONNECT to the echo server via the proxy at `proxyPort`: what was sent and what came back. */
async function echoThrough(proxyPort: number, size: number, byte: (i: number) => number): Promise<{ sent: Buffer; received: Buffer }> {
  const { socket, status } = await proxiedConnect(proxyPort, `127.0.0.1:${echoPort}`);
  expect(status).toBe('HTTP/1.1 200 Connection Established');
  const sent = Buffer.alloc(size);
  for (let i = 0; i < size; i++) sent[i] = byte(i);
  const received: Buffer[] = [];
  let total = 0;
  const all = new Promise<void>((resolve) =>
    socket.on('data', (piece: Buffer) => {
      received.push(piece);
      total += piece.length;
      if (total >= size) resolve();
    }),
  );
  socket.write(sent);
  await all;
  socket.destroy();
  return { sent, received: Buffer.concat(received) };
}

let root: string;
let session: LocalSandboxSession;
let web: HttpServer;
let webPort: number;
let echo: Server;
let echoPort: number;
let tunnel: EgressTunnel;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-egress-tunnel-'));
  session = await createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') }).createSession({ sessionId: 'egress-tunnel' });
  web = createHttpServer((req, res) => res.end(`hello from the host: ${req.url}`));
  webPort = await new Promise<number>((resolve) => web.listen(0, '127.0.0.1', () => resolve((web.address() as { port: number }).port)));
  echo = createServer((socket) => socket.pipe(socket));
  echoPort = await new Promise<number>((resolve) => echo.listen(0, '127.0.0.1', () => resolve((echo.address() as { port: number }).port)));
  tunnel = await EgressTunnel.start({ spawn: session.spawn, nodeCommand: process.execPath, bridgeFile, policy: { mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] } });
}, 60_000);

afterAll(async () => {
  await tunnel?.close();
  web?.close();
  echo?.close();
  await session?.destroy();
  await rm(root, { recursive: true, force: true });
});

describe('egress tunnel over the local exec stream', () => {
  it('carries an allowed request to the host and refuses a host the policy does not name with 403', async () => {
    const allowed = await proxiedGet(tunnel.port, `http://127.0.0.1:${webPort}/allowed`);
    expect(allowed).toMatchObject({ status: 200, body: 'hello from the host: /allowed' });
    const refused = await proxiedGet(tunnel.port, `http://[::1]:${webPort}/refused`);
    expect(refused.status).toBe(403);
    expect(refused.headers['x-proxy-error']).toBe('blocked-by-harness-bridge');
    expect(refused.body).toContain('(not-allowed)');
    const connectRefused = await proxiedConnect(tunnel.port, `[::1]:${webPort}`);
    expect(connectRefused.status).toBe('HTTP/1.1 403 Forbidden');
    connectRefused.socket.destroy();
    expect(tunnel.counts.byReason['not-allowed']).toBe(2);
  });

  it('applies a live policy change to the next connection', async () => {
    tunnel.setPolicy({ mode: 'deny-all' });
    const denied = await proxiedGet(tunnel.port, `http://127.0.0.1:${webPort}/denied`);
    expect(denied.status).toBe(403);
    expect(denied.body).toContain('(deny-all)');
    tunnel.setPolicy({ mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] });
    expect((await proxiedGet(tunnel.port, `http://127.0.0.1:${webPort}/again`)).status).toBe(200);
  });

  it('carries 1 MiB each way through CONNECT, byte for byte (the windows refill)', async () => {
    const { sent, received } = await echoThrough(tunnel.port, 1024 * 1024, (i) => (i * 7 + (i >> 10)) & 0xff);
    expect(received.equals(sent)).toBe(true);
  });

  it('a dropped stream ends the open tunnel (the client sees the close) and a new stream carries the next request', async () => {
    const { socket, status } = await proxiedConnect(tunnel.port, `127.0.0.1:${echoPort}`);
    expect(status).toBe('HTTP/1.1 200 Connection Established');
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    const startsBefore = tunnel.starts;
    await tunnel.dropStream();
    await closed;
    await tunnel.ready();
    expect(tunnel.starts).toBe(startsBefore + 1);
    expect((await proxiedGet(tunnel.port, `http://127.0.0.1:${webPort}/after`)).body).toBe('hello from the host: /after');
  });
});

describe('egress tunnel handed over on its port (a resume in another host)', () => {
  it('a newer tunnel on the same port takes the new connections; one open through the older runs on to its end, then the older exits', async () => {
    const pidDir = await mkdtemp(join(tmpdir(), 'hb-egress-pid-'));
    // A port of its own (the hand-over is per port; port 0 keeps no pid file): one the kernel just gave out.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const options = { spawn: session.spawn, nodeCommand: process.execPath, bridgeFile, pidDir, port, policy: { mode: 'custom' as const, allowedCIDRs: ['127.0.0.1/32'] } };
    const older = await EgressTunnel.start(options);
    let newer: EgressTunnel | undefined;
    try {
      const { socket, status } = await proxiedConnect(older.port, `127.0.0.1:${echoPort}`);
      expect(status).toBe('HTTP/1.1 200 Connection Established');
      newer = await EgressTunnel.start(options);
      expect(newer.port).toBe(older.port);
      // In flight at the hand-over: still carried, both ways, by the older tunnel.
      const echoed = new Promise<string>((resolve) => socket.once('data', (piece: Buffer) => resolve(piece.toString())));
      socket.write('still here');
      expect(await echoed).toBe('still here');
      // New connections are the newer tunnel's.
      const newerBefore = newer.counts.allowed;
      expect((await proxiedGet(older.port, `http://127.0.0.1:${webPort}/newer`)).body).toBe('hello from the host: /newer');
      expect(newer.counts.allowed).toBe(newerBefore + 1);
      // Its last connection gone, the older tunnel's process lets go of its stream: the host sees it end.
      expect(older.handedOver).toBe(true);
      const ended = older.streamEnded();
      socket.destroy();
      await ended;
    } finally {
      await newer?.close();
      await older.close();
      await rm(pidDir, { recursive: true, force: true });
    }
  });
});

describe('egress tunnel over a hosted exec API (string output, billed writes)', () => {
  it('the frames are ASCII: an allowed GET and a 403 arrive whole, nothing replaced', async () => {
    const hosted = hostedExecSession(session);
    const overHosted = await EgressTunnel.start({ spawn: hosted.session.restricted().spawn as unknown as EgressTunnelSpawn, nodeCommand: process.execPath, bridgeFile, policy: { mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] } });
    try {
      expect(await proxiedGet(overHosted.port, `http://127.0.0.1:${webPort}/hosted`)).toMatchObject({ status: 200, body: 'hello from the host: /hosted' });
      expect((await proxiedGet(overHosted.port, `http://[::1]:${webPort}/hosted`)).status).toBe(403);
      expect(hosted.figures.replacedChars).toBe(0);
      expect(hosted.figures.stdinWrites).toBeGreaterThan(0);
    } finally {
      await overHosted.close();
    }
  });
});

describe('egress tunnel over a hosted exec API, writes batched', () => {
  it('256 KiB each way through CONNECT, byte for byte, in fewer stdin writes with batchWritesMs than without', async () => {
    const writes: number[] = [];
    for (const batchWritesMs of [0, 5]) {
      const hosted = hostedExecSession(session, { writesPerSecond: 10_000 });
      const over = await EgressTunnel.start({ spawn: hosted.session.restricted().spawn as unknown as EgressTunnelSpawn, nodeCommand: process.execPath, bridgeFile, policy: { mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] }, batchWritesMs });
      try {
        const { sent, received } = await echoThrough(over.port, 256 * 1024, (i) => (i * 13 + (i >> 9)) & 0xff);
        expect(received.equals(sent)).toBe(true);
        expect(over.stdinWrites).toBe(hosted.figures.stdinWrites);
        writes.push(over.stdinWrites);
      } finally {
        await over.close();
      }
    }
    console.log(`[figures] egress-tunnel hosted 256KiB-echo stdin-writes unbatched=${writes[0]} batched-5ms=${writes[1]}`);
    expect(writes[1]).toBeLessThan(writes[0]!);
  });
});

describe('egress tunnel cap', () => {
  it(`holds ${EGRESS_TUNNEL_LIMITS.maxTunnels} tunnels at once; the next connection is closed unanswered, and one more fits once one ends`, async () => {
    const open = async (): Promise<Socket> => {
      const socket = connect({ host: '127.0.0.1', port: tunnel.port });
      socket.on('error', () => undefined);
      await once(socket, 'connect');
      return socket;
    };
    const held: Socket[] = [];
    for (let i = 0; i < EGRESS_TUNNEL_LIMITS.maxTunnels; i++) held.push(await open());
    const extra = await open();
    let extraBytes = 0;
    extra.on('data', (piece: Buffer) => (extraBytes += piece.length));
    await once(extra, 'close');
    expect(extraBytes).toBe(0);
    // Every held one is a live tunnel: the first carries a request.
    const first = held.shift()!;
    first.write(`GET http://127.0.0.1:${webPort}/held HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
    const answer: Buffer[] = [];
    first.on('data', (piece: Buffer) => answer.push(piece));
    await once(first, 'close');
    expect(Buffer.concat(answer).toString()).toContain('hello from the host: /held');
    // Its slot is free once the close reached this side's end; a new connection is carried.
    const closes = held.map((socket) => once(socket, 'close'));
    for (const socket of held) socket.destroy();
    await Promise.all(closes);
    expect((await proxiedGet(tunnel.port, `http://127.0.0.1:${webPort}/after-cap`)).status).toBe(200);
  });
});

describe('tunnel mux flow control', () => {
  it('sends at most the window before a credit, and the rest once credited', async () => {
    const frames: TunnelFrame[] = [];
    const mux = new TunnelMux((frame) => frames.push(frame));
    const local = new Duplex({ read() {}, write(_chunk, _encoding, done) { done(); } });
    mux.attach(1, local);
    const payload = Buffer.alloc(EGRESS_TUNNEL_LIMITS.windowBytes * 3, 1);
    const delivered = once(local, 'data'); // the mux's own listener, added first, has run when this resolves
    local.push(payload);
    await delivered;
    const sentBytes = () => frames.filter((f) => f.t === 'data').reduce((n, f) => n + Buffer.from((f as { b64: string }).b64, 'base64').length, 0);
    expect(sentBytes()).toBe(EGRESS_TUNNEL_LIMITS.windowBytes);
    expect(local.isPaused()).toBe(true);
    mux.handle({ t: 'credit', id: 1, bytes: EGRESS_TUNNEL_LIMITS.windowBytes });
    expect(sentBytes()).toBe(EGRESS_TUNNEL_LIMITS.windowBytes * 2);
    expect(() => mux.handle({ t: 'credit', id: 1, bytes: EGRESS_TUNNEL_LIMITS.windowBytes * 2 })).toThrow();
    mux.closeAll();
  });

  it('refuses a peer that sends past the window, and lines that are not frames', () => {
    const mux = new TunnelMux(() => undefined);
    // A socket that never finishes a write: nothing is credited back.
    const local = new Duplex({ read() {}, write() {} });
    mux.attach(1, local);
    const chunk = Buffer.alloc(EGRESS_TUNNEL_LIMITS.maxChunkBytes).toString('base64');
    for (let sent = 0; sent < EGRESS_TUNNEL_LIMITS.windowBytes; sent += EGRESS_TUNNEL_LIMITS.maxChunkBytes) mux.handle({ t: 'data', id: 1, b64: chunk });
    expect(() => mux.handle({ t: 'data', id: 1, b64: chunk })).toThrow(TunnelProtocolError);
    mux.closeAll();
    expect(() => decodeTunnelFrame('{"t":"open","id":0}')).toThrow(TunnelProtocolError);
    expect(() => decodeTunnelFrame('{"t":"data","id":1,"b64":"not base64!"}')).toThrow(TunnelProtocolError);
    expect(() => decodeTunnelFrame(`{"t":"data","id":1,"b64":"${'A'.repeat(EGRESS_TUNNEL_LIMITS.maxLineChars)}"}`)).toThrow(TunnelProtocolError);
    expect(decodeTunnelFrame('{"t":"credit","id":3,"bytes":10}')).toEqual({ t: 'credit', id: 3, bytes: 10 });
  });
});
