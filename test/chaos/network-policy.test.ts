// The network policy (issue 21; docs/security.md#network-policy), enforced for a jailed CLI and
// everything it spawns, offline: two test hosts under .test mapped to loopback in a mount namespace
// of the test's own (model.test → 127.0.0.1, other.test → 127.0.0.2; /etc/hosts is bind-mounted
// for the bridge, whose egress proxy resolves names), each served by a local HTTP server. One
// session CLI (the fixture CLI, echo mode) runs a proxy-aware fetch through its shell every turn;
// between turns the policy is changed with the local sandbox's writer, which resolves once the live
// bridge acknowledged it (no sleeps): deny-all, allowedHosts, deniedCIDRs over allowedHosts,
// allowedCIDRs, allow-all. The bridge's own traffic (the host socket, the MCP endpoint) is never
// blocked. One [figures] line.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1NetworkPolicy } from '../../protocol/harness-v1/index.ts';
import type { JournalRecord } from '../../protocol/v1/index.ts';
import { networkPolicyFile, writeNetworkPolicy } from '../../host/sandbox/local/network-policy.ts';
import { connectClient, startBridge, tempDir, type RunningBridge, type TestClient } from '../bridge/helpers.ts';
import { fetchResults, startFetchTurn, type Fetched } from './jail-fetch.ts';

const canNamespace = process.getuid?.() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0;

const servers: Server[] = [];
let bridge: RunningBridge | undefined;
let client: TestClient;
let sessionDir = '';
let modelPort = 0;
let otherPort = 0;
let turn = 0;
const figures = { turns: 0, allowed: 0, refused: 0, policyChanges: 0 };

async function serve(host: string, name: string): Promise<number> {
  const server = createServer((_req, res) => res.end(`hello from ${name}`));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as { port: number }).port;
}

beforeAll(async () => {
  if (!canNamespace) return;
  modelPort = await serve('127.0.0.1', 'model.test');
  otherPort = await serve('127.0.0.2', 'other.test');
  const dir = tempDir('hb-netpolicy-');
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}\n127.0.0.1 model.test\n127.0.0.2 other.test\n`);
  sessionDir = join(dir, 'sandbox');
  const project = join(sessionDir, 'project');
  mkdirSync(project, { recursive: true });
  // A policy set before any bridge runs: the bridge reads it at start.
  await writeNetworkPolicy(sessionDir, { mode: 'custom', allowedHosts: ['model.test'] });
  bridge = await startBridge({
    stateDir: join(sessionDir, '.harness-bridge', 'sessions', 'fixture-netpolicy'),
    args: ['--network-policy', networkPolicyFile(sessionDir)],
    // The bridge (and so its egress proxy and the jail) in a mount namespace where the .test names exist.
    wrap: (cmd, args) => ({ cmd: 'unshare', args: ['-m', '--', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', hosts, cmd, ...args] }),
  });
  ({ client } = await connectClient(bridge));
  await client.attach(0);
}, 60_000);

afterAll(async () => {
  await bridge?.kill();
  for (const server of servers) server.close();
  if (canNamespace) console.log(`[figures] network-policy turns=${figures.turns} policy-changes=${figures.policyChanges} fetched-allowed=${figures.allowed} fetched-refused=${figures.refused}`);
});

/** One turn on the same live CLI: its shell fetches each URL through the jail's proxy; the results. */
async function fetchFromJail(urls: string[]): Promise<Fetched[]> {
  const turnId = `net-${++turn}`;
  // The launch names the scripted model's URL, as an adapter's env does (the same env every turn: one CLI process).
  await startFetchTurn(client, turnId, join(sessionDir, 'project'), urls, { env: { MODEL_BASE_URL: `http://model.test:${modelPort}` } });
  const fetched = await fetchResults(client, turnId);
  figures.turns++;
  for (const f of fetched) (f.status === 200 ? figures.allowed++ : figures.refused++);
  return fetched;
}

const statusOf = (fetched: Fetched[], url: string) => {
  const f = fetched.find((x) => x.url === url);
  return f?.status ?? f?.error;
};

async function setPolicy(policy: HarnessV1NetworkPolicy): Promise<void> {
  await writeNetworkPolicy(sessionDir, policy); // resolves once the live bridge acknowledged it
  figures.policyChanges++;
}

describe.skipIf(!canNamespace)('network policy: enforced for the jailed CLI, changeable while the session lives', () => {
  const model = () => `http://model.test:${modelPort}/`;
  const other = () => `http://other.test:${otherPort}/`;
  const otherByIp = () => `http://127.0.0.2:${otherPort}/`;
  const mcp = '$HARNESS_BRIDGE_MCP_URL';

  it('the bridge isolates with a network namespace here', async () => {
    const { client: probe, hello } = await connectClient(bridge!);
    await probe.close();
    expect(hello.isolation?.networkPolicy, hello.isolation?.reasons.join('; ')).toBe(true);
  });

  it('custom allowedHosts (set before the bridge started): the scripted model’s host is reachable, another name and its address are refused', async () => {
    const got = await fetchFromJail([model(), other(), otherByIp()]);
    expect(statusOf(got, model())).toBe(200);
    expect(statusOf(got, other())).toBe(403);
    expect(statusOf(got, otherByIp())).toBe(403);
  });

  it('deny-all, set mid-session: nothing but the MCP endpoint; the host socket carries the turn as ever', async () => {
    await setPolicy({ mode: 'deny-all' });
    const got = await fetchFromJail([model(), other(), mcp]);
    expect(statusOf(got, model())).toBe(403);
    expect(statusOf(got, other())).toBe(403);
    // The MCP endpoint answers (401: a GET without its token) — reached, whatever the policy.
    expect(got.find((f) => f.url.includes('/mcp'))?.status).toBe(401);
  });

  it('deniedCIDRs beats allowedHosts: the allowed name resolves into a denied range and is refused', async () => {
    await setPolicy({ mode: 'custom', allowedHosts: ['model.test'], deniedCIDRs: ['127.0.0.1/32'] });
    const got = await fetchFromJail([model(), other()]);
    expect(statusOf(got, model())).toBe(403);
    expect(statusOf(got, other())).toBe(403);
  });

  it('allowedCIDRs: an address range, by name or by address; the name outside it is refused', async () => {
    await setPolicy({ mode: 'custom', allowedCIDRs: ['127.0.0.2/32'] });
    const got = await fetchFromJail([model(), other(), otherByIp()]);
    expect(statusOf(got, model())).toBe(403);
    expect(statusOf(got, other())).toBe(200);
    expect(statusOf(got, otherByIp())).toBe(200);
  });

  it('allow-all again: the internet, and of this machine only what the launch named (the model), on the same CLI process all along', async () => {
    await setPolicy({ mode: 'allow-all' });
    const got = await fetchFromJail([model(), other(), otherByIp()]);
    expect(statusOf(got, model())).toBe(200);
    expect(statusOf(got, other())).toBe(403);
    expect(statusOf(got, otherByIp())).toBe(403);
    const spawns = client.records().filter((r: JournalRecord) => r.kind === 'spawn');
    expect(spawns).toHaveLength(1);
  });
});
