// The network of a `--network none` Docker session, through the egress tunnel and policed by this
// host (docs/remote-providers.md#egress-tunnel). A process in the CLI's place, inside the container,
// fetches from an HTTP server on this host's 127.0.0.1 through the container's proxy: allowed by the
// policy it gets the page; a host the policy does not name gets the proxy's 403; a live
// setNetworkPolicy (deny-all, then back) applies to the next request; and the same server is not
// reachable from the container directly (it has no network). Real sockets and containers throughout.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider, dockerUnavailable } from '../../../host/sandbox/docker/provider.ts';
import type { DockerSandboxSession } from '../../../host/sandbox/docker/session.ts';

const unavailable = await dockerUnavailable();
if (unavailable) console.log(`[skip] docker egress tunnel tests: ${unavailable}`);

const prefix = `hbet${process.pid}`;
// In the container, as a CLI would: GET an absolute URL through the proxy (or directly, with no proxy).
const fetchScript = `
import { request } from 'node:http';
const [url, proxy] = process.argv.slice(2);
const target = new URL(url);
const via = proxy ? new URL(proxy) : target;
const req = request({ host: via.hostname, port: via.port, path: proxy ? url : target.pathname, headers: { host: target.host, connection: 'close' } }, (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (piece) => (body += piece));
  res.on('end', () => console.log(JSON.stringify({ status: res.statusCode, proxyError: res.headers['x-proxy-error'] ?? null, body })));
});
req.on('error', (error) => console.log(JSON.stringify({ error: error.code ?? error.message })));
req.end();
`;

const writeFetchScript = (target: DockerSandboxSession) => target.writeTextFile({ path: '/work/fetch.mjs', content: fetchScript });

let server: Server;
let port: number;
let session: DockerSandboxSession;

beforeAll(async () => {
  if (unavailable) return;
  server = createServer((req, res) => res.end(`host page ${req.url}`));
  port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  session = await createDockerSandboxProvider({ namePrefix: prefix }).createSession({ sessionId: 'egress' });
  await writeFetchScript(session);
}, 180_000);

afterAll(async () => {
  await session?.destroy();
  server?.close();
});

async function fetchInside(url: string, proxy?: string, inside: DockerSandboxSession = session): Promise<{ status?: number; proxyError?: string | null; body?: string; error?: string }> {
  const result = await inside.run({ command: `${JSON.stringify(process.execPath)} /work/fetch.mjs ${JSON.stringify(url)}${proxy ? ` ${JSON.stringify(proxy)}` : ''}` });
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim()) as { status?: number; proxyError?: string | null; body?: string; error?: string };
}

describe.skipIf(unavailable !== undefined)('docker session network through the egress tunnel', () => {
  it('reaches an allowed host server only through the tunnel, is refused a host not in the policy, and follows live policy changes', { timeout: 180_000 }, async () => {
    expect(await session.getNetworkPolicy()).toEqual({ mode: 'deny-all' });
    await session.setNetworkPolicy({ mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] });
    const { url: proxy } = await session.egressProxy();
    const page = `http://127.0.0.1:${port}/models`;

    // No network of its own: the host's server is not on the container's loopback.
    expect(await fetchInside(page)).toEqual({ error: 'ECONNREFUSED' });
    // Through the tunnel, decided on this host: allowed.
    expect(await fetchInside(page, proxy)).toEqual({ status: 200, proxyError: null, body: 'host page /models' });
    // A host the policy does not name: the proxy's 403, before anything is dialed.
    const refused = await fetchInside(`http://[::1]:${port}/other`, proxy);
    console.log(`[figures] docker egress refused: ${JSON.stringify(refused)}`);
    expect(refused).toMatchObject({ status: 403, proxyError: 'blocked-by-harness-bridge' });
    expect(refused.body).toContain('(not-allowed)');

    // Live changes: deny-all refuses the page that was allowed, and setting it back allows it again.
    await session.setNetworkPolicy({ mode: 'deny-all' });
    expect(await session.getNetworkPolicy()).toEqual({ mode: 'deny-all' });
    expect(await fetchInside(page, proxy)).toMatchObject({ status: 403, proxyError: 'blocked-by-harness-bridge' });
    await session.setNetworkPolicy({ mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] });
    expect(await fetchInside(page, proxy)).toMatchObject({ status: 200, body: 'host page /models' });
    expect(session.restricted()).not.toHaveProperty('setNetworkPolicy');
    await expect(session.setNetworkPolicy({ mode: 'custom', allowedHosts: ['not a host!'] } as never)).rejects.toThrow(/not a network policy/);
  });

  it('a second host process resuming the session gets the kept policy and the tunnel back on the same port', { timeout: 180_000 }, async () => {
    const sessionId = 'egress-second-host';
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'docker-egress-first-host.ts'), prefix, sessionId], { cwd: join(import.meta.dirname, '../../..') });
    const { port: firstPort } = JSON.parse(stdout.trim()) as { port: number };
    // The first host is gone, and with it its end of the tunnel; this process resumes the session.
    const resumed = await createDockerSandboxProvider({ namePrefix: prefix }).resumeSession({ sessionId });
    try {
      expect(await resumed.getNetworkPolicy()).toEqual({ mode: 'custom', allowedCIDRs: ['127.0.0.1/32'] });
      const { port: proxyPort, url: proxy } = await resumed.egressProxy();
      expect(proxyPort).toBe(firstPort);
      await writeFetchScript(resumed);
      expect(await fetchInside(`http://127.0.0.1:${port}/resumed`, proxy, resumed)).toEqual({ status: 200, proxyError: null, body: 'host page /resumed' });
      expect(await fetchInside(`http://[::1]:${port}/resumed`, proxy, resumed)).toMatchObject({ status: 403, proxyError: 'blocked-by-harness-bridge' });
    } finally {
      await resumed.destroy();
    }
  });
});
