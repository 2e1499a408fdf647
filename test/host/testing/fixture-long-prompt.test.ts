// The fixture adapter with a prompt longer than the bridge's line cap (256 KiB):
// every line the fixture CLI prints repeats the prompt, so the start, delta and
// result lines arrive as `cont` pieces. The turn must still end (the prefix
// matcher fires on an over-long result line) and translate to the same parts a
// short prompt gives (the translator joins the pieces, also across a snapshot);
// a line past the kit's join cap becomes an error part, not a silent hang.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { maxJoinedLineChars } from '../../../host/adapter-kit/json-lines.ts';
import { fixtureAdapter } from '../../../host/testing/fixture/fixture-adapter.ts';
import { createKit, runTurn, type Kit } from '../session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('long-prompt');
});
afterAll(async () => {
  await kit?.cleanup();
});

/** What the fixture translator makes of a prompt whose turn printed `lines` deltas (text ids vary). */
function expectedShape(prompt: string, lines: number): unknown[] {
  return [
    { type: 'stream-start' },
    { type: 'text-start' },
    ...Array.from({ length: lines }, (_, n) => ({ type: 'text-delta', delta: `${prompt} #${n}\n` })),
    { type: 'text-end' },
    { type: 'finish-step', finishReason: { unified: 'stop', raw: 'result' } },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'result' } },
  ];
}

describe('fixture adapter: a prompt longer than the line cap', () => {
  it('a 300 KB prompt: the turn ends and every delta arrives whole; the next short turn on the same CLI too', { timeout: 60_000 }, async () => {
    const { session } = await kit.start('long');
    const prompt = `${'long prompt '.repeat(25_000)} LINES:2`; // 300,009 characters
    expect(prompt.length).toBeGreaterThan(300_000);
    const parts = await runTurn(session, prompt);
    expect(parts).toMatchObject(expectedShape(prompt, 2));
    expect(parts.filter((part) => part.type === 'error')).toEqual([]);
    const next = await runTurn(session, 'short LINES:1');
    expect(next).toMatchObject(expectedShape('short LINES:1', 1));
    await session.doStop();
  });
});

describe('fixture translator: joined pieces', () => {
  const adapter = fixtureAdapter();
  let seq = 0;
  const record = (kind: 'stdout' | 'turn-start', data: object): JournalRecord => ({ seq: ++seq, turnId: 't', ts: 0, kind, data }) as JournalRecord;
  /** The line split like the bridge splits it: pieces of `size` characters, all but the last `cont`. */
  const pieces = (line: string, size: number): JournalRecord[] => {
    const out: JournalRecord[] = [];
    for (let at = 0; at < line.length; at += size) out.push(record('stdout', { text: line.slice(at, at + size), ...(at + size < line.length ? { cont: true } : {}) }));
    return out;
  };
  const run = (records: JournalRecord[], snapshotAt?: number): HarnessV1StreamPart[] => {
    const { translator } = adapter;
    let state = translator.init({ turnId: 't', rerun: false });
    const parts: HarnessV1StreamPart[] = [];
    records.forEach((r, i) => {
      if (i === snapshotAt) state = translator.restore!(JSON.parse(JSON.stringify(translator.snapshot!(state))));
      const out = translator.step(state, r);
      state = out.state;
      parts.push(...out.parts);
    });
    return parts;
  };

  it('a delta and a result split in pieces translate as whole lines, also across a snapshot taken between pieces', () => {
    const text = 'p'.repeat(1000);
    const records = [
      record('turn-start', {}),
      ...pieces(JSON.stringify({ type: 'delta', turn: 1, n: 0, text: `${text} #0` }), 300),
      ...pieces(JSON.stringify({ type: 'result', turn: 1, text, lines: 1 }), 300),
    ];
    const whole = run(records);
    expect(whole).toMatchObject(expectedShape(text, 1));
    for (let at = 1; at < records.length; at++) expect(run(records, at), `snapshot before record ${at}`).toEqual(whole);
  });

  it('a line past the join cap becomes an error part; the turn still finishes on its turn-end', () => {
    const chunk = 'x'.repeat(4 * 1024 * 1024);
    const count = Math.ceil(maxJoinedLineChars / chunk.length) + 1;
    const records = [record('turn-start', {})];
    for (let i = 0; i < count; i++) records.push(record('stdout', { text: i === 0 ? `{"type":"delta","text":"${chunk}` : chunk, ...(i + 1 < count ? { cont: true } : {}) }));
    records.push({ seq: ++seq, turnId: 't', ts: 0, kind: 'turn-end', data: { reason: 'matched' } } as JournalRecord);
    const parts = run(records);
    expect(parts.filter((part) => part.type === 'error')).toEqual([{ type: 'error', error: expect.stringMatching(/longer than 16777216 characters was cut/) }]);
    expect(parts.at(-1)).toMatchObject({ type: 'finish' });
  });
});
