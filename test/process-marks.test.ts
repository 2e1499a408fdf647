// The process mark (test/process-marks-setup.ts, scripts/leftover-processes.mjs) reaches every
// process a session starts, so a file's end can count them: the bridge, the CLI, the keeper of a
// surviving CLI; after destroy() none is left.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leftoverProcesses, markedProcesses, PROCESS_MARK_ENV } from '../scripts/leftover-processes.mjs';
import { createKit, runTurn, type Kit } from './host/session-helpers.ts';

const mark = process.env[PROCESS_MARK_ENV]!;
let kit: Kit;
/** A kept CLI that ignores stdin EOF, SIGINT, SIGTERM and SIGHUP (the fixture's --hang). */
let stubborn: Kit;
beforeAll(async () => {
  kit = await createKit('process-marks', { survive: true });
  stubborn = await createKit('process-marks-hang', { survive: true, extraArgs: ['--hang'] });
});
afterAll(async () => {
  await kit.cleanup();
  await stubborn.cleanup();
});

const others = () => markedProcesses(mark).filter((p) => p.pid !== process.pid);
/** Marked processes left once the session's own processes had their bounded time to exit. */
const leftOf = async (): Promise<string[]> => (await leftoverProcesses(mark, { polls: 150, exclude: [process.pid] })).map((p) => p.cmdline);

describe('process marks', () => {
  it('a child of the test carries the mark and is counted until it is gone', async () => {
    expect(mark, 'the setup file marked this worker').toMatch(/^\d+-[0-9a-f]{12}$/);
    const child = spawn('sleep', ['600'], { stdio: 'ignore', detached: true });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    expect(markedProcesses(mark).map((p) => p.pid)).toContain(child.pid);
    child.kill('SIGKILL');
    await exited;
    expect(markedProcesses(mark).map((p) => p.pid)).not.toContain(child.pid);
  });

  it('the bridge, the CLI and its keepers carry it; after destroy() none is left', async () => {
    const { session } = await kit.start('marks');
    await runTurn(session, 'hello LINES:1');
    const running = others();
    const cmdlines = running.map((p) => p.cmdline);
    expect(cmdlines.some((c) => /bridge\.mjs/.test(c) && !/--keeper/.test(c)), `a bridge among:\n${cmdlines.join('\n')}`).toBe(true);
    expect(cmdlines.some((c) => /fixture-cli\.mjs/.test(c)), 'the CLI').toBe(true);
    expect(cmdlines.some((c) => /--keeper/.test(c)), 'a keeper').toBe(true);
    await session.doDestroy();
    const left = await leftOf();
    expect(left).toEqual([]);
    console.log(`[figures] process-marks: marked while running=${running.length} left after destroy=${left.length}`);
  });

  it.each(['stop', 'idle exit'] as const)('after %s, a kept CLI that ignores stdin EOF and SIGTERM is gone with everything else', async (how) => {
    const { session } = await stubborn.start(`hang-${how.replace(' ', '-')}`, how === 'idle exit' ? { settings: { idleExitMs: 300 } } : {});
    await runTurn(session, 'hello LINES:1');
    expect(others().some((p) => /fixture-cli\.mjs.*--hang/.test(p.cmdline)), 'the stubborn CLI runs').toBe(true);
    if (how === 'stop') await session.doStop();
    else await session.doDetach(); // no host, no turn: the bridge exits after idleExitMs on its own
    expect(await leftOf()).toEqual([]);
  });
});
