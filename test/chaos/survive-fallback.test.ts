// A kept CLI whose jail profile is too long for srt's command line (docs/security.md#survive-namespace):
// srt passes the mounts through a file of the jail helper's, so the helper's relay socket cannot be
// swapped for the keeper's, and the kept CLI gets an srt process of its own with its relays led to its
// keeper's egress port. The project holds enough write-protected files (each one a bubblewrap mount)
// to pass srt's ~128 KiB limit. The CLI (echo mode, a session CLI) fetches through its shell; the bridge
// is SIGKILLed with the fetch in flight, and a new bridge adopts the CLI: the body arrives intact, and a
// later turn on the same CLI still fetches. Counts records and fetch results, never time.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordOf } from '../../protocol/v1/index.ts';
import { networkPolicyFile } from '../../host/sandbox/local/network-policy.ts';
import { connectClient, startBridge, tempDir, type RunningBridge, type TestClient } from '../bridge/helpers.ts';
import { fetchResults, startFetchTurn } from './jail-fetch.ts';

const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0;

/** Write-protected files in the project: each is a `--ro-bind` of its path (x2) in srt's profile. */
const protectedFiles = 1_200;

const servers: Server[] = [];
const sessionDirs: string[] = [];
const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const bridge of bridges) await bridge.kill().catch(() => undefined);
  for (const server of servers) server.close();
  // Without its session dir the kept CLI's keeper kills it and leaves.
  for (const dir of sessionDirs) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!canNamespace)('survive with a jail profile passed through a file (an srt of its own)', () => {
  it('the kept CLI fetches through its keeper, and a fetch in flight outlives a bridge SIGKILL', async () => {
    let held: ServerResponse | undefined;
    let requested!: () => void;
    const asked = new Promise<void>((resolve) => (requested = resolve));
    const server = createServer((req, res) => {
      if (req.url !== '/slow') return void res.end('hello');
      res.write('part-1;');
      held = res;
      requested();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;

    const sessionDir = join(tempDir('hb-survive-fallback-'), 'sandbox');
    sessionDirs.push(sessionDir);
    const project = join(sessionDir, 'project');
    for (let i = 0; i < protectedFiles; i++) {
      const dir = join(project, `module-${String(i).padStart(5, '0')}-with-a-long-enough-directory-name`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, '.bashrc'), '');
    }
    const stateDir = join(sessionDir, '.harness-bridge', 'sessions', 'survive-fallback');
    const open = async (): Promise<TestClient> => {
      const bridge = await startBridge({ stateDir, args: ['--network-policy', networkPolicyFile(sessionDir)] });
      bridges.push(bridge);
      const { client, hello } = await connectClient(bridge);
      clients.push(client);
      expect(hello.isolation?.networkPolicy, hello.isolation?.reasons.join('; ')).toBe(true);
      await client.attach(0);
      return client;
    };

    const a = await open();
    const env = { MODEL_BASE_URL: `http://127.0.0.1:${port}` }; // the launch names the server, as an adapter's env names its model
    await startFetchTurn(a, 't1', project, [`http://127.0.0.1:${port}/slow`], { survive: true, env });
    const spawn = (await a.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
    // The fallback: the keeper's egress proxy on a port, the CLI run by an srt of its own with a settings file.
    const spec = JSON.parse(readFileSync(join(stateDir, 'keepers', spawn.data.keeper!, 'spec.json'), 'utf8')) as { argv: string[]; egress?: { socket?: string; port?: number } };
    expect(spec.egress?.socket).toBeUndefined();
    expect(spec.egress?.port).toBeGreaterThan(0);
    expect(spec.argv).toContain('--settings');
    await asked;
    await bridges[0]!.kill('SIGKILL');
    held!.end('part-2');

    const b = await open();
    const first = await fetchResults(b, 't1');
    expect(first[0]).toMatchObject({ status: 200, body: 'part-1;part-2' });
    await startFetchTurn(b, 't2', project, [`http://127.0.0.1:${port}/`], { survive: true, env });
    expect((await fetchResults(b, 't2'))[0]).toMatchObject({ status: 200, body: 'hello' });
    const records = b.records();
    expect(records.filter((r) => r.kind === 'spawn')).toHaveLength(1);
    expect(records.filter((r) => r.kind === 'turn-end' && (r as RecordOf<'turn-end'>).data.reason === 'interrupted')).toEqual([]);
  }, 180_000);
});
