// A session whose adapter opts into launch `survive`: the bridge is SIGKILLed
// mid-turn, a fresh host resumes, and the new bridge has re-adopted the CLI —
// the replay rung only, no rerun, no recomputed marker, and the parts are those
// of an uninterrupted run.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../host/sandbox/local/pids.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createKit, runTurn, startTurn, type Kit } from './session-helpers.ts';
import { blockProblem, joinSlices } from '../../host/testing/every-cut.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('survive', { survive: true });
});
afterAll(async () => {
  await kit.cleanup();
});

const recomputed = (parts: HarnessV1StreamPart[]) =>
  parts.some((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message)));

describe('session with a surviving CLI', () => {
  it('bridge SIGKILL mid-turn, resumed in a fresh host: the parts equal an uninterrupted run, with no recomputed marker', { timeout: 60_000 }, async () => {
    const prompt = 'survive LINES:120 INTERVAL:10';
    const reference = await kit.start('reference');
    const expected = await runTurn(reference.session, prompt);
    await reference.session.doDestroy();
    expect(expected.at(-1)?.type).toBe('finish');

    const { session } = await kit.start('adopted');
    let suspended: Promise<HarnessV1ResumeState> | null = null;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 30 && suspended === null) {
        suspended = (async () => {
          const state = await session.doSuspendTurn();
          const stateDir = (state.data as { stateDir: string }).stateDir;
          const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
          process.kill(pid, 'SIGKILL');
          return state;
        })();
      }
    });
    await control.done;
    const state = await suspended!;
    const resumed = await kit.resume('adopted', state);
    const rest: HarnessV1StreamPart[] = [];
    const control2 = await resumed.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await control2.done;
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
    const all = [...parts, ...rest];
    expect(recomputed(all)).toBe(false);
    // The continuation re-opens the text block cut open (docs/guarantees.md#ui): it stands alone; joined, nothing is twice.
    expect(blockProblem(rest)).toBeNull();
    expect(joinSlices([parts, rest])).toEqual(expected);
    expect(kit.diagnostics.some((d) => d.sessionId === 'adopted' && d.attrs?.rung === 'rerun')).toBe(false);
    // The adopted CLI serves the next turn too.
    const next = await runTurn(resumed.session, 'again LINES:3');
    expect(next.at(-1)?.type).toBe('finish');
    await resumed.session.doDestroy();
  });

  it('doDestroy with the bridge gone (SIGKILLed) still kills the surviving CLI and its keeper', { timeout: 60_000 }, async () => {
    const { session } = await kit.start('destroyed');
    let reached: () => void;
    const fifth = new Promise<void>((resolve) => (reached = resolve));
    const { control } = await startTurn(session, 'orphan LINES:400 INTERVAL:20', (_p, n) => {
      if (n === 5) reached();
    });
    await fifth;
    const suspended = await session.doSuspendTurn();
    await control.done;
    const stateDir = (suspended.data as { stateDir: string }).stateDir;
    const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
    const [keeperDir] = await readdir(join(stateDir, 'keepers'));
    const pidOf = async (name: string) => Number(await readFile(join(stateDir, 'keepers', keeperDir!, name), 'utf8'));
    const keeper = await pidOf('keeper.pid');
    const cli = await pidOf('cli.pid');
    process.kill(pid, 'SIGKILL');
    while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 10));
    expect([isAlive(keeper), isAlive(cli)], 'the keeper and its CLI outlive the bridge').toEqual([true, true]);
    // No bridge answers the destroy: the session removes the state itself (forceDestroy), keepers included.
    await session.doDestroy();
    for (let i = 0; i < 300 && (isAlive(keeper) || isAlive(cli)); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect([isAlive(keeper), isAlive(cli)], 'no keeper or CLI left after doDestroy').toEqual([false, false]);
  });
});
