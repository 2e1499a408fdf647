// The bridge started from a V8 startup snapshot (docs/bridge-internals.md#startup-snapshot): built
// in a dir laid out like the recipe's by snapshotBuildCommand, chosen by the launch's sh command
// (bridgeShellCommand) while its stamp names this node, and serving turns like the bridge file itself
// (a kept CLI's keeper included); two bridges from one snapshot share no ids; a stamp naming another
// node binary starts the bridge without it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startupSnapshot } from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { BRIDGE_SNAPSHOT, bridgeShellCommand, snapshotBuildCommand } from '../../bootstrap/bridge-command.mjs';
import { bridgeBundle, connectClient, fixtureLaunch, startBridge, tempDir, type RunningBridge } from './helpers.ts';

const bridges: RunningBridge[] = [];
afterEach(async () => {
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
});

/** The bridge file and its snapshot script in a fresh dir, as the recipe installs them. */
function installedBridge(): { dir: string; file: string } {
  const dir = tempDir('hb-snapshot-');
  copyFileSync(bridgeBundle, join(dir, 'bridge.mjs'));
  copyFileSync(join(bridgeBundle, '..', BRIDGE_SNAPSHOT.script), join(dir, BRIDGE_SNAPSHOT.script));
  return { dir, file: join(dir, 'bridge.mjs') };
}

/** A bridge launched the way the host kit launches one in a sandbox: sh, bridgeShellCommand, HB_* values. */
async function launch(file: string): Promise<{ bridge: RunningBridge; argv: string[] }> {
  const stateDir = join(tempDir('hb-snapshot-state-'), 'state');
  const bridge = await startBridge({
    stateDir,
    env: { HB_NODE: process.execPath, HB_FILE: file, HB_STATE: stateDir, HB_PORT: '0' },
    wrap: () => ({ cmd: 'sh', args: ['-c', bridgeShellCommand()] }),
  });
  bridges.push(bridge);
  const argv = readFileSync(`/proc/${bridge.ready.pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  return { bridge, argv };
}

describe.skipIf(typeof startupSnapshot?.isBuildingSnapshot !== 'function' || process.platform !== 'linux')('startup snapshot', () => {
  it('is built beside the bridge file, chosen by the launch while its stamp names this node, and serves turns', async () => {
    const { dir, file } = installedBridge();
    const built = spawnSync('sh', ['-c', snapshotBuildCommand()], { cwd: dir, env: { ...process.env, HB_NODE: process.execPath, HB_FILE: 'bridge.mjs' }, encoding: 'utf8' });
    expect(built.status, built.stderr).toBe(0);
    expect(existsSync(join(dir, BRIDGE_SNAPSHOT.blob))).toBe(true);
    const node = statSync(realpathSync(process.execPath));
    expect(readFileSync(join(dir, BRIDGE_SNAPSHOT.stamp), 'utf8').trim()).toBe(`${node.size}:${Math.floor(node.mtimeMs / 1000)}`);

    const a = await launch(file);
    expect(a.argv.slice(1, 4)).toEqual(['--snapshot-blob', join(dir, BRIDGE_SNAPSHOT.blob), file]);
    const { client, hello } = await connectClient(a.bridge);
    await client.attach(hello.lastSeq);
    await client.request({ type: 'start', id: 's1', turnId: 't1', launch: fixtureLaunch(['--json', '--lines', '3']) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000);
    // A kept CLI: its keeper is the bridge file in keeper mode, spawned from the snapshot's process.argv[1].
    await client.request({ type: 'start', id: 's2', turnId: 't2', launch: fixtureLaunch(['--json', '--lines', '2'], { survive: true }) });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't2', 30_000);
    const records = client.records();
    const lines = (turnId: string) => records.filter((r) => r.kind === 'stdout' && r.turnId === turnId).map((r) => JSON.parse((r.data as { text: string }).text).type);
    expect(lines('t1')).toEqual(['session', 'line', 'line', 'line', 'done']);
    expect(lines('t2')).toEqual(['session', 'line', 'line', 'done']);
    expect(records.filter((r) => r.kind === 'turn-end').map((r) => (r.data as { reason: string }).reason)).toEqual(['exit', 'exit']);
    expect(records.find((r) => r.kind === 'spawn' && r.turnId === 't2')).toMatchObject({ data: { keeper: expect.any(String) } });
    await client.close();

    // Nothing of one start is frozen into the snapshot: a second bridge from it has ids of its own.
    const b = await launch(file);
    expect(b.argv[1]).toBe('--snapshot-blob');
    expect(b.bridge.ready.bridgeId).not.toBe(a.bridge.ready.bridgeId);
    expect(b.bridge.ready.journalId).not.toBe(a.bridge.ready.journalId);

    // Built by another node (a stamp that is not this one's): the bridge starts without the snapshot.
    writeFileSync(join(dir, BRIDGE_SNAPSHOT.stamp), '1:1\n');
    const c = await launch(file);
    expect(c.argv.slice(1, 2)).toEqual([file]);
    expect(c.bridge.ready.version).toBe(a.bridge.ready.version);
  }, 120_000);

  it('a node that cannot build one leaves no blob and exits 0, saying why', () => {
    const { dir } = installedBridge();
    writeFileSync(join(dir, BRIDGE_SNAPSHOT.script), 'throw new Error("not a snapshot script")\n');
    const built = spawnSync('sh', ['-c', snapshotBuildCommand()], { cwd: dir, env: { ...process.env, HB_NODE: process.execPath, HB_FILE: 'bridge.mjs' }, encoding: 'utf8' });
    expect(built.status).toBe(0);
    expect(built.stderr).toContain('no startup snapshot');
    expect(existsSync(join(dir, BRIDGE_SNAPSHOT.blob))).toBe(false);
    expect(existsSync(join(dir, BRIDGE_SNAPSHOT.stamp))).toBe(false);
  });
});
