// A kept CLI in a network namespace (launch survive under the default isolation,
// docs/security.md#survive-namespace) keeps its network across a bridge SIGKILL: its srt relays
// lead to its keeper's egress proxy, not to the bridge. One kept session CLI (the fixture CLI, echo
// mode) fetches through its shell from a local server that sends half its body and holds the rest
// until the test releases it; the bridge is SIGKILLed while the fetch is in flight, the network
// policy is changed while no bridge runs (the writer resolves only once the keeper acknowledged
// it), the rest of the body is released, and a new bridge adopts the CLI: the fetch completed
// intact, and later turns on the same CLI see the new policy, the MCP relay, and no way to the new
// bridge's host socket; the keeper's refusals are in the bridge's log. Counts records and fetch results, never time. One [figures] line.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HarnessV1NetworkPolicy } from '../../protocol/harness-v1/index.ts';
import type { JournalRecord, RecordOf } from '../../protocol/v1/index.ts';
import { NETWORK_POLICY_FILES } from '../../protocol/v1/network-policy.ts';
import { networkPolicyFile, writeNetworkPolicy } from '../../host/sandbox/local/network-policy.ts';
import { connectClient, startBridge, tempDir, type RunningBridge, type TestClient } from '../bridge/helpers.ts';
import { fetchResults, startFetchTurn, type Fetched } from './jail-fetch.ts';

const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0;

const servers: Server[] = [];
const sessionDirs: string[] = [];
const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];
const figures = { kills: 0, turns: 0, spawns: 0, interrupted: 0, bodyIntact: false, policyAcksByKeeper: 0 };

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const bridge of bridges) await bridge.kill().catch(() => undefined);
  for (const server of servers) server.close();
  // The kept CLI outlives its bridges: without its session dir its keeper kills it and leaves, and so does the jail helper then.
  for (const dir of sessionDirs) rmSync(dir, { recursive: true, force: true });
  if (canNamespace) console.log(`[figures] survive-namespace kills=${figures.kills} turns=${figures.turns} spawns=${figures.spawns} interrupted=${figures.interrupted} body-intact=${figures.bodyIntact} keeper-acks=${figures.policyAcksByKeeper}`);
});

