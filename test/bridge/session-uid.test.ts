// Session uids (bridge/jail/session-uid.ts; docs/security.md#session-uid): concurrent bridges each get
// a uid of their own; the same state dir gets its uid back; a dead bridge's slot is taken back only when
// nothing runs under its uid, and then what that uid owned (the old session's areas, its handed-over
// project, its files in a shared dir) goes back to the owners before the new session gets the uid. Root
// only (useradd, chown). A test range of uids and a lease dir of the test's own, not the machine's pool.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lookupUser } from '../../bridge/jail/agent-user.ts';
import { resolveIsolation } from '../../bridge/jail/isolation.ts';
import { leaseSessionUid, type SessionUidOptions } from '../../bridge/jail/session-uid.ts';
import { launchSpecSchema } from '../../protocol/v1/index.ts';
import { repoRoot, tempDir } from './helpers.ts';

const asRoot = process.getuid?.() === 0;
const holderScript = join(repoRoot, 'test/bridge/session-uid/holder.ts');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

type Held = { child: ChildProcess; slot: number; uid: number; name: string };

/** `wrap`: a command the holder runs under (e.g. `unshare` into a user namespace). */
function hold(options: SessionUidOptions, stateDir: string, project?: string, wrap: string[] = []): Promise<Held> {
  const argv = [process.execPath, '--import', 'tsx', holderScript, JSON.stringify(options), stateDir, ...(project ? [project] : [])];
  const child = spawn([...wrap, ...argv][0]!, [...wrap, ...argv].slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (!out.includes('\n')) return;
      const line = JSON.parse(out.split('\n')[0]!) as { slot: number; uid: number; name: string } | { error: string };
      if ('error' in line) reject(new Error(line.error));
      else resolve({ child, ...line });
    });
    child.once('exit', (code) => reject(new Error(`holder exited ${code} before leasing`)));
  });
}

