// Loopback TCP proxy standing in for a hosted sandbox's port proxy in tests.
// It pipes bytes (so HTTP upgrades and WebSocket frames pass untouched) and can
// be switched to misbehave the way port proxies do: answer every new request
// with HTTP 502/503, refuse (reset) new connections, accept and never answer,
// or drop every live connection at once. Shared by the channel and session tests.
import net from 'node:net';

export type ProxyMode =
  /** Pipe to the target. */
  | 'pass'
  /** Answer each new connection's request with `HTTP/1.1 502 Bad Gateway` and close. */
  | 'http-502'
  | 'http-503'
  /** Accept, then reset at once (as a proxy with no upstream does). */
  | 'refuse'
  /** Accept and never answer (a frozen upstream behind a proxy). */
  | 'blackhole';

export type ProxyStats = {
  accepted: number;
  piped: number;
  answeredHttpError: number;
  refused: number;
  /** Live connections cut by dropAll(). */
  dropped: number;
};

export type TestProxy = {
  readonly port: number;
  /** ws://127.0.0.1:<port> plus the path given to startProxy. */
  readonly url: string;
  readonly mode: ProxyMode;
  readonly stats: ProxyStats;
  /** Live client connections (piped or blackholed). */
  readonly openConnections: number;
  /** Applies to new connections; live piped ones keep flowing (use dropAll to cut them). */
  setMode(mode: ProxyMode): void;
  /** Point new connections at another upstream port (a restarted bridge). */
  setTarget(port: number, host?: string): void;
  /** Destroy every live connection, both sides, without a close handshake (a TCP reset to the client). */
  dropAll(): number;
  close(): Promise<void>;
};

export async function startProxy(options: { targetPort: number; targetHost?: string; path?: string; mode?: ProxyMode }): Promise<TestProxy> {
  let targetPort = options.targetPort;
  let targetHost = options.targetHost ?? '127.0.0.1';
  let mode: ProxyMode = options.mode ?? 'pass';
  const stats: ProxyStats = { accepted: 0, piped: 0, answeredHttpError: 0, refused: 0, dropped: 0 };
  /** Live client sockets → their upstream (null when blackholed). */
  const live = new Map<net.Socket, net.Socket | null>();

  const server = net.createServer((client) => {
    stats.accepted++;
    client.on('error', () => {
      // client resets are part of the scenarios; the pipe teardown below handles them
    });
    switch (mode) {
      case 'refuse':
        stats.refused++;
        client.resetAndDestroy();
        return;
      case 'http-502':
      case 'http-503': {
        const status = mode === 'http-502' ? '502 Bad Gateway' : '503 Service Unavailable';
        client.once('data', () => {
          stats.answeredHttpError++;
          client.end(`HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: 11\r\nconnection: close\r\n\r\nbad gateway`);
        });
        return;
      }
      case 'blackhole':
        live.set(client, null);
        client.on('close', () => live.delete(client));
        client.resume(); // read and discard, never answer
        return;
      case 'pass': {
        stats.piped++;
        const upstream = net.connect(targetPort, targetHost);
        live.set(client, upstream);
        const teardown = (): void => {
          live.delete(client);
          client.destroy();
          upstream.destroy();
        };
        upstream.on('error', teardown);
        client.on('error', teardown);
        upstream.on('close', teardown);
        client.on('close', teardown);
        client.pipe(upstream);
        upstream.pipe(client);
        return;
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy did not bind a TCP port');
  const port = address.port;

  return {
    port,
    url: `ws://127.0.0.1:${port}${options.path ?? ''}`,
    get mode() {
      return mode;
    },
    stats,
    get openConnections() {
      return live.size;
    },
    setMode(next) {
      mode = next;
    },
    setTarget(nextPort, host) {
      targetPort = nextPort;
      if (host !== undefined) targetHost = host;
    },
    dropAll() {
      const count = live.size;
      for (const [client, upstream] of [...live]) {
        stats.dropped++;
        live.delete(client);
        upstream?.destroy();
        client.resetAndDestroy();
      }
      return count;
    },
    async close() {
      for (const [client, upstream] of [...live]) {
        upstream?.destroy();
        client.destroy();
      }
      live.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
