// The egress proxy: the only way out of a jailed CLI's network namespace (docs/security.md#network).
// sandbox-runtime removes the CLI's network and bridges its HTTP and SOCKS proxy ports to this
// server (its `httpProxyPort`/`socksProxyPort`), which runs in the bridge, outside the jail, on
// 127.0.0.1. Every connection is decided by the network policy in force (policy.ts): HTTP CONNECT,
// absolute-form HTTP and SOCKS5 CONNECT, one port for all three. Always, whatever the policy:
// the bridge's MCP endpoint is reachable (127.0.0.1:<its port>: the CLI's host tools) and the
// bridge's own host socket is not (any local address on the bridge's port), nor any other live
// bridge's host socket or MCP endpoint on this machine (bridge-ports.ts). Under allow-all, a
// destination of this machine is reachable only when the CLI's launch named it (named-endpoints.ts). A name is resolved
// once, here, and the connection goes to an address that passed the check (no second lookup).
import { lookup } from 'node:dns/promises';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { BlockList, connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { NetworkPolicy } from '../../protocol/v1/network-policy.ts';
import { isBridgePort } from './bridge-ports.ts';
import { CompiledPolicy, inList } from './compiled-policy.ts';
import { endpointKey, MAX_NAMED_ENDPOINTS, normalizeHost } from './named-endpoints.ts';

export type EgressLog = { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };

type Decision = { ok: true; address: string } | { ok: false; reason: string };

const loopback = (() => {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addAddress('0.0.0.0', 'ipv4');
  list.addAddress('::1', 'ipv6');
  list.addAddress('::', 'ipv6');
  return list;
})();

export type EgressCounts = { allowed: number; refused: number; byReason: Record<string, number> };

/**
 * Live connections this proxy (one session's CLIs) may hold to one address:port of this machine (loopback or a
 * local interface), the MCP endpoint aside: a local service another session runs (a bridge takes 64) keeps
 * slots for its own clients however many tunnels a CLI opens (docs/security.md#network-policy).
 */
export const MAX_LOCAL_CONNECTIONS_PER_DESTINATION = 16;

export class EgressProxy {
  readonly #log: EgressLog;
  readonly #server: Server;
  readonly #http = createHttpServer();
  #policy = new CompiledPolicy({ mode: 'allow-all' });
  #mcpPort: number | undefined;
  readonly #bridgePorts = new Set<number>();
  #bridgePortNow: (() => number | undefined) | null = null;
  readonly #otherBridge: (port: number) => boolean;
  #localAddresses: BlockList | null = null;
  readonly counts: EgressCounts = { allowed: 0, refused: 0, byReason: {} };
  readonly #sockets = new Set<Socket>();
  readonly #localLive = new Map<string, number>();
  /** `host:port` of this machine's services a CLI's launch named: reachable under allow-all (named-endpoints.ts). */
  readonly #named = new Set<string>();

  /** `otherBridge`: whether a port is another live bridge's on this machine (default: the machine's list, bridge-ports.ts). */
  constructor(log: EgressLog, otherBridge: (port: number) => boolean = isBridgePort) {
    this.#log = log;
    this.#otherBridge = otherBridge;
    this.#server = createServer((socket) => this.accept(socket));
    this.#server.maxConnections = 1024;
    this.#http.on('request', (req: IncomingMessage, res: ServerResponse) => void this.#forward(req, res));
    this.#http.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => void this.#tunnel(req, socket, head));
    this.#http.on('clientError', (_error, socket: Socket) => socket.destroy());
  }

  /** Listens on 127.0.0.1:`port` (0: any free port); resolves with the port, rejects when it is taken. */
  listen(port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve(this.port);
      });
    });
  }

  /** The listening server does not by itself keep the process alive (a host whose app is done may exit). */
  unref(): void {
    this.#server.unref();
  }

  get port(): number {
    const address = this.#server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  get policyMode(): NetworkPolicy['mode'] {
    return this.#policy.mode;
  }

  /** The policy for every connection from now on (a tunnel already open stays open). */
  setPolicy(policy: NetworkPolicy): void {
    this.#policy = new CompiledPolicy(policy);
  }

  /** The MCP endpoint's port: always reachable on loopback. */
  setMcpPort(port: number): void {
    this.#mcpPort = port;
  }

  /** The bridge's own host-socket port: never reachable, on any local address. */
  addBridgePort(port: number): void {
    this.#bridgePorts.add(port);
  }

  get bridgePorts(): number[] {
    return [...this.#bridgePorts];
  }

  /** Local endpoints a launch named (`host:port`, endpointsNamedBy): under allow-all the only ones of this machine a CLI reaches. */
  nameLocal(keys: Iterable<string>): void {
    for (const key of keys) if (this.#named.size < MAX_NAMED_ENDPOINTS) this.#named.add(key);
  }

  get namedLocal(): string[] {
    return [...this.#named];
  }

  /** Where the current bridge's host-socket port is read at each decision (a kept CLI's proxy outlives bridges: jail/kept-egress.ts). */
  watchBridgePort(read: () => number | undefined): void {
    this.#bridgePortNow = read;
  }

  close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /** The decision for one destination; exported for tests through decide(). */
  async decide(rawHost: string, port: number): Promise<Decision> {
    const host = normalizeHost(rawHost);
    if (!Number.isInteger(port) || port < 1 || port > 65_535) return { ok: false, reason: 'bad-port' };
    const literal = isIP(host) !== 0;
    if (port === this.#mcpPort && (host === 'localhost' || (literal && inList(loopback, host)))) return { ok: true, address: '127.0.0.1' };
    const policy = this.#policy;
    if (policy.mode === 'deny-all') return { ok: false, reason: 'deny-all' };
    let addresses: string[];
    if (literal) addresses = [host];
    else {
      try {
        addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
      } catch {
        return { ok: false, reason: 'unresolvable' };
      }
    }
    // The current bridge's port (a file read, for a keeper's proxy) and the machine's other bridges (bridge-ports.ts:
    // another session's host socket or MCP endpoint, under any policy) only matter for a local destination.
    const local = addresses.filter((a) => this.#isLocal(a));
    if (local.length > 0 && (this.#bridgePorts.has(port) || this.#bridgePortNow?.() === port || this.#otherBridge(port))) addresses = addresses.filter((a) => !local.includes(a));
    if (addresses.length === 0) return { ok: false, reason: 'bridge-socket' };
    if (policy.mode === 'allow-all') {
      // The internet the sandbox reaches, not this machine's services: a local one only when a launch named it.
      if (local.length > 0 && !this.#named.has(endpointKey(host, port))) addresses = addresses.filter((a) => !local.includes(a));
      return addresses.length === 0 ? { ok: false, reason: 'local-not-named' } : { ok: true, address: addresses[0]! };
    }
    const surviving = addresses.filter((a) => !policy.addressDenied(a));
    if (surviving.length === 0) return { ok: false, reason: 'denied-cidr' };
    if (!literal && policy.nameAllowed(host)) return { ok: true, address: surviving[0]! };
    const inRange = surviving.find((a) => policy.addressAllowed(a));
    return inRange === undefined ? { ok: false, reason: 'not-allowed' } : { ok: true, address: inRange };
  }

  #isLocal(address: string): boolean {
    if (inList(loopback, address)) return true;
    if (this.#localAddresses === null) {
      this.#localAddresses = new BlockList();
      for (const list of Object.values(networkInterfaces())) {
        for (const entry of list ?? []) this.#localAddresses.addAddress(entry.address.split('%')[0]!, entry.family === 'IPv6' ? 'ipv6' : 'ipv4');
      }
    }
    return inList(this.#localAddresses, address);
  }

  #refused(host: string, port: number, reason: string): void {
    this.counts.refused++;
    this.counts.byReason[reason] = (this.counts.byReason[reason] ?? 0) + 1;
    if (this.counts.refused <= 100 || this.counts.refused % 100 === 0) {
      this.#log.info({ host, port, reason, refused: this.counts.refused }, 'egress: refused a connection from a jailed CLI');
    }
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  /** A slot for one connection to `address:port`: a release function, or null when a local destination is at its cap. */
  #reserve(address: string, port: number): (() => void) | null {
    if (port === this.#mcpPort || !this.#isLocal(address)) return () => undefined;
    const key = `${address}:${port}`;
    const live = this.#localLive.get(key) ?? 0;
    if (live >= MAX_LOCAL_CONNECTIONS_PER_DESTINATION) return null;
    this.#localLive.set(key, live + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#localLive.get(key) ?? 1) - 1;
      if (left <= 0) this.#localLive.delete(key);
      else this.#localLive.set(key, left);
    };
  }

  /** Serves one client connection (accepted by this proxy's server, or by a server a keeper listened on itself). */
  accept(socket: Socket): void {
    this.#track(socket);
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      if (first[0] === 0x05) void this.#socks(socket);
      else this.#http.emit('connection', socket);
      socket.resume();
    });
  }

  /** Connects to `address:port` (what decide() allowed). */
  #dial(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const release = this.#reserve(address, port);
      if (release === null) return reject(Object.assign(new Error('local connection cap'), { code: 'local-connection-cap' }));
      const upstream = connect({ host: address, port });
      upstream.once('close', release);
      upstream.once('connect', () => {
        upstream.off('error', reject);
        resolve(upstream);
      });
      upstream.once('error', reject);
    });
  }

  async #tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const target = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    if (!target) return void client.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
    const [, host, portText] = target as unknown as [string, string, string];
    const port = Number(portText);
    const decision = await this.decide(host, port);
    if (!decision.ok) {
      this.#refused(host, port, decision.reason);
      const body = `blocked by the harness-bridge network policy (${decision.reason}): ${host}:${port}\n`;
      return void client.end(`HTTP/1.1 403 Forbidden\r\nx-proxy-error: blocked-by-harness-bridge\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    }
    let upstream: Socket;
    try {
      upstream = await this.#dial(decision.address, port);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'local-connection-cap') this.#refused(host, port, 'local-connection-cap');
      return void client.end(`HTTP/1.1 502 Bad Gateway\r\nx-proxy-error: ${(error as NodeJS.ErrnoException).code ?? 'connect-failed'}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
    }
    this.counts.allowed++;
    this.#track(upstream);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client).pipe(upstream);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }

  async #forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return void res.writeHead(400, { 'content-length': 0 }).end();
    }
    if (url.protocol !== 'http:') return void res.writeHead(400, { 'content-length': 0 }).end();
    const port = url.port === '' ? 80 : Number(url.port);
    const decision = await this.decide(url.hostname, port);
    if (!decision.ok) {
      this.#refused(url.hostname, port, decision.reason);
      const body = `blocked by the harness-bridge network policy (${decision.reason}): ${url.hostname}:${port}\n`;
      return void res.writeHead(403, { 'x-proxy-error': 'blocked-by-harness-bridge', 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body);
    }
    const release = this.#reserve(decision.address, port);
    if (release === null) {
      this.#refused(url.hostname, port, 'local-connection-cap');
      return void res.writeHead(503, { 'x-proxy-error': 'local-connection-cap', 'content-length': 0 }).end();
    }
    this.counts.allowed++;
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = httpRequest({ host: decision.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false });
    upstream.once('close', release);
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'x-proxy-error': (error as NodeJS.ErrnoException).code ?? 'upstream-failed', 'content-length': 0 }).end();
      else res.destroy();
    });
    req.pipe(upstream);
  }

  /** SOCKS5 (RFC 1928), CONNECT only; no-auth or any username/password (srt's URLs carry one). */
  async #socks(socket: Socket): Promise<void> {
    const reader = new SocketReader(socket);
    try {
      const [version, count] = await reader.take(2);
      const methods = await reader.take(count!);
      if (version !== 5) return void socket.destroy();
      const method = methods.includes(0x00) ? 0x00 : methods.includes(0x02) ? 0x02 : 0xff;
      socket.write(Buffer.from([5, method]));
      if (method === 0xff) return void socket.end();
      if (method === 0x02) {
        const [, userLength] = await reader.take(2);
        await reader.take(userLength!);
        const [passLength] = await reader.take(1);
        await reader.take(passLength!);
        socket.write(Buffer.from([1, 0]));
      }
      const [, command, , type] = await reader.take(4);
      let host: string;
      if (type === 1) host = [...(await reader.take(4))].join('.');
      else if (type === 3) host = (await reader.take((await reader.take(1))[0]!)).toString('latin1');
      else if (type === 4) {
        const raw = await reader.take(16);
        host = Array.from({ length: 8 }, (_, i) => raw.readUInt16BE(i * 2).toString(16)).join(':');
      } else return void socket.end(Buffer.from([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]));
      const port = (await reader.take(2)).readUInt16BE(0);
      if (command !== 1) return void socket.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]));
      const decision = await this.decide(host, port);
      if (!decision.ok) {
        this.#refused(host, port, decision.reason);
        return void socket.end(Buffer.from([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]));
      }
      const upstream = await this.#dial(decision.address, port).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'local-connection-cap') this.#refused(host, port, 'local-connection-cap');
        return null;
      });
      if (upstream === null) return void socket.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]));
      this.counts.allowed++;
      this.#track(upstream);
      socket.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
      const rest = reader.release();
      if (rest.length > 0) upstream.write(rest);
      upstream.pipe(socket).pipe(upstream);
      socket.once('close', () => upstream.destroy());
      upstream.once('close', () => socket.destroy());
    } catch {
      socket.destroy();
    }
  }
}

