// Fencing (issue 15 item 2): at most one host drives a session. Two hosts
// resume from the same state: against a live bridge the second fails fast with
// the typed `fenced` error and delivers nothing, the first is never displaced;
// against a dead bridge the one whose bridge lost the state-dir lock reads the
// winner's address and token from the state dir (no minutes of probing a dead
// port), and again exactly one drives.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createKit, runTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('fencing');
});
afterAll(async () => {
  await kit.cleanup();
});

const deltas = (parts: HarnessV1StreamPart[]) => parts.filter((p) => p.type === 'text-delta').length;
type Outcome = { parts: HarnessV1StreamPart[]; error: { code?: string } | null };

/** One prompt turn; the error (from doPromptTurn or its done) instead of a throw. */
async function drive(session: Awaited<ReturnType<Kit['resume']>>['session'], prompt: string): Promise<Outcome> {
  const parts: HarnessV1StreamPart[] = [];
  try {
    const control = await session.doPromptTurn({ prompt, emit: (p) => parts.push(p) });
    await control.done;
    return { parts, error: null };
  } catch (error) {
    return { parts, error: error as { code?: string } };
  }
}

describe('fencing', () => {
  const figures: string[] = [];
  afterAll(() => console.log(`[figures] fencing ${figures.join(' ')}`));

  it('live bridge: the second resumer of one state fails fast with fenced; the first runs its turn undisturbed', async () => {
    const { session } = await kit.start('live');
    await runTurn(session, 'warm LINES:1');
    const state: HarnessV1ResumeState = await session.doDetach();
    const first = await kit.resume('live', state);
    const second = await kit.resume('live', state);
    const prompt = 'first LINES:2000 INTERVAL:1';
    const parts: HarnessV1StreamPart[] = [];
    const control = await first.session.doPromptTurn({ prompt, emit: (p) => parts.push(p) });
    while (deltas(parts) < 100) await new Promise((resolve) => setTimeout(resolve, 10));
    const loser = await drive(second.session, 'second LINES:5');
    expect(loser.error?.code).toBe('fenced');
    expect(deltas(loser.parts), 'the loser delivered nothing').toBe(0);
    await control.done;
    expect(deltas(parts), 'the winner was never displaced').toBe(2000);
    // The winner's own next turn still runs.
    expect(deltas((await drive(first.session, 'again LINES:3')).parts)).toBe(3);
    figures.push(`live:winner-deltas=${deltas(parts)},loser-deltas=${deltas(loser.parts)},loser=${loser.error?.code}`);
    await first.session.doDestroy();
  });

  it('dead bridge: both resumers reach the one new bridge without waiting out the lock; exactly one drives', async () => {
    const { session } = await kit.start('dead');
    await runTurn(session, 'warm LINES:1');
    const state = await session.doDetach();
    const { pid } = JSON.parse(await readFile(join((state.data as { stateDir: string }).stateDir, 'bridge.json'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL');
    while ((() => { try { process.kill(pid, 0); return true; } catch { return false; } })()) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    const [a, b] = await Promise.all([kit.resume('dead', state), kit.resume('dead', state)]);
    const reachedMs = Date.now() - started;
    const rungs = [a, b].map((r) => (r.session as unknown as { rungs: string[] }).rungs.join('>'));
    const outcomes = await Promise.all([drive(a.session, 'a LINES:300 INTERVAL:2'), drive(b.session, 'b LINES:300 INTERVAL:2')]);
    const winners = outcomes.filter((o) => o.error === null);
    const losers = outcomes.filter((o) => o.error !== null);
    expect(winners).toHaveLength(1);
    expect(deltas(winners[0]!.parts)).toBe(300);
    expect(losers.map((o) => o.error?.code)).toEqual(['fenced']);
    expect(deltas(losers[0]!.parts)).toBe(0);
    figures.push(`dead:rungs=${rungs.join('|')},reach-ms=${reachedMs},winners=1,losers=fenced`);
    await (outcomes[0]!.error === null ? a : b).session.doDestroy();
  });
});
