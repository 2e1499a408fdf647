// A free loopback port for a process the bridge is about to start (a keeper's MCP relay or egress
// proxy): the bridge needs the number first, to put it in the CLI's env or its jail's settings.
// The number comes from below the kernel's ephemeral range: a port the kernel hands out (to an
// outgoing connection or a listen on port 0, by any process on the machine) could be taken between
// our probe and the keeper's bind, and the launch would fail. Below the range, only a process that
// binds that exact number can take it.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const FIXED_LOW = 10_000;
const PROBES = 64;

/** The kernel's ephemeral port range, or undefined where it cannot be read (not Linux). */
export function ephemeralRange(text = readRange()): { low: number; high: number } | undefined {
  const match = /^\s*(\d+)\s+(\d+)\s*$/.exec(text ?? '');
  if (!match) return undefined;
  const low = Number(match[1]);
  const high = Number(match[2]);
  return low > 0 && low <= high && high <= 65_535 ? { low, high } : undefined;
}

function readRange(): string | undefined {
  try {
    return readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');
  } catch {
    return undefined;
  }
}

/** A port free on 127.0.0.1 now; whoever binds it a moment later fails loudly if it was taken meanwhile. */
export async function freePort(): Promise<number> {
  const range = ephemeralRange();
  if (range && range.low - FIXED_LOW >= 1_000) {
    for (let i = 0; i < PROBES; i += 1) {
      const port = FIXED_LOW + Math.floor(Math.random() * (range.low - FIXED_LOW));
      if (await bindable(port)) return port;
    }
  }
  return probe(0);
}

function bindable(port: number): Promise<boolean> {
  return probe(port).then(
    () => true,
    () => false,
  );
}

function probe(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(bound));
    });
  });
}
