// The machine's list of bridge ports (bridge/jail/bridge-ports.ts): an egress proxy refuses a local
// destination on a port a live bridge listed, under allow-all too; a dead bridge's stale entry and
// a remote address on that port are not refused; an entry of a gone process (dead, or its pid recycled)
// does not count and the next bridge to register removes it; the list is cleaned by its writer; a bridge's
// port counts only in its own network namespace (a service on that port number elsewhere is someone else's).
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isBridgePort, networkNamespace, registerBridgePorts } from '../../bridge/jail/bridge-ports.ts';
import { EgressProxy } from '../../bridge/jail/egress-proxy.ts';
import { tempDir } from './helpers.ts';

const repoRoot = join(import.meta.dirname, '../..');

const quiet = { info: () => undefined, warn: () => undefined };

describe('bridge ports: another session\'s bridge is never reached through an egress proxy', () => {
  it('a listed port of a live pid is a bridge port; a dead pid\'s entry is not; release removes only its own', () => {
    const dir = join(tempDir('hb-ports-'), 'ports');
    const release = registerBridgePorts([40001, 40002], dir);
    expect(statSync(dir).mode & 0o7777).toBe(0o1777);
    const mine = readdirSync(dir).sort();
    expect(mine.map((name) => name.split('.').slice(0, 2).join('.'))).toEqual([`40001.${process.pid}`, `40002.${process.pid}`]);
    const own = readFileSync(join(dir, mine[0]!), 'utf8').trim().split(' ');
    expect(own[0]).toBe(String(process.pid));
    expect([isBridgePort(40001, dir), isBridgePort(40002, dir), isBridgePort(40003, dir)]).toEqual([true, true, false]);
    // A dead bridge's entry, and one whose pid now names another process (a recycled pid: pid 1, another start time).
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, `40003.${dead.stdout}.a`), `${dead.stdout} ${own[1]}\n`);
    writeFileSync(join(dir, '40004.1.a'), `1 ${own[1]}\n`);
    expect([isBridgePort(40003, dir), isBridgePort(40004, dir)]).toEqual([false, false]);
    const init = readFileSync('/proc/1/stat', 'utf8');
    writeFileSync(join(dir, '40002.1.b'), `1 ${init.slice(init.lastIndexOf(')') + 2).split(' ')[19]}\n`); // another live process lists it too
    release();
    expect(readdirSync(dir).sort()).toEqual(['40002.1.b', `40003.${dead.stdout}.a`, '40004.1.a']);
    expect(isBridgePort(40002, dir)).toBe(true);
    // The next bridge to register sweeps the entries of processes that are gone.
    registerBridgePorts([40005], dir)();
    expect(readdirSync(dir)).toEqual(['40002.1.b']);
  });

  it("a live entry counts in the network namespace it names, or anywhere when it names none; not in another", () => {
    const dir = join(tempDir('hb-ports-'), 'ports');
    registerBridgePorts([40030], dir);
    const [pid, started, namespace] = readFileSync(join(dir, readdirSync(dir)[0]!), 'utf8').trim().split(' ');
    expect(namespace).toBe(networkNamespace());
    expect(namespace).toMatch(/^net:\[\d+\]$/);
    writeFileSync(join(dir, `40031.${pid}.a`), `${pid} ${started} net:[1]\n`);
    writeFileSync(join(dir, `40032.${pid}.a`), `${pid} ${started}\n`);
    expect([isBridgePort(40030, dir), isBridgePort(40031, dir), isBridgePort(40032, dir)]).toEqual([true, false, true]);
  });

  it.skipIf(process.getuid?.() !== 0 || spawnSync('unshare', ['-n', 'true']).status !== 0)(
    'a bridge listening in another network namespace does not close that port number here, and one in this namespace does',
    async () => {
      const dir = join(tempDir('hb-ports-'), 'ports');
      // Two real processes list a port each and stay until their stdin closes: one in a namespace of its own (unshare -n).
      const lister = (port: number, own: boolean) => {
        const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', `
          const { registerBridgePorts } = await import(${JSON.stringify(join(repoRoot, 'bridge/jail/bridge-ports.ts'))});
          registerBridgePorts([${port}], ${JSON.stringify(dir)});
          process.stdout.write('listed\\n');
          process.stdin.resume().on('end', () => process.exit(0));
        `];
        const child = own ? spawn('unshare', ['-n', '--', ...node], { cwd: repoRoot }) : spawn(node[0]!, node.slice(1), { cwd: repoRoot });
        const listed = new Promise<void>((resolve, reject) => {
          child.stdout.once('data', () => resolve());
          child.once('exit', (code) => reject(new Error(`the lister exited with ${code}`)));
        });
        return { child, listed };
      };
      const elsewhere = lister(40040, true);
      const here = lister(40041, false);
      try {
        await Promise.all([elsewhere.listed, here.listed]);
        expect([isBridgePort(40040, dir), isBridgePort(40041, dir)]).toEqual([false, true]);
      } finally {
        for (const { child } of [elsewhere, here]) child.stdin.end();
      }
    },
  );

  it('what another uid left or planted in the dir neither blocks an entry nor stalls a lookup', () => {
    const dir = join(tempDir('hb-ports-'), 'ports');
    // Another uid's stale entry on the same port (a SIGKILLed bridge of another uid), a FIFO and a symlink to a live entry.
    registerBridgePorts([], dir);
    writeFileSync(join(dir, '40010'), `1 0\n`);
    writeFileSync(join(dir, '40010.1.stale'), `999999999 0\n`);
    expect(spawnSync('mkfifo', [join(dir, '40011.1.fifo')]).status).toBe(0);
    const live = readdirSync(dir).length;
    expect(live).toBe(3);
    // The lookups run in a child process with a hang guard: a FIFO opened by a blocking read would never return.
    const probe = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', `
        const { isBridgePort, registerBridgePorts } = await import(${JSON.stringify(join(repoRoot, 'bridge/jail/bridge-ports.ts'))});
        const dir = ${JSON.stringify(dir)};
        const before = [isBridgePort(40010, dir), isBridgePort(40011, dir)];
        registerBridgePorts([40010, 40011], dir);
        process.stdout.write(JSON.stringify([...before, isBridgePort(40010, dir), isBridgePort(40011, dir)]));
      `],
      { cwd: repoRoot, encoding: 'utf8', timeout: 20_000, ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}) },
    );
    expect(probe.stderr).toBe('');
    expect(JSON.parse(probe.stdout)).toEqual([false, false, true, true]);
  });

  it.skipIf(process.getuid?.() !== 0)('root takes back a dir another uid created first (its owner could remove every entry)', () => {
    const dir = join(tempDir('hb-ports-'), 'ports');
    mkdirSync(dir, { mode: 0o777 });
    chownSync(dir, 4242, 4242);
    registerBridgePorts([40020], dir)();
    const stat = statSync(dir);
    expect([stat.uid, stat.mode & 0o7777]).toEqual([0, 0o1777]);
  });

  it('the proxy refuses a listed port on every local address under allow-all, and a remote address on it is decided by the policy', async () => {
    const listed = new Set([40100]);
    const proxy = new EgressProxy(quiet, (port) => listed.has(port));
    proxy.setMcpPort(40200);
    proxy.nameLocal(['127.0.0.1:40100', '127.0.0.1:40101']); // named by a launch or not, a listed port stays out of reach
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
