// The jail's parts on their own (bridge/jail/, docs/security.md): the egress proxy's decisions,
// what a launch may write, the isolation flags, and the token handover at the real bridge (a file
// read once the lock is held, never the environment; a bridge refused by the lock leaves the live
// one's token alone and removes its own; required isolation that cannot be had refuses at start).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCliUser } from '../../bridge/jail/cli-user.ts';
import { cliDirs, handOverRefusal, isBridgeName } from '../../bridge/jail/cli-dirs.ts';
import { EgressProxy } from '../../bridge/jail/egress-proxy.ts';
import { endpointsNamedBy } from '../../bridge/jail/named-endpoints.ts';
import { DEFAULT_JAIL_ARGS, isolationImpossible, setJailArg, type JailArgs } from '../../bridge/jail/jail-args.ts';
import { launchSpecSchema } from '../../protocol/v1/launch-spec.ts';
import { networkPolicySchema } from '../../protocol/v1/network-policy.ts';
import { bridgeBundle, connectClient, startBridge, tempDir, type RunningBridge } from './helpers.ts';

const quiet = { info: () => undefined, warn: () => undefined };
const bridges: RunningBridge[] = [];
afterAll(async () => {
  for (const bridge of bridges) await bridge.kill();
});

describe('the egress proxy decides every destination by the policy', () => {
  const proxy = new EgressProxy(quiet);
  proxy.setMcpPort(4100);
  proxy.addBridgePort(4200);
  const decide = async (host: string, port: number) => {
    const d = await proxy.decide(host, port);
    return d.ok ? `ok ${d.address}` : `no ${d.reason}`;
  };
  const policy = (p: unknown) => proxy.setPolicy(networkPolicySchema.parse(p));

  it('allow-all: anything off this machine; of this machine only what a launch named, never the bridge’s host socket', async () => {
    policy({ mode: 'allow-all' });
    expect(await decide('127.0.0.1', 8080)).toBe('no local-not-named');
    expect(await decide('localhost', 8080)).toBe('no local-not-named');
    expect(await decide('[::1]', 8080)).toBe('no local-not-named');
    proxy.nameLocal(endpointsNamedBy({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080', PI: '{"baseUrl":"http://LocalHost:9090/v1"}', X: 'https://user:pw@[::1]/a', BRIDGE: 'http://localhost:4200' }));
    expect(proxy.namedLocal.sort()).toEqual(['127.0.0.1:8080', '::1:443', 'localhost:4200', 'localhost:9090']);
    expect(await decide('127.0.0.1', 8080)).toBe('ok 127.0.0.1');
    expect(await decide('127.0.0.1', 8081)).toBe('no local-not-named'); // the port counts
    expect(await decide('127.0.0.2', 8080)).toBe('no local-not-named'); // and the host, as the CLI asks for it
    expect(await decide('localhost', 9090)).toMatch(/^ok (127\.0\.0\.1|::1)$/);
    expect(await decide('[::1]', 443)).toBe('ok ::1');
    expect(await decide('localhost', 4200)).toBe('no bridge-socket'); // named or not
    expect(await decide('127.0.0.1', 4200)).toBe('no bridge-socket');
    expect(await decide('127.9.9.9', 4200)).toBe('no bridge-socket');
    expect(await decide('[::1]', 4200)).toBe('no bridge-socket');
    expect(await decide('10.1.2.3', 4200)).toBe('ok 10.1.2.3'); // another machine's port 4200 is not the bridge
  });

  it('a watched bridge port (a keeper reads it from bridge.json) is read only for a local destination', async () => {
    const watched = new EgressProxy(quiet);
    let reads = 0;
    watched.watchBridgePort(() => {
      reads++;
      return 4300;
    });
    expect(await watched.decide('10.1.2.3', 4300)).toEqual({ ok: true, address: '10.1.2.3' });
    expect(await watched.decide('10.1.2.3', 443)).toEqual({ ok: true, address: '10.1.2.3' });
    expect(reads).toBe(0);
    watched.nameLocal(['127.0.0.1:4301']);
    expect(await watched.decide('127.0.0.1', 4300)).toEqual({ ok: false, reason: 'bridge-socket' });
    expect(await watched.decide('127.0.0.1', 4301)).toEqual({ ok: true, address: '127.0.0.1' });
    expect(reads).toBe(2);
  });

  it('deny-all: nothing but the MCP endpoint on loopback', async () => {
    policy({ mode: 'deny-all' });
    expect(await decide('127.0.0.1', 4100)).toBe('ok 127.0.0.1');
    expect(await decide('localhost', 4100)).toBe('ok 127.0.0.1');
    expect(await decide('10.0.0.1', 4100)).toBe('no deny-all'); // the MCP port elsewhere is just a port
    expect(await decide('127.0.0.1', 8080)).toBe('no deny-all');
    expect(await decide('example.com', 443)).toBe('no deny-all');
  });

  it('custom: names (exact, *. strict subdomains), CIDRs (by address, IPv4-mapped too), deniedCIDRs winning over both', async () => {
    policy({ mode: 'custom', allowedHosts: ['localhost', '*.example.test'], allowedCIDRs: ['10.0.0.0/8', 'fd00::/8'], deniedCIDRs: ['10.9.0.0/16', '127.0.0.2/32'] });
    expect(await decide('localhost', 80)).toMatch(/^ok (127\.0\.0\.1|::1)$/);
    expect(await decide('example.test', 80)).toBe('no unresolvable'); // not a subdomain, and no such name
    expect(await decide('10.1.1.1', 80)).toBe('ok 10.1.1.1');
    expect(await decide('::ffff:10.1.1.1', 80)).toBe('ok ::ffff:10.1.1.1');
    expect(await decide('10.9.1.1', 80)).toBe('no denied-cidr');
    expect(await decide('::ffff:10.9.1.1', 80)).toBe('no denied-cidr');
    expect(await decide('fd12::1', 80)).toBe('ok fd12::1');
    expect(await decide('11.0.0.1', 80)).toBe('no not-allowed');
    expect(await decide('127.0.0.2', 80)).toBe('no denied-cidr');
    expect(await decide('localhost', 4200)).toBe('no bridge-socket');
  });

  it('serves CONNECT, absolute-form HTTP and SOCKS5 on one port, refusing with 403 / SOCKS code 2', async () => {
    const target = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as { port: number }).port;
    const live = new EgressProxy(quiet);
    live.nameLocal([`127.0.0.1:${port}`]);
    const proxyPort = await live.listen();
    try {
      const { request } = await import('node:http');
      const get = (path: string) =>
        new Promise<number>((resolve) => {
          const req = request({ host: '127.0.0.1', port: proxyPort, path, headers: { host: new URL(path).host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.end();
        });
      live.setPolicy({ mode: 'allow-all' });
      expect(await get(`http://127.0.0.1:${port}/`)).toBe(200);
      live.setPolicy({ mode: 'deny-all' });
      expect(await get(`http://127.0.0.1:${port}/`)).toBe(403);
      const { connect } = await import('node:net');
      const socks = (p: number) =>
        new Promise<number[]>((resolve) => {
          const s = connect(proxyPort, '127.0.0.1', () => s.write(Buffer.from([5, 1, 0])));
          let step = 0;
          s.on('data', (d) => {
            if (step++ === 0) s.write(Buffer.from([5, 1, 0, 1, 127, 0, 0, 1, p >> 8, p & 255]));
            else {
              resolve([...d.subarray(0, 2)]);
              s.destroy();
            }
          });
        });
      expect(await socks(port)).toEqual([5, 2]);
      live.setPolicy({ mode: 'allow-all' });
      expect(await socks(port)).toEqual([5, 0]);
      expect(live.counts.refused).toBe(2);
    } finally {
      await live.close();
      target.close();
    }
  });
});

describe('what a launch may write', () => {
  const state = '/s/.harness-bridge/sessions/x';
  const launch = (spec: object) => launchSpecSchema.parse({ argv: ['cli'], ...spec });
  it('the top-level entries of the state dir the launch names, plus home/ and tmp/ when it names none', () => {
    const found = cliDirs(launch({ cwd: '/p', env: { HOME: `${state}/claude-home`, CLAUDE_CONFIG_DIR: `${state}/claude-home/.claude` }, argv: ['pi', '--session', `${state}/pi/sessions/t.jsonl`] }), state);
    expect(found).toEqual({ ok: true, dirs: { areas: [`${state}/pi`, `${state}/claude-home`, `${state}/tmp`], project: '/p', env: { TMPDIR: `${state}/tmp` } } });
  });
  it('never one of the bridge’s own entries, nor the state dir itself', () => {
    for (const name of ['token', 'token.new.abc', 'journal.ndjson', 'bridge.json', 'bridge.log', 'bridge.lock', 'keepers', 'jail']) expect(isBridgeName(name), name).toBe(true);
    expect(cliDirs(launch({ env: { X: `${state}/journal.ndjson` } }), state)).toMatchObject({ ok: false, message: /bridge's own/ });
    expect(cliDirs(launch({ argv: ['cli', `--log=${state}/bridge.log`] }), state)).toMatchObject({ ok: false });
    expect(cliDirs(launch({ env: { HOME: state } }), state)).toMatchObject({ ok: false, message: /state dir/ });
  });
  it('a project dir is handed over unless it is a system dir or holds (or is inside) the bridge’s dirs', () => {
    expect(handOverRefusal('/', [state])).toMatch(/system/);
    expect(handOverRefusal('/usr', [state])).toMatch(/system/);
    expect(handOverRefusal('/s', [state])).toMatch(/contains/);
    expect(handOverRefusal(`${state}/x`, [state])).toMatch(/inside/);
    expect(handOverRefusal('/s/project', [state])).toBeUndefined();
  });
});

describe('the isolation flags', () => {
  it('parse, and refuse what cannot be', () => {
    const args: JailArgs = { ...DEFAULT_JAIL_ARGS };
    expect(setJailArg(args, '--isolation', 'uid')).toBeUndefined();
    expect(setJailArg(args, '--isolation', 'bwrap')).toMatch(/must be one of/);
    expect(setJailArg(args, '--network-policy', 'relative.json')).toMatch(/absolute/);
    expect(parseCliUser('harness-agent')).toEqual({ name: 'harness-agent' });
    expect(parseCliUser('1234:1234')).toEqual({ uid: 1234, gid: 1234 });
    expect(parseCliUser('root')).toMatchObject({ error: expect.any(String) });
    expect(parseCliUser('0:0')).toMatchObject({ error: expect.any(String) });
    expect(isolationImpossible({ ...DEFAULT_JAIL_ARGS, requested: 'none', required: true })).toMatch(/contradicts/);
  });
});

describe('the token handover at the real bridge', () => {
  const handOver = (stateDir: string, token: string): string => {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const name = `token.new.${Math.random().toString(16).slice(2, 10)}`;
    writeFileSync(join(stateDir, name), token, { mode: 0o600 });
    return name;
  };

  it('is read once the lock is held, renamed to token, and is in no environment; a second bridge refused by the lock removes its own and leaves the live token', async () => {
    const stateDir = join(tempDir('hb-handover-'), 'state');
    const token = 'a-handed-over-token-of-enough-length';
    const first = await startBridge({ stateDir, token, env: { HARNESS_BRIDGE_TOKEN: null }, args: ['--token-file', handOver(stateDir, token)] });
    bridges.push(first);
    expect(readFileSync(join(stateDir, 'token'), 'utf8')).toBe(token);
    expect(readFileSync(`/proc/${first.ready.pid}/environ`, 'utf8')).not.toContain(token);
    const { hello } = await connectClient(first);
    expect(hello.isolation?.requested).toBe('auto');
    // A second bridge on the live one's state dir, handed another token: refused, its file gone, the live token kept.
    const second = handOver(stateDir, 'another-token-of-enough-length!!');
    const refused = spawn(process.execPath, [bridgeBundle, '--state-dir', stateDir, '--token-file', second], { env: { ...process.env, HARNESS_BRIDGE_TOKEN: '' } });
    expect(await new Promise((resolve) => refused.once('exit', resolve))).toBe(75);
    expect(existsSync(join(stateDir, second))).toBe(false);
    expect(readFileSync(join(stateDir, 'token'), 'utf8')).toBe(token);
    await connectClient(first); // still the live token
  });

  it('required isolation that cannot be had refuses before the ready line (exit 78), saying why', async () => {
    const stateDir = join(tempDir('hb-require-'), 'state');
    const bridge = spawn(process.execPath, [bridgeBundle, '--state-dir', stateDir, '--isolation', 'none', '--require-isolation'], {
      env: { ...process.env, HARNESS_BRIDGE_TOKEN: 'a-token-of-enough-length-here' },
    });
    let stderr = '';
    bridge.stderr.on('data', (d) => (stderr += d));
    let stdout = '';
    bridge.stdout.on('data', (d) => (stdout += d));
    expect(await new Promise((resolve) => bridge.once('exit', resolve))).toBe(78);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/isolation is required and not possible here/);
  });
});
