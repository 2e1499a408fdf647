// Every cut point at the UI level (docs/guarantees.md#ui) for the fixture
// adapter: the fixture CLI's own output for a turn, journaled as the bridge
// journals it, cut after every record; the slice after the cut (restored from
// the kit's snapshot, and replayed) is folded onto the message of the parts
// before it through the real HarnessAgent and readUIMessageStream
// (test/host/ui-replay.ts): each must give the uninterrupted turn's message.
// The reference adapters' recorded turns go through the same check in their
// own tests (test/host/adapters/*.test.ts); the counts are printed as figures.
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureAdapter, fixtureCliPath } from '../fixtures/fixture-adapter.ts';
import { journalOfLines } from '../../host/testing/every-cut.ts';
import { checkEveryCutFolds } from './ui-replay.ts';

/** What the fixture CLI prints for one prompt line (echo mode), without its session line. */
function fixtureOutput(prompt: Record<string, unknown>): string[] {
  const run = spawnSync(process.execPath, [fixtureCliPath, '--echo'], { input: `${JSON.stringify({ type: 'prompt', ...prompt })}\n`, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`fixture CLI exited ${run.status}: ${run.stderr}`);
  return run.stdout.split('\n').filter((line) => line.length > 0 && !line.startsWith('{"type":"session"') && !line.startsWith('{"type":"bye"'));
}

const turns: Array<[string, Record<string, unknown>, Parameters<typeof journalOfLines>[1]]> = [
  ['40 lines', { text: 'cut LINES:40', lines: 40 }, {}],
  ['6 lines, long lines in cont pieces', { text: 'pieces LINES:6', lines: 6 }, { piece: 7 }],
  ['an approval the CLI asks for, interrupted unanswered (stdin ends)', { text: 'asks LINES:2', lines: 2, approve: 'rm' }, {}],
  ['aborted (the bridge ends the turn)', { text: 'aborted LINES:3', lines: 3 }, { end: { reason: 'aborted' } }],
];

let cuts = 0;
afterAll(() => {
  console.log(`[figures] ui-every-cut fixture: turns=${turns.length} cuts=${cuts}`);
});

describe('fixture adapter: every cut point, folded by the real HarnessAgent + readUIMessageStream, is the uninterrupted message', () => {
  for (const [where, prompt, options] of turns) {
    it(where, async () => {
      let lines = fixtureOutput(prompt);
      // The aborted turn: the CLI's output stops before its result line; the bridge's turn-end says aborted.
      if (options?.end) lines = lines.filter((line) => !line.startsWith('{"type":"result"'));
      const records = journalOfLines(lines, options);
      const { checked } = await checkEveryCutFolds(() => fixtureAdapter(), records, where);
      expect(checked).toBeGreaterThan(records.length / 2);
      cuts += checked;
    }, 120_000);
  }
});
