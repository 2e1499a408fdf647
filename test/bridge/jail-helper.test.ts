// The jail helper (bridge/jail/jail-helper.ts, jail-helper-main.ts) leaving while a kept CLI it wrapped
// may run, with real sandbox-runtime and bubblewrap: srt's mount points (made in the project as the
// jail starts) stay while the kept CLI's keeper socket answers, and go with srt's clean-up once the
// bridge said that CLI ended. Either way srt's relays to its proxy (socat, the helper's children) and
// their sockets go with the helper.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JailHelper } from '../../bridge/jail/jail-helper.ts';
import { namespaceSupport } from '../../bridge/jail/srt.ts';
import { findSrt } from '../../bridge/jail/srt-path.ts';
import { killAll, leftoverProcesses, markedProcesses, PROCESS_MARK_ENV } from '../../scripts/leftover-processes.mjs';
import { bridgeBundle, connectClient, fixtureLaunch, startBridge, tempDir } from './helpers.ts';

const srt = findSrt(undefined, bridgeBundle, createRequire);
const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0 && !('error' in srt);

/** Processes whose parent is `ppid`, with their argv. */
function childrenOf(ppid: number): Array<{ pid: number; argv: string[] }> {
  const out: Array<{ pid: number; argv: string[] }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== ppid) continue;
      out.push({ pid: Number(entry), argv: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0') });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const alive = (pid: number): boolean => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};

/** Wraps a command for a kept CLI in an empty project (its keeper socket listening), then lets the helper go; what is left in the project. */
async function leaveWithKeptCli(bridgeSaidItEnded: boolean): Promise<{ made: string[]; left: string[]; relays: number; relaysLeft: number; socketsLeft: number }> {
  if ('error' in srt) throw new Error(srt.error);
  const project = tempDir('hb-helper-project-');
  const kept = join(tmpdir(), `hb-kept-${randomBytes(8).toString('hex')}.sock`);
  const keeper = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => keeper.listen(kept, resolve));
  const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: 9, socksProxyPort: 9 };
  const filesystem = { denyRead: [], allowRead: [], allowWrite: [project], denyWrite: [] };
  const helper = new JailHelper({ bridgeFile: bridgeBundle, srtIndex: join(srt.pkg, 'dist', 'index.js'), config: { network, filesystem } });
  try {
    const wrapped = await helper.wrap('true', filesystem, project, kept);
    helper.started();
    const ran = spawnSync('/bin/sh', ['-c', wrapped], { cwd: project, encoding: 'utf8' }); // bubblewrap makes the mount points as it starts the jail
    expect(ran.status, ran.stderr).toBe(0);
    const made = readdirSync(project);
    const helperPid = childrenOf(process.pid).find((child) => child.argv.includes('--jail-helper'))!.pid;
    const relays = childrenOf(helperPid).filter((child) => child.argv[0]!.endsWith('socat'));
    const sockets = relays.flatMap((relay) => relay.argv.filter((arg) => arg.startsWith('UNIX-LISTEN:')).map((arg) => arg.slice('UNIX-LISTEN:'.length).split(',')[0]!));
    if (bridgeSaidItEnded) helper.ended(kept);
    helper.close();
    await helper.exited;
    // SIGTERMed as the helper exits; a hang guard, not a time limit on the test.
    for (let i = 0; i < 250 && relays.some((relay) => alive(relay.pid)); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    return {
      made,
      left: readdirSync(project),
      relays: relays.length,
      relaysLeft: relays.filter((relay) => alive(relay.pid)).length,
      socketsLeft: sockets.filter((socket) => existsSync(socket)).length,
    };
  } finally {
    await new Promise<void>((resolve) => keeper.close(() => resolve()));
    rmSync(kept, { force: true });
    rmSync(project, { recursive: true, force: true });
  }
}

describe.skipIf(!canNamespace)('the jail helper leaving with a kept CLI it wrapped', () => {
  it("leaves srt's mount points while that CLI's keeper socket answers", async () => {
    const { made, left, relays, relaysLeft, socketsLeft } = await leaveWithKeptCli(false);
    expect(made.length).toBeGreaterThan(0); // .bashrc, .gitconfig, … made for bubblewrap
    expect(left).toEqual(made);
    expect(relays, "srt's relays ran").toBeGreaterThan(0);
    expect({ relaysLeft, socketsLeft }, 'the kept CLI does not use them: they go with the helper').toEqual({ relaysLeft: 0, socketsLeft: 0 });
  });

  it('cleans them up once the bridge said that CLI ended', async () => {
    const { made, left, relays, relaysLeft, socketsLeft } = await leaveWithKeptCli(true);
    expect(made.length).toBeGreaterThan(0);
    expect(left).toEqual([]);
    expect(relays).toBeGreaterThan(0);
    expect({ relaysLeft, socketsLeft }).toEqual({ relaysLeft: 0, socketsLeft: 0 });
  });
});

describe.skipIf(!canNamespace)('a jail helper told to leave while sandbox-runtime initializes', () => {
  it("ends srt's relay it already started (srt's own clean-up is registered only once initialize has finished)", async () => {
    if ('error' in srt) throw new Error(srt.error);
    // A socat that takes a while to listen: the helper is told to leave (its bridge died) while srt waits for the relay's socket.
    const bin = tempDir('hb-slow-socat-');
    const slowSocat = join(bin, 'socat');
    writeFileSync(slowSocat, `#!/bin/sh\nsleep 2\nexec ${spawnSync('sh', ['-c', 'command -v socat'], { encoding: 'utf8' }).stdout.trim()} "$@"\n`, { mode: 0o755 });
    const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: 9, socksProxyPort: 9 };
    const filesystem = { denyRead: [], allowRead: [], allowWrite: [], denyWrite: [] };
    const helper = new JailHelper({ bridgeFile: bridgeBundle, srtIndex: join(srt.pkg, 'dist', 'index.js'), config: { network, filesystem, socatPath: slowSocat } });
    try {
      const helperPid = childrenOf(process.pid).find((child) => child.argv.includes('--jail-helper'))!.pid;
      let relays: Array<{ pid: number; argv: string[] }> = [];
      // Counted looks, not a deadline: the relay is spawned within the helper's start, then sleeps 2 s before it listens.
      for (let i = 0; i < 2_000 && relays.length === 0; i++) {
        relays = childrenOf(helperPid).filter((child) => child.argv.some((arg) => arg === slowSocat));
        if (relays.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(relays.length, 'srt started its relay').toBeGreaterThan(0);
      helper.close();
      await helper.exited;
      for (let i = 0; i < 250 && relays.some((relay) => alive(relay.pid)); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(relays.filter((relay) => alive(relay.pid)).map((relay) => relay.argv.join(' ')), 'relays left running').toEqual([]);
    } finally {
      helper.close();
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canNamespace)('a jail helper SIGKILLed from outside', () => {
  it('while it starts: the first spawn gets a new helper and is wrapped (not spawn-failed)', async () => {
    const stateDir = tempDir('hb-helper-state-');
    const project = tempDir('hb-helper-project-');
    const log = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };
    const before = new Set(childrenOf(process.pid).map((child) => child.pid));
    const support = await namespaceSupport({ user: undefined, srt: undefined, stateDir, bridgeFile: bridgeBundle, policyFile: undefined, log: log as never });
    if (!support.ok) throw new Error(support.reason);
    try {
      // The namespace's support starts its helper before its probe; it is killed before the first wrap.
      const started = childrenOf(process.pid).filter((child) => !before.has(child.pid) && child.argv.includes('--jail-helper'));
      expect(started.length, 'the helper the namespace started').toBe(1);
      process.kill(started[0]!.pid, 'SIGKILL');
      const jailed = support.wrap({ argv: ['/bin/true'], cwd: project, io: { mode: 'pipes' } } as never, { areas: [project], project, user: undefined });
      const result = await jailed;
      expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
      if (result.ok) result.release?.();
    } finally {
      support.close();
      rmSync(stateDir, { recursive: true, force: true });
      rmSync(project, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canNamespace)('a jail helper started as root before the CLI\'s uid is known (early-helper.ts)', () => {
  const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: 9, socksProxyPort: 9 };
  const nobody = { uid: 65534, gid: 65534 };
  const idsOf = (pid: number, field: 'Uid' | 'Gid' | 'Groups'): string =>
    new RegExp(`^${field}:[ \\t]*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]?.trim().replace(/\s+/g, ' ') ?? '';

  it('takes the uid and gid init hands it, for good, before srt starts its relays; its wraps work', async () => {
    if ('error' in srt) throw new Error(srt.error);
    const filesystem = { denyRead: [], allowRead: [], allowWrite: [], denyWrite: [] };
    const before = new Set(childrenOf(process.pid).map((child) => child.pid));
    const helper = new JailHelper({ bridgeFile: bridgeBundle, srtIndex: join(srt.pkg, 'dist', 'index.js') });
    try {
      const [started] = childrenOf(process.pid).filter((child) => !before.has(child.pid) && child.argv.includes('--jail-helper'));
      expect(started, 'the helper').toBeDefined();
      expect(idsOf(started!.pid, 'Uid'), 'as root until init').toBe('0 0 0 0');
      helper.init({ network, filesystem }, nobody);
      await helper.ready;
      expect(idsOf(started!.pid, 'Uid')).toBe('65534 65534 65534 65534');
      expect(idsOf(started!.pid, 'Gid')).toBe('65534 65534 65534 65534');
      expect(idsOf(started!.pid, 'Groups')).toBe('');
      // Not dumpable once it changed its uid: its /proc files stay root's, so that uid cannot read its environment or memory.
      expect(statSync(`/proc/${started!.pid}/environ`).uid).toBe(0);
      const relays = childrenOf(started!.pid).filter((child) => child.argv.some((arg) => arg.endsWith('socat')));
      expect(relays.length, 'srt started its relays').toBeGreaterThan(0);
      for (const relay of relays) expect(idsOf(relay.pid, 'Uid'), relay.argv.join(' ')).toBe('65534 65534 65534 65534');
      // Its wraps are that uid's, as the CLI it jails is (its relay sockets are the uid's).
      const wrapped = await helper.wrap('true', filesystem);
      helper.started();
      const ran = spawnSync('/bin/sh', ['-c', wrapped], { cwd: '/', encoding: 'utf8', ...nobody });
      expect(ran.status, ran.stderr).toBe(0);
      helper.ended();
    } finally {
      helper.close();
      await helper.exited;
    }
  });

  it('a helper that runs as a uid cannot be handed root: init fails with why, and it is gone', async () => {
    if ('error' in srt) throw new Error(srt.error);
    const filesystem = { denyRead: [], allowRead: [], allowWrite: [], denyWrite: [] };
    const helper = new JailHelper({ bridgeFile: bridgeBundle, srtIndex: join(srt.pkg, 'dist', 'index.js'), credentials: nobody });
    try {
      helper.init({ network, filesystem }, { uid: 0, gid: 0 });
      await expect(helper.ready).rejects.toThrow('the jail helper runs as uid 65534 and cannot take uid 0');
      await helper.exited;
    } finally {
      helper.close();
    }
  });

  it('a root bridge starts its helper with itself, before any spawn, and hands it the session\'s uid', { timeout: 60_000 }, async () => {
    const bridge = await startBridge();
    try {
      const { client, hello } = await connectClient(bridge);
      await client.close();
      const [helper] = childrenOf(bridge.proc.pid!).filter((child) => child.argv.includes('--jail-helper'));
      expect(helper, 'a helper beside the bridge once it serves, no CLI spawned').toBeDefined();
      expect(hello.isolation?.mode).toBe('uid+namespace');
      const uid = hello.isolation!.cliUid!;
      // init is on its way once the hello is out; the helper takes the uid as it reads it (a hang guard, not a timing).
      for (let i = 0; i < 500 && idsOf(helper!.pid, 'Uid') !== `${uid} ${uid} ${uid} ${uid}`; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(idsOf(helper!.pid, 'Uid')).toBe(`${uid} ${uid} ${uid} ${uid}`);
    } finally {
      await bridge.kill('SIGTERM');
    }
  });
});

describe.skipIf(!canNamespace)('a jailed CLI whose parent is SIGKILLed', () => {
  /**
   * A CLI that ignores stdin EOF, SIGINT, SIGTERM and SIGHUP (the fixture's --hang) in a root bridge's jail, not
   * kept (its parent the bridge) or kept (its parent its keeper); the parent is SIGKILLed, and no process with
   * the turn's process mark may be left (its own value of the suite's mark: scripts/leftover-processes.mjs).
   */
  async function parentKilled(kept: boolean): Promise<void> {
    const bridge = await startBridge();
    const mark = `jail-lifetime-${randomBytes(6).toString('hex')}`;
    try {
      const { client, hello } = await connectClient(bridge);
      expect(hello.isolation?.mode).toBe('uid+namespace');
      await client.attach(hello.lastSeq);
      const launch = fixtureLaunch(['--json', '--lines', '1', '--hang'], { env: { [PROCESS_MARK_ENV]: mark }, ...(kept ? { survive: true } : {}) });
      await client.request({ type: 'start', id: 's', turnId: 't', launch });
      const spawned = await client.waitForRecord((r) => r.kind === 'spawn');
      await client.waitForRecord((r) => r.kind === 'stdout' && (r.data as { text: string }).text.includes('"hang"'));
      const running = markedProcesses(mark).map((p) => p.cmdline);
      expect(running.some((cmdline) => cmdline.includes('--hang')), running.join('\n')).toBe(true);
      const parent = kept ? 'its keeper' : 'the bridge';
      expect(running.some((cmdline) => cmdline.startsWith('/bin/sh -c')), `no shell between ${parent} and bubblewrap:\n${running.join('\n')}`).toBe(false);
      if (kept) process.kill(Number(readFileSync(join(bridge.stateDir, 'keepers', (spawned.data as { keeper: string }).keeper, 'keeper.pid'), 'utf8')), 'SIGKILL');
      else await bridge.kill('SIGKILL');
      // A hang guard, not a timing: the jail goes as the kernel delivers bubblewrap's parent-death signal.
      const left = await leftoverProcesses(mark, { polls: 500, everyMs: 10 });
      expect(left.map((p) => p.cmdline), `left after ${parent} was SIGKILLed`).toEqual([]);
      if (kept) await client.close();
    } finally {
      killAll(markedProcesses(mark));
      await bridge.kill('SIGKILL');
    }
  }

  it('started as its bridge died, before bubblewrap armed its parent-death signal: the jail helper ends it as the bridge goes', { timeout: 60_000 }, async () => {
    if ('error' in srt) throw new Error(srt.error);
    const project = tempDir('hb-helper-project-');
    const mark = `jail-orphan-${randomBytes(6).toString('hex')}`;
    const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: 9, socksProxyPort: 9 };
    const filesystem = { denyRead: [], allowRead: [], allowWrite: [project], denyWrite: [] };
    const helper = new JailHelper({ bridgeFile: bridgeBundle, srtIndex: join(srt.pkg, 'dist', 'index.js'), config: { network, filesystem } });
    try {
      const wrapped = await helper.wrap('sleep 600', filesystem, project);
      helper.started();
      // An orphan from its start, as a jail is whose bridge was SIGKILLed between the fork and bubblewrap's prctl:
      // its shell exits at once, so nothing it could watch is its parent.
      spawnSync('/bin/sh', ['-c', `(${wrapped}) </dev/null >/dev/null 2>&1 &`], { cwd: project, env: { ...process.env, [PROCESS_MARK_ENV]: mark } });
      const sleeping = (): string[] => markedProcesses(mark).map((p) => p.cmdline);
      // Counted looks until the jail runs its command (a hang guard, not a timing).
      for (let i = 0; i < 500 && !sleeping().includes('sleep 600'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(sleeping(), 'the orphaned jail runs').toContain('sleep 600');
      helper.close(); // what its bridge's death does: the helper's stdin ends
      await helper.exited;
      const left = await leftoverProcesses(mark, { polls: 500, everyMs: 10 });
      expect(left.map((p) => p.cmdline), 'left after the helper went').toEqual([]);
    } finally {
      killAll(markedProcesses(mark));
      helper.close();
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('not kept, it ends with its SIGKILLed bridge, whatever it ignores: bubblewrap is the bridge\'s child (exec, --die-with-parent)', { timeout: 60_000 }, () => parentKilled(false));

  it('kept (launch survive), it ends with its SIGKILLed keeper, whom nothing could adopt it from: bubblewrap is the keeper\'s child', { timeout: 60_000 }, () => parentKilled(true));
});
