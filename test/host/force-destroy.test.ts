// forceDestroy (doDestroy's fallback when no bridge acks) kills the pids its state files name only if
// each process started no later than its file was written: a pid the kernel handed out again since
// (pids wrap within minutes on a busy machine) is another process, perhaps another session's.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { forceDestroy } from '../../host/session/force-destroy.ts';
import { createKit, type Kit } from './session-helpers.ts';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A detached `sleep` (its own process group, as a bridge or a kept CLI is) and its exit. */
function sleeper(): { child: ChildProcess; gone: Promise<void> } {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, gone };
}

const kits: Kit[] = [];
afterAll(async () => {
  for (const kit of kits) await kit.cleanup();
});

async function stateDirOf(name: string): Promise<{ kit: Kit; run: Parameters<typeof forceDestroy>[0]; stateDir: string }> {
  const kit = await createKit(name);
  kits.push(kit);
  const sandbox = await kit.provider.createSession({ sessionId: name });
  const stateDir = join(sandbox.defaultWorkingDirectory, '.harness-bridge', 'sessions', name);
  await mkdir(join(stateDir, 'keepers', 'k1'), { recursive: true });
  return { kit, run: sandbox, stateDir };
}

describe('forceDestroy', () => {
  it('kills the bridge and the kept CLI its files name, and removes the state dir', { timeout: 30_000 }, async () => {
    const { run, stateDir } = await stateDirOf('fd-ours');
    const bridge = sleeper();
    const cli = sleeper();
    await writeFile(join(stateDir, 'bridge.json'), `${JSON.stringify({ type: 'bridge-ready', pid: bridge.child.pid })}\n`);
    await writeFile(join(stateDir, 'keepers', 'k1', 'cli.pid'), `${cli.child.pid}\n`);
    await forceDestroy(run, stateDir);
    await Promise.all([bridge.gone, cli.gone]);
    expect(bridge.child.signalCode).toBe('SIGKILL');
    expect(cli.child.signalCode).toBe('SIGKILL');
    expect(existsSync(stateDir)).toBe(false);
  });

  it('leaves a process alone whose pid its files name but which started after they were written (a recycled pid)', { timeout: 30_000 }, async () => {
    const { run, stateDir } = await stateDirOf('fd-recycled');
    const stranger = sleeper();
    const strangerGroup = sleeper();
    const hourAgo = new Date(Date.now() - 3_600_000);
    const files = [join(stateDir, 'bridge.json'), join(stateDir, 'keepers', 'k1', 'cli.pid'), join(stateDir, 'keepers', 'k1', 'keeper.pid')];
    await writeFile(files[0]!, `${JSON.stringify({ type: 'bridge-ready', pid: stranger.child.pid })}\n`);
    await writeFile(files[1]!, `${strangerGroup.child.pid}\n`);
    await writeFile(files[2]!, `${stranger.child.pid}\n`);
    for (const file of files) await utimes(file, hourAgo, hourAgo); // written an hour before these processes started
    try {
      await forceDestroy(run, stateDir);
      expect(alive(stranger.child.pid!), 'the process holding the recycled bridge pid lives').toBe(true);
      expect(alive(strangerGroup.child.pid!), 'the group holding the recycled CLI pid lives').toBe(true);
      expect(existsSync(stateDir)).toBe(false);
    } finally {
      stranger.child.kill('SIGKILL');
      strangerGroup.child.kill('SIGKILL');
    }
  });
});