/** A server on `host` whose `/slow` sends `part-1` and holds the rest until release(); other paths answer at once. */
async function serve(host: string): Promise<{ port: number; requested: Promise<void>; release(): void }> {
  let held: ServerResponse | undefined;
  let requested!: () => void;
  const asked = new Promise<void>((resolve) => (requested = resolve));
  const server = createServer((req, res) => {
    if (req.url !== '/slow') return void res.end(`hello from ${host}`);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('part-1;');
    held = res;
    requested();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { port: (server.address() as { port: number }).port, requested: asked, release: () => held?.end('part-2') };
}

describe.skipIf(!canNamespace)('survive in a network namespace: the kept CLI keeps its network across a bridge SIGKILL', () => {
  it('a fetch in flight completes intact, a policy changed while no bridge runs is enforced by the keeper, the new bridge is unreachable', async () => {
    const near = await serve('127.0.0.1');
    const far = await serve('127.0.0.2');
    const sessionDir = join(tempDir('hb-survive-ns-'), 'sandbox');
    sessionDirs.push(sessionDir);
    const project = join(sessionDir, 'project');
    mkdirSync(project, { recursive: true });
    const stateDir = join(sessionDir, '.harness-bridge', 'sessions', 'survive-ns');
    const args = ['--network-policy', networkPolicyFile(sessionDir)];
    const open = async (): Promise<{ bridge: RunningBridge; client: TestClient }> => {
      const bridge = await startBridge({ stateDir, args });
      bridges.push(bridge);
      const { client, hello } = await connectClient(bridge);
      clients.push(client);
      expect(hello.isolation?.networkPolicy, hello.isolation?.reasons.join('; ')).toBe(true);
      await client.attach(0);
      return { bridge, client };
    };
    // The launch names the near server (as an adapter's env names its model): what allow-all lets the CLI reach on this machine.
    const start = (client: TestClient, turnId: string, urls: string[]) => startFetchTurn(client, turnId, project, urls, { survive: true, env: { MODEL_BASE_URL: `http://127.0.0.1:${near.port}` } });
    const fetched = async (client: TestClient, turnId: string): Promise<Fetched[]> => {
      const got = await fetchResults(client, turnId);
      figures.turns++;
      return got;
    };
    const policy = (p: HarnessV1NetworkPolicy) => writeNetworkPolicy(sessionDir, p); // resolves once every live bridge and keeper applied it

    // 1. Bridge A: the kept CLI's fetch is in flight (half its body sent) when A is SIGKILLed.
    const a = await open();
    await start(a.client, 't1', [`http://127.0.0.1:${near.port}/slow`]);
    await near.requested;
    // srt's mount points for the write-protected files missing from the project (.bashrc, .gitconfig, …):
    // removing one under the running jail would detach its mount there, so they stay while the kept CLI runs.
    const mountPoints = readdirSync(project);
    expect(mountPoints.length).toBeGreaterThan(0);
    await a.bridge.kill('SIGKILL');
    figures.kills++;

    // 2. No bridge runs: the policy writer is answered by the keeper (the dead bridge's acknowledgement is discarded).
    await policy({ mode: 'custom', allowedCIDRs: ['127.0.0.2/32'] });
    const acks = readdirSync(join(sessionDir, '.harness-bridge', 'network', NETWORK_POLICY_FILES.bridges)).filter((n) => n.startsWith('keeper-'));
    figures.policyAcksByKeeper = acks.length;
    expect(acks).toHaveLength(1);
    near.release(); // an open tunnel stays open: the rest of the body reaches the CLI

    // 3. Bridge B adopts the CLI: turn 1 ends with the whole body, never interrupted.
    const b = await open();
    const first = await fetched(b.client, 't1');
    expect(first[0]).toMatchObject({ status: 200, body: 'part-1;part-2' });
    figures.bodyIntact = true;
    const start1 = b.client.records().filter((r) => r.kind === 'bridge-start').at(-1) as RecordOf<'bridge-start'>;
    expect(start1.data.adopted?.turnId).toBe('t1');

    // 4. The same CLI, the policy set while no bridge ran: 127.0.0.2 only; the MCP relay always.
    await start(b.client, 't2', [`http://127.0.0.1:${near.port}/`, `http://127.0.0.2:${far.port}/`, '$HARNESS_BRIDGE_MCP_URL']);
    const second = await fetched(b.client, 't2');
    expect(second.map((f) => f.status)).toEqual([403, 200, 401]);

    // 5. allow-all: the named loopback server is reachable (the keeper's proxy kept the name), not the adopting bridge's host socket (any local address).
    await policy({ mode: 'allow-all' });
    await start(b.client, 't3', [`http://127.0.0.1:${near.port}/`, `http://127.0.0.1:${b.bridge.port}/`, `http://127.0.0.2:${b.bridge.port}/`, `http://127.0.0.2:${far.port}/`]);
    const third = await fetched(b.client, 't3');
    expect(third.map((f) => f.status)).toEqual([200, 403, 403, 403]);
    expect(third[1]!.body).toContain('bridge-socket');
    expect(third[3]!.body, 'a loopback server the launch did not name').toContain('local-not-named');

    const records: JournalRecord[] = b.client.records();
    figures.spawns = records.filter((r) => r.kind === 'spawn').length;
    figures.interrupted = records.filter((r) => r.kind === 'turn-end' && (r as RecordOf<'turn-end'>).data.reason === 'interrupted').length;
    expect(figures.spawns).toBe(1);
    expect(figures.interrupted).toBe(0);
    const keeper = (records.find((r) => r.kind === 'spawn') as RecordOf<'spawn'>).data.keeper!;
    // The keeper's proxy tells its refusals in the bridge's log, beside the bridge's own: turns 2 and 3's, each with its reason.
    const keeperLog = readFileSync(join(stateDir, 'bridge.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes(`"subsystem":"keeper-${keeper}-egress"`))
      .map((line) => JSON.parse(line) as { msg?: string; reason?: string; host?: string });
    expect(keeperLog.filter((line) => line.msg?.startsWith('egress: refused')).map((line) => `${line.host} ${line.reason}`)).toEqual([
      '127.0.0.1 not-allowed',
      '127.0.0.1 bridge-socket',
      '127.0.0.2 bridge-socket',
      '127.0.0.2 local-not-named',
    ]);
    expect(existsSync(join(stateDir, 'keepers', keeper, 'spec.json'))).toBe(true);
    // The kept CLI runs the jail helper's wrap (no srt process of its own), its relay swapped for the keeper's socket.
    const spec = JSON.parse(readFileSync(join(stateDir, 'keepers', keeper, 'spec.json'), 'utf8')) as { argv: string[]; egress?: { socket?: string } };
    expect(spec.egress?.socket).toMatch(/\/hb-kept-[0-9a-f]{16}\.sock$/);
    expect(spec.argv.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(spec.argv[2]).toContain(spec.egress!.socket!);
    expect(spec.argv[2]).not.toContain('claude-http-');
    // The killed bridge's helper is still there for the CLI it wrapped: its mount points too, two turns later.
    expect(readdirSync(project)).toEqual(expect.arrayContaining(mountPoints));
  }, 180_000);
});
