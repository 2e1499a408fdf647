// A bridge that holds its state dir but does not answer (stalled, or behind a
// port proxy's bad spell) must never be replaced by a second bridge on the
// same journal: the new one is refused by the state-dir lock (exit 75) and the
// resume keeps probing the live one, then attaches.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKit, runTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('locked');
});
afterAll(async () => {
  await kit.cleanup();
});

describe('state-dir lock and the ladder', () => {
  it('a second bridge on a live bridge’s state dir exits 75 and names the holder; the first keeps working', async () => {
    const { session } = await kit.start('second');
    await runTurn(session, 'x LINES:1');
    const state = (await session.doDetach()).data as { stateDir: string };
    const bridge = spawn(process.execPath, ['dist/bridge.mjs', '--state-dir', state.stateDir, '--port', '0'], {
      env: { ...process.env, HARNESS_BRIDGE_TOKEN: 'another-token-of-enough-length' },
    });
    let stderr = '';
    bridge.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => bridge.once('exit', resolve));
    expect(code).toBe(75);
    expect(stderr).toMatch(/held by a live bridge \(pid \d+/);
    const resumed = await kit.resume('second', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: state });
    expect(textOf(await runTurn(resumed.session, 'still mine LINES:1'))).toBe('still mine LINES:1 #0\n');
    await resumed.session.doDestroy();
  });

  it('a stalled bridge is waited for, not replaced: the resume attaches once it answers again', async () => {
    const { session } = await kit.start('stalled');
    await runTurn(session, 'x LINES:1');
    const detached = await session.doDetach();
    const stateDir = (detached.data as { stateDir: string }).stateDir;
    const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGSTOP');
    setTimeout(() => process.kill(pid, 'SIGCONT'), 4_000);
    const resumed = await kit.resume('stalled', detached);
    expect((resumed.session as unknown as { rungs: string[] }).rungs, 'attached to the same bridge, no replacement').toEqual(['attach']);
    const again = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
    expect(again.pid, 'bridge.json still names the original bridge').toBe(pid);
    expect(textOf(await runTurn(resumed.session, 'after the stall LINES:1'))).toBe('after the stall LINES:1 #0\n');
    await resumed.session.doDestroy();
  });
});
