// The machine's list of bridge ports (bridge/jail/bridge-ports.ts): an egress proxy refuses a local
// destination on a port a live bridge listed, under allow-all too; a dead bridge's stale entry and
// a remote address on that port are not refused; an entry of a gone process (dead, or its pid recycled)
// does not count and the next bridge to register removes it; the list is cleaned by its writer.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isBridgePort, registerBridgePorts } from '../../bridge/jail/bridge-ports.ts';
import { EgressProxy } from '../../bridge/jail/egress-proxy.ts';
import { tempDir } from './helpers.ts';

const quiet = { info: () => undefined, warn: () => undefined };

describe('bridge ports: another session\'s bridge is never reached through an egress proxy', () => {
  it('a listed port of a live pid is a bridge port; a dead pid\'s entry is not; release removes only its own', () => {
    const dir = join(tempDir('hb-ports-'), 'ports');
    const release = registerBridgePorts([40001, 40002], dir);
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
    const own = readFileSync(join(dir, '40001'), 'utf8').trim().split(' ');
    expect(own[0]).toBe(String(process.pid));
    expect([isBridgePort(40001, dir), isBridgePort(40002, dir), isBridgePort(40003, dir)]).toEqual([true, true, false]);
    // A dead bridge's entry, and one whose pid now names another process (a recycled pid: pid 1, another start time).
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, '40003'), `${dead.stdout} ${own[1]}\n`);
    writeFileSync(join(dir, '40004'), `1 ${own[1]}\n`);
    expect([isBridgePort(40003, dir), isBridgePort(40004, dir)]).toEqual([false, false]);
    const init = readFileSync('/proc/1/stat', 'utf8');
    writeFileSync(join(dir, '40002'), `1 ${init.slice(init.lastIndexOf(')') + 2).split(' ')[19]}\n`); // taken over by another live process: not ours to remove
    expect(isBridgePort(40002, dir)).toBe(true);
    release();
    expect([existsSync(join(dir, '40001')), existsSync(join(dir, '40002'))]).toEqual([false, true]);
    // The next bridge to register sweeps the entries of processes that are gone.
    registerBridgePorts([40005], dir)();
    expect(['40002', '40003', '40004'].map((p) => existsSync(join(dir, p)))).toEqual([true, false, false]);
  });

  it('the proxy refuses a listed port on every local address under allow-all, and a remote address on it is decided by the policy', async () => {
    const listed = new Set([40100]);
    const proxy = new EgressProxy(quiet, (port) => listed.has(port));
    proxy.setMcpPort(40200);
    const decisions = await Promise.all([
      proxy.decide('127.0.0.1', 40100),
      proxy.decide('localhost', 40100),
      proxy.decide('::1', 40100),
      proxy.decide('0.0.0.0', 40100),
      proxy.decide('127.0.0.1', 40101),
      proxy.decide('127.0.0.1', 40200),
      proxy.decide('192.0.2.10', 40100),
    ]);
    expect(decisions.map((d) => (d.ok ? 'ok' : d.reason))).toEqual(['bridge-socket', 'bridge-socket', 'bridge-socket', 'bridge-socket', 'ok', 'ok', 'ok']);
  });
});
