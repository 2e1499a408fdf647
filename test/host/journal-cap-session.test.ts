// The journal cap as the host kit's user meets it (docs/guarantees.md#disk-full-and-caps):
// createBridgeHarness({ maxTurnJournalBytes }) reaches the bridge, and a turn past it ends with an
// error part naming the cap (finish 'error', raw 'capped'), not a hang; the next turn runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKit, runTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('journal-cap');
});
afterAll(async () => {
  await kit?.cleanup();
});

describe('journal cap through the kit', () => {
  it('a turn past maxTurnJournalBytes ends with an error part naming the cap; the next turn runs', { timeout: 90_000 }, async () => {
    const cap = 1024 * 1024;
    const { session } = await kit.start('cap', { settings: { maxTurnJournalBytes: cap } });
    // Every fixture line repeats the prompt: 100 lines of a 100 KB prompt is ~10 MB of journal.
    const prompt = `${'flood '.repeat(17_000)} LINES:100`;
    const parts = await runTurn(session, prompt);
    const error = parts.find((part) => part.type === 'error');
    expect(error).toBeDefined();
    expect(JSON.stringify(error)).toMatch(/maxTurnJournalBytes/);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'error', raw: 'capped' } });
    const deltas = parts.filter((part) => part.type === 'text-delta').length;
    const next = await runTurn(session, 'short LINES:2');
    expect(next.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
    console.log(`[figures] journal cap through the kit: cap ${cap} B, ${deltas}/100 deltas before the error part; next turn: finish stop`);
  });

  it('a bad cap setting fails createSession with a RangeError naming it', async () => {
    await expect(kit.start('bad', { settings: { maxTurnJournalBytes: -1 } })).rejects.toThrow(/maxTurnJournalBytes/);
  });
});
