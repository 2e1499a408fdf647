// A full disk under the journal, for real: the state dir lives on a small tmpfs (root only; the
// file skips with its reason where mount is not permitted). docs/bridge-internals.md#disk-full:
// - the bridge stops reading the CLI (the CLI is still alive, blocked on its pipe, when space is
//   freed), tells the owner `error disk-full` naming ENOSPC, and once space returns the turn
//   completes with every line journaled exactly once (seqs counted: no gap, no duplicate);
// - past HARNESS_BRIDGE_DISK_FULL_EXIT_MS it exits 70, closing the owner's socket with 4005 and the
//   cause, so the host kit's channel fails at once (bridge-failed naming ENOSPC, no reconnect).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BridgeFrame, JournalRecord } from '../../protocol/v1/index.ts';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/index.ts';
import { createBridgeChannel } from '../../host/channel/index.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { connectClient, eventually, fixtureLaunch, seqProblem, startBridge, type RunningBridge, type TestClient } from './helpers.ts';

/** Mounts a tmpfs of `size` at a fresh dir; the reason it cannot, or the dir. */
function mountTmpfs(size: string): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'not root: cannot mount a tmpfs' };
  const dir = mkdtempSync(join(tmpdir(), 'hb-diskfull-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0711`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `mount -t tmpfs not permitted here: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}` };
  }
  return { dir };
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Writes zeros into `path` until the disk is full but `leaveBytes` (roughly); returns the bytes written. */
function fill(path: string, leaveBytes: number, freeBytes: () => number): number {
  const fd = openSync(path, 'w', 0o600);
  const chunk = Buffer.alloc(64 * 1024);
  let total = 0;
  try {
    while (freeBytes() - chunk.length > leaveBytes) total += writeSync(fd, chunk);
  } catch {
    // ENOSPC: full already
  } finally {
    closeSync(fd);
  }
  return total;
}

function freeBytesOf(dir: string): number {
  const out = execFileSync('df', ['-B1', '--output=avail', dir], { encoding: 'utf8' });
  return Number(out.trim().split('\n').pop());
}

const mount = mountTmpfs('16m');
const skip = 'skip' in mount ? mount.skip : undefined;
if (skip) console.log(`[figures] disk-full: skipped (${skip})`);

describe.skipIf(skip !== undefined)('the journal on a full disk (tmpfs)', () => {
  const root = 'dir' in mount ? mount.dir : '';
  const bridges: RunningBridge[] = [];
  const clients: TestClient[] = [];

  beforeAll(() => {
    chmodSync(root, 0o711);
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    for (const bridge of bridges) await bridge.kill();
    unmount(root);
  });

  it('back-pressure while full, disk-full reported, the turn completes once space returns: no gap, no duplicate', { timeout: 90_000 }, async () => {
    const stateDir = join(root, 'bp');
    mkdirSync(stateDir, { mode: 0o700 });
    const bridge = await startBridge({ stateDir, args: ['--isolation', 'none'] });
    bridges.push(bridge);
    const { client } = await connectClient(bridge);
    clients.push(client);
    await client.attach(0);
    const filler = join(root, 'filler');
    const filled = fill(filler, 256 * 1024, () => freeBytesOf(root));

    // ~10 MB of output onto ~256 KiB of space: the journal runs out of room mid-turn, and the CLI
    // cannot have finished by then (the bridge reads at most ~4 MiB ahead of a stalled write:
    // maxJournalPendingBytes plus one event-loop turn of pipe reads).
    const lines = 10_000;
    const ack = await client.request({ type: 'start', id: 'start', turnId: 't1', launch: fixtureLaunch(['--json', '--lines', String(lines), '--line-bytes', '1000']) });
    expect(ack.type).toBe('ack');
    const full = await client.waitFor<Extract<BridgeFrame, { type: 'error' }>>((frame) => frame.type === 'error' && frame.code === 'disk-full', 30_000);
    expect(full.message).toMatch(/ENOSPC/);
    const spawn = (await client.waitForRecord((record) => record.kind === 'spawn')) as Extract<JournalRecord, { kind: 'spawn' }>;
    const pid = spawn.data.pid;
    const deliveredAtFull = client.records().length;
    // The CLI is held back, not finished: nothing more arrives while the disk is full, and the CLI
    // is still alive (it would have printed all 4,000 lines in well under a second unpaused).
    expect(client.records().some((record) => record.kind === 'exit' || record.kind === 'turn-end')).toBe(false);
    expect(existsSync(`/proc/${pid}`)).toBe(true);

    rmSync(filler);
    const resumed = await client.waitFor<Extract<BridgeFrame, { type: 'diagnostic' }>>((frame) => frame.type === 'diagnostic' && frame.attrs?.code === 'disk-ok', 30_000);
    expect(resumed.level).toBe('info');
    await client.waitForRecord((record) => record.kind === 'turn-end' && record.turnId === 't1', 60_000);
    const records = client.records();
    const last = records.at(-1)!.seq;
    expect(seqProblem(records, 1, last)).toBeNull();
    const outLines = records.filter((record): record is Extract<JournalRecord, { kind: 'stdout' }> => record.kind === 'stdout' && record.turnId === 't1');
    const numbers = outLines.map((record) => JSON.parse(record.data.text) as { type: string; n: number }).filter((line) => line.type === 'line').map((line) => line.n);
    expect(numbers).toEqual(Array.from({ length: lines }, (_, i) => i));
    const end = records.find((record) => record.kind === 'turn-end')!;
    expect(end.data).toMatchObject({ reason: 'exit', code: 0 });
    await client.close();
    await bridge.kill();
    rmSync(stateDir, { recursive: true, force: true });
    console.log(
      `[figures] disk-full back-pressure: tmpfs 16 MiB, ${(filled / 1024) | 0} KiB filler; disk-full after ${deliveredAtFull} records, ` +
        `CLI alive at free; after free ${numbers.length}/${lines} lines in order, seqs 1..${last} no gap no duplicate`,
    );
  });

  it('past the disk-full exit bound the bridge exits 70 and the channel fails at once naming ENOSPC', { timeout: 60_000 }, async () => {
    const stateDir = join(root, 'exit');
    mkdirSync(stateDir, { mode: 0o700 });
    const bridge = await startBridge({ stateDir, args: ['--isolation', 'none'], env: { HARNESS_BRIDGE_DISK_FULL_EXIT_MS: '1500' } });
    bridges.push(bridge);
    const diagnostics: HarnessV1Diagnostic[] = [];
    const statuses: string[] = [];
    let records = 0;
    const channel = createBridgeChannel({
      url: bridge.url,
      token: bridge.token,
      cursor: 0,
      onRecords: (batch) => {
        records += batch.length;
      },
      onDiagnostic: (diagnostic) => diagnostics.push(diagnostic),
      onStatus: (status) => statuses.push(status.state),
    });
    await channel.whenLive();
    const filler = join(root, 'filler2');
    fill(filler, 128 * 1024, () => freeBytesOf(root));
    const ack = await channel.request({ type: 'start', id: 'start', turnId: 't1', launch: fixtureLaunch(['--json', '--lines', '4000', '--line-bytes', '1000']) } as never);
    expect(ack.type).toBe('ack');
    const error = await channel.closed;
    const exit = await bridge.exited;
    // A resume while the disk is still full (the ladder's replay rung) fails just as fast: the new
    // bridge cannot write its state files and exits before its ready line, naming ENOSPC on stderr,
    // which the kit's spawnBridge puts in its bridge-start-failed error.
    const restart = await startBridge({ stateDir, args: ['--isolation', 'none'] }).then(
      () => 'started',
      (failure: Error) => failure.message,
    );
    rmSync(filler);
    expect(restart).toMatch(/exited before ready \(70\).*ENOSPC/s);
    expect(error?.code).toBe('bridge-failed');
    expect(error?.message).toMatch(/ENOSPC/);
    expect(exit.code).toBe(70);
    expect(diagnostics.some((diagnostic) => /disk-full/.test(diagnostic.message) && /ENOSPC/.test(diagnostic.message))).toBe(true);
    const reconnects = statuses.filter((state) => state === 'reconnecting').length;
    expect(reconnects).toBe(0);
    console.log(`[figures] disk-full exit: bridge exit ${exit.code}, channel ${error?.code} after ${records} records, ${reconnects} reconnect attempts; message: ${error?.message}; a restart on the full disk: exit 70 before ready naming ENOSPC`);
  });
  it('a session resumed on a still-full disk fails up front with the typed disk-full, and resumes once space returns', { timeout: 90_000 }, async () => {
    const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
    const harness = createBridgeHarness(fixtureAdapter(), { probeTimeoutMs: 1_500 });
    const sandbox = await provider.createSession({ sessionId: 'full' });
    const workDir = join(sandbox.defaultWorkingDirectory, 'work');
    mkdirSync(workDir, { recursive: true });
    const session = await harness.doStart({ sessionId: 'full', sandboxSession: sandbox, sessionWorkDir: workDir });
    const first = await session.doPromptTurn({ prompt: 'one LINES:2', emit: () => undefined });
    await first.done;
    const state = await session.doDetach();
    const { stateDir } = state.data as { stateDir: string };
    const { pid } = JSON.parse(readFileSync(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL');
    await eventually(() => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    // Some space is left (a start's own files fit), less than a start needs for a turn's records.
    const filler = join(root, 'filler3');
    fill(filler, 256 * 1024, () => freeBytesOf(root));
    const failure = await harness
      .doStart({ sessionId: 'full', sandboxSession: await provider.resumeSession({ sessionId: 'full' }), sessionWorkDir: workDir, resumeFrom: state })
      .then(() => null, (error: { code?: string; message?: string }) => error);
    rmSync(filler);
    expect(failure?.code).toBe('disk-full');
    expect(failure?.message).toMatch(/ENOSPC/);
    const resumed = await harness.doStart({ sessionId: 'full', sandboxSession: await provider.resumeSession({ sessionId: 'full' }), sessionWorkDir: workDir, resumeFrom: state });
    const deltas: string[] = [];
    const again = await resumed.doPromptTurn({ prompt: 'two LINES:2', emit: (part) => void (part.type === 'text-delta' && deltas.push(part.delta)) });
    await again.done;
    expect(deltas).toHaveLength(2);
    await resumed.doDestroy();
    console.log(`[figures] disk-full resume: ${failure?.code} up front with 256 KiB free; resumed after space returned`);
  });
});
