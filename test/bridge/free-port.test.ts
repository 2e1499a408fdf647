import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ephemeralRange, freePort } from '../../bridge/free-port.ts';

describe('freePort', () => {
  it('reads the kernel range and rejects what is not one', () => {
    expect(ephemeralRange('32768\t60999\n')).toEqual({ low: 32768, high: 60999 });
    expect(ephemeralRange('')).toBeUndefined();
    expect(ephemeralRange('60999 32768')).toBeUndefined();
    expect(ephemeralRange('1 70000')).toBeUndefined();
  });

  it('picks a port below the ephemeral range, where no outgoing connection or port-0 listen can take it', async () => {
    const range = ephemeralRange();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      if (range) expect(port).toBeLessThan(range.low);
      expect(port).toBeGreaterThan(0);
      // it is bindable right after
      await new Promise<void>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
      });
    }
  });
});
