// A free loopback port for a process the bridge is about to start (a keeper's MCP relay or egress
// proxy): the bridge needs the number first, to put it in the CLI's env or its jail's settings.
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 now; whoever binds it a moment later fails loudly if it was taken meanwhile. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