/** Reads exact byte counts from a socket (the SOCKS handshake), then hands the socket back. */
class SocketReader {
  #buffer = Buffer.alloc(0);
  #wanted: { bytes: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  readonly #socket: Socket;
  readonly #onData = (chunk: Buffer) => {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    if (this.#buffer.length > 1024) this.#fail(new Error('socks handshake too long'));
    this.#serve();
  };
  readonly #onEnd = () => this.#fail(new Error('closed during the socks handshake'));

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', this.#onData);
    socket.once('end', this.#onEnd);
  }

  take(bytes: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.#wanted = { bytes, resolve, reject };
      this.#serve();
    });
  }

  /** Stops reading; returns bytes read past the handshake. */
  release(): Buffer {
    this.#socket.off('data', this.#onData);
    this.#socket.off('end', this.#onEnd);
    const rest = this.#buffer;
    this.#buffer = Buffer.alloc(0);
    return rest;
  }

  #serve(): void {
    const wanted = this.#wanted;
    if (wanted === null || this.#buffer.length < wanted.bytes) return;
    this.#wanted = null;
    const out = this.#buffer.subarray(0, wanted.bytes);
    this.#buffer = this.#buffer.subarray(wanted.bytes);
    wanted.resolve(out);
  }

  #fail(error: Error): void {
    const wanted = this.#wanted;
    this.#wanted = null;
    wanted?.reject(error);
  }
}
