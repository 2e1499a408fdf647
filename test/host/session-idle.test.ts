// Idle policy (issue 15): a detached bridge with no turn running exits after
// idleExitMs and leaves its journal, so the next resume takes the replay rung
// and loses nothing; an attached bridge, or one running a turn, stays.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKit, runTurn, startTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('idle');
});
afterAll(async () => {
  await kit.cleanup();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
async function bridgePid(stateDir: string): Promise<number> {
  return (JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number }).pid;
}
/** Polls until `pid` is gone; the test's own timeout is the hang guard. */
async function exited(pid: number): Promise<number> {
  let polls = 0;
  while (alive(pid)) {
    polls++;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return polls;
}

describe('idle policy', () => {
  const idleExitMs = 400;

  it('a detached idle bridge exits after idleExitMs, keeps the journal, and the next resume replays', async () => {
    const { session } = await kit.start('idle-exit', { settings: { idleExitMs } });
    expect(textOf(await runTurn(session, 'before LINES:2'))).toBe('before LINES:2 #0\nbefore LINES:2 #1\n');
    const detached = (await session.doDetach()).data as { stateDir: string };
    const pid1 = await bridgePid(detached.stateDir);
    await exited(pid1);
    expect(existsSync(join(detached.stateDir, 'journal.ndjson')), 'the journal stays for replay').toBe(true);
    const resumed = await kit.resume('idle-exit', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: detached as never });
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
    expect(textOf(await runTurn(resumed.session, 'after LINES:1'))).toBe('after LINES:1 #0\n');
    await resumed.session.doDestroy();
  });

  it('attached: never exits; detached mid-turn: exits only after the turn ended; then a resume replays everything', async () => {
    const { session } = await kit.start('idle-turn', { settings: { idleExitMs } });
    await runTurn(session, 'warm LINES:1');
    const prompt = 'long LINES:30 INTERVAL:40';
    let detached: PromiseLike<unknown> | undefined;
    let stateData: { stateDir: string } | undefined;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 5 && !detached) detached = session.doDetach().then((s) => (stateData = s.data as { stateDir: string }));
    });
    await control.done;
    await detached;
    const state = stateData!;
    const pid = await bridgePid(state.stateDir);
    const polls = await exited(pid);
    expect(existsSync(join(state.stateDir, 'journal.ndjson')), 'the journal stays for replay').toBe(true);
    const resumed = await kit.resume('idle-turn', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: state as never });
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
    const rest: typeof parts = [];
    const next = await resumed.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await next.done;
    expect(textOf([...parts, ...rest]), 'the turn ran to its end while detached; every part once').toBe(
      Array.from({ length: 30 }, (_, i) => `${prompt} #${i}\n`).join(''),
    );
    // Attached for many idle periods: the bridge stays.
    const pid2 = await bridgePid(state.stateDir);
    await new Promise((resolve) => setTimeout(resolve, idleExitMs * 3));
    expect(alive(pid2), 'an attached bridge does not idle out').toBe(true);
    expect(textOf(await runTurn(resumed.session, 'after LINES:1'))).toBe('after LINES:1 #0\n');
    await resumed.session.doDestroy();
    console.log(`[figures] idle-exit idleExitMs=${idleExitMs} detached-bridges-exited=2 exit-polls=${polls} journal-kept=1 resumed-rung=replay attached-survived=1`);
  });
});
