// A suspend that overlaps the start of a slice (doContinueTurn or doPromptTurn still under way, e.g. a
// request aborted as it began): once doSuspendTurn resolves, the host holds no connection to the bridge
// (nothing it started before the suspend opens one after it), and a fresh host continues from the
// state it returned: every part once.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { channelOf, createKit, runTurn, startTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('suspend-overlap');
});
afterAll(async () => {
  await kit.cleanup();
});

/** Continues `state` in fresh hosts until the turn ends; returns the parts. */
async function finish(sessionId: string, state: HarnessV1ResumeState): Promise<HarnessV1StreamPart[]> {
  const parts: HarnessV1StreamPart[] = [];
  const { session } = await kit.resume(sessionId, state);
  const control = await session.doContinueTurn({ emit: (part) => parts.push(part) });
  await control.done;
  await session.doDestroy();
  return parts;
}

const deltas = (parts: ReadonlyArray<HarnessV1StreamPart>) => parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta);

describe('a suspend overlapping the start of a slice', () => {
  it('doContinueTurn and doSuspendTurn in the same tick: no connection left open, and the next host gets every part once', { timeout: 60_000 }, async () => {
    const prompt = 'overlap-continue LINES:30 INTERVAL:5';
    const reference = await kit.start('overlap-continue-reference');
    const expected = deltas(await runTurn(reference.session, prompt));
    await reference.session.doDestroy();

    const first = await kit.start('overlap-continue');
    let suspended: Promise<HarnessV1ResumeState> | null = null;
    const before: HarnessV1StreamPart[] = [];
    const { control } = await startTurn(first.session, prompt, (part, count) => {
      before.push(part);
      if (count === 4 && suspended === null) suspended = Promise.resolve(first.session.doSuspendTurn());
    });
    await control.done;
    const state = await suspended!;

    const second = await kit.resume('overlap-continue', state);
    const during: HarnessV1StreamPart[] = [];
    const continued = Promise.resolve(second.session.doContinueTurn({ emit: (part) => during.push(part) }));
    const again = await second.session.doSuspendTurn();
    await continued.then((c) => c.done, () => undefined);
    expect(channelOf(second.session), 'a connection opened after the suspend resolved').toBeNull();

    const after = await finish('overlap-continue', again);
    expect([...deltas(before), ...deltas(during), ...deltas(after)]).toEqual(expected);
  });

  it('doPromptTurn and doSuspendTurn in the same tick: the suspend wins, the prompt is refused (suspended) and never reaches the bridge; no connection left open', { timeout: 60_000 }, async () => {
    const first = await kit.start('overlap-prompt');
    await runTurn(first.session, 'overlap-prompt-before LINES:2');
    const prompted = Promise.resolve(first.session.doPromptTurn({ prompt: 'overlap-prompt LINES:20 INTERVAL:5', emit: () => undefined }));
    const state = await first.session.doSuspendTurn();
    const refused = await prompted.then(() => null, (error: unknown) => error as { code?: string; message?: string });
    expect(refused?.code, String(refused?.message)).toBe('suspended');
    expect(channelOf(first.session), 'a connection opened after the suspend resolved').toBeNull();
    expect((state.data as { turn?: unknown }).turn, 'the state holds no turn').toBeUndefined();

    // A fresh host: nothing to continue, and the journal holds only the turn before.
    const { session } = await kit.resume('overlap-prompt', state);
    const parts: HarnessV1StreamPart[] = [];
    await (await session.doContinueTurn({ emit: (part) => parts.push(part) })).done;
    expect(parts).toEqual([]);
    const next = await runTurn(session, 'overlap-prompt-after LINES:2');
    expect(deltas(next).join('')).toMatch(/overlap-prompt-after/);
    const journal = await readFile(join((state.data as { stateDir: string }).stateDir, 'journal.ndjson'), 'utf8');
    expect(journal.split('\n').filter((line) => line.includes('"kind":"turn-start"')), 'turns the bridge started').toHaveLength(2);
    await session.doDestroy();
  });
});
