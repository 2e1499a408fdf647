// Loopback ports for local sandboxes: finding free ones and turning a port
// into the URL a host uses. Every loopback port is reachable locally; there
// is no proxy in between.
import { createServer } from 'node:net';

/** Asks the kernel for `count` distinct free ports on 127.0.0.1 (held open together so they differ). */
export async function findFreeLoopbackPorts(count = 1): Promise<number[]> {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => {
              const address = server.address();
              if (address === null || typeof address === 'string') reject(new Error('no port assigned'));
              else resolve(address.port);
            });
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

export function loopbackUrl(options: { port: number; protocol?: 'http' | 'https' | 'ws' }): string {
  const { port, protocol = 'http' } = options;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new RangeError(`port must be an integer in 1..65535, got ${port}`);
  return `${protocol}://127.0.0.1:${port}`;
}
