// stream-start keeps its modelId when a line comes before the CLI's init line (issue 16): the part
// writer holds raw parts until the stream starts, so the stream-start the init line opens still
// names the model. Checked on the writer itself and on the Claude Code and pi translators over a
// captured text turn with a stderr line (and an unparsable stdout line) before it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CliAdapter } from '../../../host/adapter-kit/adapter.ts';
import { createStreamState, maxHeldRawParts, partWriter } from '../../../host/adapter-kit/part-writer.ts';
import { claudeCodeAdapter } from '../../../host/adapters/claude-code/claude-code.ts';
import { piAdapter } from '../../../host/adapters/pi/pi.ts';
import type { HarnessV1StreamPart as Part } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { expectEveryCutResumes, expectWellFormed, normalizeIds } from '../adapters/translator-checks.ts';

const fixture = (cli: string, name: string) =>
  readFileSync(fileURLToPath(new URL(`../../fixtures/${cli}/${name}.jsonl`, import.meta.url)), 'utf8')
    .split('\n')
    .filter((line) => line.length > 0);

type Early = { kind: 'stdout' | 'stderr'; text: string };

/** One turn's records: turn-start, the early lines, the turn's stdout lines, turn-end (matched). */
function journal(early: Early[], lines: string[]): JournalRecord[] {
  let seq = 1;
  const turnId = 'turn-1';
  const records: JournalRecord[] = [{ seq: seq++, turnId, ts: 0, kind: 'turn-start', data: { input: 'x' } }];
  for (const { kind, text } of early) records.push({ seq: seq++, turnId, ts: 0, kind, data: { text } });
  for (const text of lines) records.push({ seq: seq++, turnId, ts: 0, kind: 'stdout', data: { text } });
  records.push({ seq: seq++, turnId, ts: 0, kind: 'turn-end', data: { reason: 'matched' } });
  return records;
}

function translate<S>(adapter: CliAdapter<S>, records: JournalRecord[]): Part[] {
  let state = adapter.translator.init({ turnId: 'turn-1', rerun: false });
  const parts: Part[] = [];
  for (const record of records) {
    const out = adapter.translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
  }
  return parts;
}

describe('partWriter: raw parts before the stream starts', () => {
  it('wait for start(modelId): stream-start carries the model and the raws follow it in order', () => {
    const state = createStreamState();
    const parts: Part[] = [];
    partWriter(state, parts).raw({ stderr: 'warning: one' });
    partWriter(state, parts).raw('two');
    expect(parts, 'nothing is emitted before the stream starts').toEqual([]);
    partWriter(state, parts).start('model-x');
    expect(parts).toEqual([
      { type: 'stream-start', modelId: 'model-x' },
      { type: 'raw', rawValue: { stderr: 'warning: one' } },
      { type: 'raw', rawValue: 'two' },
    ]);
    expect(state, 'nothing held any more').toEqual({ started: true, finished: false, block: null });
  });

  it('any other part starts the stream (without a modelId) ahead of the held raws', () => {
    const state = createStreamState();
    const parts: Part[] = [];
    const out = partWriter(state, parts);
    out.raw('early');
    out.push({ type: 'error', error: { message: 'boom' } });
    expect(parts).toEqual([{ type: 'stream-start' }, { type: 'raw', rawValue: 'early' }, { type: 'error', error: { message: 'boom' } }]);
  });

  it(`holds at most ${maxHeldRawParts} raws: the next one starts the stream`, () => {
    const state = createStreamState();
    const parts: Part[] = [];
    for (let i = 0; i <= maxHeldRawParts; i++) partWriter(state, parts).raw(i);
    expect(parts[0]).toEqual({ type: 'stream-start' });
    expect(parts.slice(1).map((p) => (p.type === 'raw' ? p.rawValue : p.type))).toEqual(Array.from({ length: maxHeldRawParts + 1 }, (_, i) => i));
  });

  it('a turn that ends before it started still delivers what was held: error ending, and the bridge dying (no finish)', () => {
    const end = (reason: 'exit' | 'interrupted') => {
      const state = createStreamState();
      const parts: Part[] = [];
      partWriter(state, parts).raw({ stderr: 'boom' });
      partWriter(state, parts).endTurn({ seq: 3, turnId: 't', ts: 0, kind: 'turn-end', data: { reason, code: 1 } }, 'cli');
      return parts.map((p) => p.type);
    };
    expect(end('exit')).toEqual(['stream-start', 'raw', 'error', 'finish']);
    expect(end('interrupted')).toEqual(['stream-start', 'raw']);
  });
});

const early: Early[] = [
  { kind: 'stderr', text: 'warning: the CLI says something on stderr first' },
  { kind: 'stdout', text: 'not json, before the init line' },
];

// The adapters' state types differ; the checks only pass them back to the same adapter.
const subjects: Array<{ cli: string; make: () => CliAdapter<any>; modelId: string }> = [
  { cli: 'claude-code', make: () => claudeCodeAdapter(), modelId: 'claude-opus-5-5' },
  { cli: 'pi', make: () => piAdapter(), modelId: 'fake-model' },
];

describe.each(subjects)('$cli translator: lines before the init line', ({ cli, make, modelId }) => {
  const lines = fixture(cli, 'text');
  const plain = translate(make(), journal([], lines));
  const withEarly = journal(early, lines);
  const parts = translate(make(), withEarly);

  it('the captured turn alone starts with the model named', () => {
    expect(plain[0]).toEqual({ type: 'stream-start', modelId });
  });

  it('a stderr line and a non-JSON line first: stream-start still carries the modelId, the lines follow as raw parts', () => {
    expectWellFormed(parts, `${cli} text with early lines`);
    expect(parts[0]).toEqual({ type: 'stream-start', modelId });
    expect(parts.slice(1, 3)).toEqual([
      { type: 'raw', rawValue: { stderr: early[0]!.text } },
      { type: 'raw', rawValue: early[1]!.text },
    ]);
    expect(normalizeIds(parts.slice(3)), 'the rest of the turn is unchanged (ids follow seq)').toEqual(normalizeIds(plain.slice(1)));
  });

  it('every cut point resumes to the same parts (the held raws travel in the snapshot)', () => {
    expectEveryCutResumes(make, withEarly, `${cli} text with early lines`);
  });
});
