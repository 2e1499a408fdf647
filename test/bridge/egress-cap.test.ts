// One session's CLIs cannot hold every slot of a local service another session runs (a bridge's socket
// takes 64): the egress proxy keeps at most MAX_LOCAL_CONNECTIONS_PER_DESTINATION live tunnels to one
// local address:port (docs/security.md#network-policy); a slot is free again once a tunnel closes.
import { connect, createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { EgressProxy, MAX_LOCAL_CONNECTIONS_PER_DESTINATION } from '../../bridge/jail/egress-proxy.ts';

const quiet = { info: () => undefined, warn: () => undefined };

/** A SOCKS5 CONNECT to 127.0.0.1:`port` through the proxy: the reply's status byte and the open socket. */
function socks(proxyPort: number, port: number): Promise<{ status: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxyPort, '127.0.0.1', () => socket.write(Buffer.from([5, 1, 0])));
    let step = 0;
    socket.on('error', reject);
    socket.on('data', (data) => {
      if (step++ === 0) socket.write(Buffer.from([5, 1, 0, 1, 127, 0, 0, 1, port >> 8, port & 255]));
      else resolve({ status: data[1]!, socket });
    });
  });
}

describe('the egress proxy caps live tunnels to one local destination', () => {
  it(`${MAX_LOCAL_CONNECTIONS_PER_DESTINATION} tunnels to a local port hold; the next is refused; one closed frees a slot`, async () => {
    const held: Socket[] = [];
    const target = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as { port: number }).port;
    const proxy = new EgressProxy(quiet);
    proxy.nameLocal([`127.0.0.1:${port}`]); // a service the launch named (a model server): reachable under allow-all, and capped
    const proxyPort = await proxy.listen();
    const clients: Socket[] = [];
    try {
      const statuses: number[] = [];
      for (let i = 0; i < MAX_LOCAL_CONNECTIONS_PER_DESTINATION + 4; i++) {
        const { status, socket } = await socks(proxyPort, port);
        statuses.push(status);
        clients.push(socket);
      }
      expect(statuses.filter((s) => s === 0).length).toBe(MAX_LOCAL_CONNECTIONS_PER_DESTINATION);
      expect(statuses.slice(MAX_LOCAL_CONNECTIONS_PER_DESTINATION)).toEqual([5, 5, 5, 5]);
      const closed = new Promise((resolve) => clients[0]!.once('close', resolve));
      clients[0]!.destroy();
      await closed;
      // The proxy sees its client go and closes the upstream; the slot frees once that upstream's close is seen.
      let again = 5;
      for (let attempt = 0; attempt < 200 && again !== 0; attempt++) {
        const next = await socks(proxyPort, port);
        clients.push(next.socket);
        again = next.status;
        if (again !== 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(again).toBe(0);
    } finally {
      for (const socket of clients) socket.destroy();
      for (const socket of held) socket.destroy();
      await proxy.close();
      target.close();
    }
  });
});
