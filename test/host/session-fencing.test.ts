// Fencing (issue 15 item 2): at most one host drives a session. Two hosts
// resume from the same state: against a live bridge the second fails fast with
// the typed `fenced` error and delivers nothing, the first is never displaced;
// against a dead bridge the one whose bridge lost the state-dir lock reads the
// winner's address and token from the state dir (no minutes of probing a dead
// port), and again exactly one drives.
// The winner's turn ends only once the loser has been refused (it waits on a
// host tool the test answers then), so which host wins may depend on the
// machine's load, but that exactly one does never does.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeState, HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { controlLater, createKit, runTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('fencing');
});
afterAll(async () => {
  await kit.cleanup();
});

const deltas = (parts: HarnessV1StreamPart[]) => parts.filter((p) => p.type === 'text-delta').length;
type Outcome = { parts: HarnessV1StreamPart[]; error: { code?: string } | null };

const gate: HarnessV1ToolSpec = { name: 'gate', description: 'holds the turn open', inputSchema: { type: 'object', properties: {} } };

/**
 * One prompt turn; the error (from doPromptTurn or its done) instead of a throw. A call of the `gate`
 * tool is answered once `open` resolves, so a turn that reaches it stays running until then; `atGate`
 * is called when it does.
 */
async function drive(
  session: Awaited<ReturnType<Kit['resume']>>['session'],
  prompt: string,
  open: Promise<unknown> = Promise.resolve(),
  atGate: () => void = () => {},
): Promise<Outcome> {
  const parts: HarnessV1StreamPart[] = [];
  try {
    let controlled!: (control: { submitToolResult(result: { toolCallId: string; output: unknown }): PromiseLike<void> }) => void;
    const controlling = new Promise<Parameters<typeof controlled>[0]>((resolve) => (controlled = resolve));
    const control = await session.doPromptTurn({
      prompt,
      tools: [gate],
      emit: (part) => {
        parts.push(part);
        if (part.type !== 'tool-call') return;
        atGate();
        void Promise.all([controlling, open]).then(([c]) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'open' }));
      },
    });
    controlled(control);
    await control.done;
    return { parts, error: null };
  } catch (error) {
    return { parts, error: error as { code?: string } };
  }
}

/** Resolves once one of the outcomes has settled with an error: the loser has been refused. */
function refused(outcomes: Array<Promise<Outcome>>): Promise<void> {
  return new Promise((resolve) => {
    for (const outcome of outcomes) void outcome.then((o) => o.error !== null && resolve());
  });
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
    let opened!: () => void;
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    const winning = drive(first.session, 'first LINES:100 TOOL:gate', new Promise<void>((resolve) => (opened = resolve)), reached);
    // The first turn waits at its gate, running, until the second resumer has been refused.
    await Promise.race([atGate, winning]);
    const loser = await drive(second.session, 'second LINES:5');
    opened();
    const winner = await winning;
    expect(loser.error?.code).toBe('fenced');
    expect(deltas(loser.parts), 'the loser delivered nothing').toBe(0);
    expect(winner.error, 'the winner was never displaced').toBeNull();
    const parts = winner.parts;
    expect(deltas(parts), 'the winner was never displaced').toBe(100);
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
    // Whichever turn starts waits at its gate, running, until the other resumer has been refused; were both
    // let in (two bridges on one state dir), both reach their gates, which then open so the count below fails.
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const atGate: Array<() => void> = [];
    const reached = [0, 1].map((i) => new Promise<void>((resolve) => (atGate[i] = resolve)));
    const pending = [drive(a.session, 'a LINES:300 TOOL:gate', open, atGate[0]), drive(b.session, 'b LINES:300 TOOL:gate', open, atGate[1])];
    void Promise.race([refused(pending), Promise.all(reached)]).then(opened);
    const outcomes = await Promise.all(pending);
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

describe('fencing from a checkpoint state', () => {
  it('two hosts resume one mid-turn checkpoint (a host tool call unanswered): the loser delivers 0 parts before fenced', async () => {
    let checkpoint: HarnessV1ResumeState | undefined;
    const { session } = await kit.start('checkpoint', { settings: { checkpointEveryRecords: 100_000, onCheckpoint: (state) => (checkpoint = state) } });
    await runTurn(session, 'warm LINES:1');
    let atCall!: () => void;
    const called = new Promise<void>((resolve) => (atCall = resolve));
    await session.doPromptTurn({ prompt: 'held LINES:3 TOOL:gate', tools: [gate], emit: (part) => void (part.type === 'tool-call' && atCall()) });
    await called;
    const state = checkpoint!; // cut at the tool call (a milestone), the call unanswered
    expect((state.data as { turn?: { redeliver: string[] } }).turn?.redeliver).toHaveLength(1);
    await session.doSuspendTurn(); // the first host is gone; the turn waits at the bridge
    const [a, b] = [await kit.resume('checkpoint', state), await kit.resume('checkpoint', state)];
    const outcomes = await Promise.all(
      [a, b].map(async ({ session: s }): Promise<Outcome> => {
        const parts: HarnessV1StreamPart[] = [];
        try {
          const later = controlLater();
          const control = later.resolve(
            await s.doContinueTurn({
              emit: (part) => {
                parts.push(part);
                if (part.type === 'tool-call') later.use((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'open' }).then(undefined, () => undefined));
              },
            }),
          );
          await control.done;
          return { parts, error: null };
        } catch (error) {
          return { parts, error: error as { code?: string } };
        }
      }),
    );
    const losers = outcomes.filter((o) => o.error !== null);
    expect(outcomes.filter((o) => o.error === null), 'exactly one winner').toHaveLength(1);
    expect(losers.map((o) => o.error?.code)).toEqual(['fenced']);
    expect(losers[0]!.parts.map((p) => p.type), 'the loser delivered nothing').toEqual([]);
    await (outcomes[0]!.error === null ? a : b).session.doDestroy();
  });
});