function gone(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

function pool(): SessionUidOptions & { shared: string } {
  const root = tempDir('hb-session-uid-');
  const shared = join(root, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o1777);
  return { dir: join(root, 'leases'), base: 1_899_000_000, slots: 8, prefix: 'hb-test-uid-', sharedDirs: [shared], shared };
}

function stateDirIn(root: string, name: string): string {
  const dir = join(root, name, '.harness-bridge', 'sessions', 's');
  mkdirSync(dir, { recursive: true, mode: 0o711 });
  return dir;
}

describe.skipIf(!asRoot)('session uids: one uid per session, leased from a pool and taken back safely', () => {
  it('six bridges leasing at once get six different uids (each with its passwd entry); a state dir gets its own uid back', { timeout: 120_000 }, async () => {
    const options = pool();
    const root = tempDir('hb-session-uid-sessions-');
    const states = Array.from({ length: 6 }, (_, i) => stateDirIn(root, `s${i}`));
    const held = await Promise.all(states.map((state) => hold(options, state)));
    const uids = held.map((h) => h.uid);
    console.log(`[figures] session-uid concurrent=6 distinct=${new Set(uids).size} uids=${uids.join(',')}`);
    expect(new Set(uids).size).toBe(6);
    for (const h of held) expect(h.name).toBe(`hb-test-uid-${h.uid - 1_899_000_000}`);
    // The next bridge of s2 (a restart) gets s2's uid back, while the others still hold theirs.
    held[2]!.child.kill('SIGKILL');
    await gone(held[2]!.child);
    const again = await leaseSessionUid(states[2]!, options);
    expect(again.ok && again.uid.user.uid).toBe(held[2]!.uid);
    // All die: five stale leases (s2's is this process's now). Six new sessions at once: five take one back each
    // (under the pool's lock: no two the same), one gets a new slot.
    for (const h of held) h.child.kill('SIGKILL');
    await Promise.all(held.map((h) => gone(h.child)));
    const next = await Promise.all(states.map((_, i) => hold(options, stateDirIn(root, `t${i}`))));
    const reused = next.map((h) => h.uid);
    console.log(`[figures] session-uid reclaimed-concurrently=6 distinct=${new Set(reused).size} uids=${reused.join(',')}`);
    expect(new Set(reused).size).toBe(6);
    expect(reused.filter((uid) => uids.includes(uid) && uid !== held[2]!.uid).length).toBe(5);
    for (const h of next) h.child.stdin!.end();
    await Promise.all(next.map((h) => gone(h.child)));
  });

  it('a dead bridge\'s uid is taken back only once nothing runs under it, and then gives everything back first', { timeout: 120_000 }, async () => {
    const options = pool();
    const root = tempDir('hb-session-uid-sessions-');
    const stateA = stateDirIn(root, 'a');
    const project = join(root, 'a-project');
    mkdirSync(join(project, 'sub'), { recursive: true });
    const a = await hold(options, stateA, project);
    // What session a's CLI made: its home area, its project files, a file in a shared dir; and a project file of someone else.
    mkdirSync(join(stateA, 'home'));
    writeFileSync(join(stateA, 'home', 'secret'), 'a');
    writeFileSync(join(project, 'sub', 'made'), 'a');
    writeFileSync(join(project, 'other'), 'x');
    writeFileSync(join(options.shared, 'left'), 'a');
    for (const path of [join(stateA, 'home'), join(stateA, 'home', 'secret'), project, join(project, 'sub'), join(project, 'sub', 'made'), join(options.shared, 'left')]) chownSync(path, a.uid, a.uid);
    chownSync(join(project, 'other'), 7777, 7777);
    chmodSync(project, 0o700); // closed to other uids while handed over (cli-jail.ts)
    // a's bridge dies; a's kept CLI still runs under its uid: the slot is not taken.
    const kept = spawn('sleep', ['600'], { uid: a.uid, gid: a.uid, stdio: 'ignore' });
    children.push(kept);
    a.child.kill('SIGKILL');
    await gone(a.child);
    const b = await leaseSessionUid(stateDirIn(root, 'b'), options);
    expect(b.ok && b.uid.user.uid).not.toBe(a.uid);
    expect(lstatSync(join(stateA, 'home', 'secret')).uid).toBe(a.uid);
    // Once it ends, the next session gets a's slot (the lowest free), after everything of a went back.
    kept.kill('SIGKILL');
    await gone(kept);
    const c = await leaseSessionUid(stateDirIn(root, 'c'), options);
    expect(c.ok && c.uid.user.uid).toBe(a.uid);
    expect(c.ok && c.uid.reclaimed?.stateDir).toBe(stateA);
    const owners = [join(stateA, 'home'), join(stateA, 'home', 'secret'), project, join(project, 'sub', 'made'), join(project, 'other'), join(options.shared, 'left')].map((p) => lstatSync(p).uid);
    console.log(`[figures] session-uid reclaim uid=${a.uid} given-back=${c.ok ? c.uid.reclaimed?.changed : 'n/a'} owners-after=${owners.join(',')}`);
    expect(owners).toEqual([0, 0, 4242, 4242, 7777, 0]);
    expect((lstatSync(project).mode & 0o7777).toString(8)).toBe('755');
  });

  it('in a user namespace that does not map the range (a rootless container), no uid is leased, and the reason says so', { timeout: 60_000 }, async () => {
    const root = tempDir('hb-session-uid-unmapped-');
    chmodSync(root, 0o755);
    // unshare -r maps root alone: every session uid is unmapped there, so a CLI could never be switched to one.
    const held = hold({ ...pool(), dir: join(root, 'leases') }, stateDirIn(root, 'u'), undefined, ['unshare', '--user', '--map-root-user']);
    await expect(held).rejects.toThrow(/are not mapped in this user namespace/);
  });

  it('a root bridge in mode uid runs its CLI as its session\'s uid and hands it the project closed to other uids; without a pool it falls back on harness-agent and says so', { timeout: 60_000 }, async () => {
    const options = pool();
    const root = tempDir('hb-session-uid-sessions-');
    const stateDir = stateDirIn(root, 'j');
    const project = join(root, 'j-project');
    mkdirSync(project, { mode: 0o755 });
    const log = { info: () => undefined, warn: () => undefined };
    const common = { requested: 'uid' as const, required: false, cliUser: { session: true as const }, bridgeFile: join(repoRoot, 'dist', 'bridge.mjs'), namespace: async () => ({ ok: false as const, reason: 'not asked' }), log };
    const jail = await resolveIsolation({ ...common, stateDir, sessionUids: options });
    const uid = jail.report.cliUid!;
    expect(uid >= 1_899_000_000 && uid < 1_899_000_008, `cliUid ${uid}`).toBe(true);
    const jailed = await jail.prepare(launchSpecSchema.parse({ argv: [process.execPath, '-e', ''], cwd: project }));
    expect(jailed.ok && jailed.credentials).toEqual({ uid, gid: uid });
    expect([lstatSync(project).uid, (lstatSync(project).mode & 0o777).toString(8)]).toEqual([uid, '700']);
    const lease = JSON.parse(readFileSync(join(options.dir!, String(uid - 1_899_000_000)), 'utf8')) as { given: unknown[] };
    expect(lease.given).toEqual([{ path: project, uid: 0, gid: 0, mode: 0o755 }]);

    // A lease dir that cannot be made (its parent is a file; not under /proc, where a recursive mkdir never returns on Node 20).
    writeFileSync(join(root, 'not-a-dir'), '');
    const fallback = await resolveIsolation({ ...common, stateDir: stateDirIn(root, 'k'), sessionUids: { ...options, dir: join(root, 'not-a-dir', 'leases') } });
    expect(fallback.report.cliUid).toBe(lookupUser('harness-agent')?.uid ?? -1);
    expect(fallback.report.reasons.join('; ')).toContain("no uid of the session's own");
  });
});
