// The journal is gone, or older than the host's cursor (a sandbox restored from
// an earlier snapshot, a lost disk): the session detects it by journal id and
// seq at resume, continues in a new journal epoch from the journal's end, and
// re-drives the in-flight turn from its own state, marked recomputed. Never a
// loop of cursor-ahead (issue 15 item 3).
import { execFileSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createKit, runTurn, startTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('journal-lost');
});
afterAll(async () => {
  await kit.cleanup();
});

type Data = { stateDir: string; cursor: number; journalId: string };
const lines = (prompt: string, n: number) => Array.from({ length: n }, (_, i) => `${prompt} #${i}\n`).join('');
const rungsOf = (session: unknown) => (session as { rungs: string[] }).rungs;
const isMarker = (p: HarnessV1StreamPart) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message));

/** A snapshot keeps owners and modes (the CLI's uid owns its areas of the state dir: docs/security.md). */
const copyTree = (from: string, to: string) => execFileSync('cp', ['-a', from, to]);

async function killBridge(stateDir: string): Promise<void> {
  const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A turn suspended mid-way: the state a host keeps. */
async function suspendMidTurn(session: Awaited<ReturnType<Kit['start']>>['session'], prompt: string, after: number) {
  let suspending: PromiseLike<HarnessV1ResumeState> | undefined;
  const { parts, control } = await startTurn(session, prompt, (_p, n) => {
    if (n === after && !suspending) suspending = session.doSuspendTurn();
  });
  await control.done;
  return { parts, state: await suspending! };
}

describe('journal gone or behind', () => {
  const figures: string[] = [];
  afterAll(() => console.log(`[figures] journal-lost ${figures.join(' ')}`));

  it('behind (sandbox restored from an earlier snapshot): the turn in flight is recomputed, marked, and the session goes on', async () => {
    const { session } = await kit.start('behind');
    await runTurn(session, 'one LINES:5');
    const early = (await session.doDetach()).data as Data;
    const snapshot = `${early.stateDir}.snapshot`;
    copyTree(early.stateDir, snapshot);
    const second = await kit.resume('behind', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: early as never });
    await runTurn(second.session, 'two LINES:20');
    const prompt = 'three LINES:40 INTERVAL:10';
    const { parts, state } = await suspendMidTurn(second.session, prompt, 10);
    const late = state.data as Data;
    await killBridge(late.stateDir);
    await rm(late.stateDir, { recursive: true, force: true });
    copyTree(snapshot, late.stateDir);

    const third = await kit.resume('behind', state);
    const rest: HarnessV1StreamPart[] = [];
    const control = await third.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await control.done;
    expect(rungsOf(third.session)).toEqual(['replay', 'rerun']);
    const all = [...parts, ...rest];
    const marker = all.findIndex(isMarker);
    expect(marker, 'a recomputed marker where the host-side rerun begins').toBeGreaterThan(0);
    expect(textOf(all.slice(0, marker))).toBe(lines(prompt, textOf(all.slice(0, marker)).split('\n').length - 1));
    expect(textOf(all.slice(marker))).toBe(lines(prompt, 40));
    expect(textOf(await runTurn(third.session, 'four LINES:2')), 'no cursor-ahead after the rebase').toBe(lines('four LINES:2', 2));
    const detached = (await third.session.doDetach()).data as Data;
    // (journal id, seq) names one record forever: the restored journal got a new id before any new record.
    expect(detached.journalId, 'a new journal id for the journal found behind').not.toBe(late.journalId);
    expect(detached.cursor, 'seqs the lost journal used were used again').toBeGreaterThan(late.cursor);
    expect(kit.diagnostics.some((d) => d.sessionId === 'behind' && d.attrs?.journalId === detached.journalId && d.attrs?.before === late.journalId)).toBe(true);
    const report = kit.diagnostics.find((d) => d.sessionId === 'behind' && d.attrs?.journal === 'behind');
    expect(report?.level).toBe('warn');
    figures.push(`behind:cursor=${late.cursor},journal-end=${String(report?.attrs?.lastSeq)}`);
    const again = await kit.resume('behind', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: detached as never });
    expect(rungsOf(again.session)).toEqual(['attach']);
    expect(textOf(await runTurn(again.session, 'five LINES:1'))).toBe(lines('five LINES:1', 1));
    await again.session.doDestroy();
    await rm(snapshot, { recursive: true, force: true });
  });

  it('gone (lost disk): a detached session and a suspended turn both go on in a new journal, the turn recomputed and marked', async () => {
    const { session } = await kit.start('gone');
    await runTurn(session, 'one LINES:5');
    const prompt = 'two LINES:30 INTERVAL:10';
    const { parts, state } = await suspendMidTurn(session, prompt, 8);
    const data = state.data as Data;
    await killBridge(data.stateDir);
    await rm(data.stateDir, { recursive: true, force: true });

    const resumed = await kit.resume('gone', state);
    const rest: HarnessV1StreamPart[] = [];
    const control = await resumed.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await control.done;
    expect(rungsOf(resumed.session)).toEqual(['rerun']);
    const all = [...parts, ...rest];
    const marker = all.findIndex(isMarker);
    expect(marker).toBeGreaterThan(0);
    expect(textOf(all.slice(marker))).toBe(lines(prompt, 30));
    expect(textOf(await runTurn(resumed.session, 'three LINES:2'))).toBe(lines('three LINES:2', 2));
    const detached = (await resumed.session.doDetach()).data as Data;
    expect(detached.journalId, 'a new journal').not.toBe(data.journalId);
    await killBridge(detached.stateDir);
    await rm(detached.stateDir, { recursive: true, force: true });
    // Gone again, with no turn in flight: the next prompt just runs.
    const again = await kit.resume('gone', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: detached as never });
    expect(textOf(await runTurn(again.session, 'four LINES:1'))).toBe(lines('four LINES:1', 1));
    await again.session.doDestroy();
    figures.push(`gone:cursor=${data.cursor} recomputed-turns=1 cursor-ahead-loops=0`);
  });
});
