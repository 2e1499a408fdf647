// tiny-cli's translator over its captured fixtures (docs/writing-an-adapter.md#tutorial):
// the exact text and finish of each turn, and the snapshot property at every cut
// point, over whole lines and over lines the bridge split into 7-char `cont` pieces.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { checkEveryCutResumes, journalOfLines } from 'harness-bridge/testing';
import tinyAdapter from './tiny-adapter.mjs';

/** A fixture's lines cut into turns: a `done` line ends one. */
function turnsOf(name) {
  const lines = readFileSync(new URL(`./fixtures/${name}.jsonl`, import.meta.url), 'utf8').split('\n').filter(Boolean);
  const turns = [[]];
  for (const line of lines) {
    turns.at(-1).push(line);
    if (JSON.parse(line).type === 'done') turns.push([]);
  }
  return turns.filter((turn) => turn.length > 0);
}

/** Translates one turn's records with a fresh translator. */
function translate(records) {
  const { translator } = tinyAdapter();
  let state = translator.init({ turnId: 'turn-1', rerun: false });
  return records.flatMap((record) => {
    const out = translator.step(state, record);
    state = out.state;
    return out.parts;
  });
}

const expected = {
  text: [{ text: 'Scripted reply 1 (text): you said "say hi".', finish: 'stop' }],
  slow: [{ text: 'slow 1 slow 2 slow 3 slow 4 slow 5 slow 6 ', finish: 'stop' }],
  'two-prompts': [
    { text: 'Scripted reply 1 (text): you said "first prompt".', finish: 'stop' },
    { text: 'Scripted reply 2 (text): you said "second prompt".', finish: 'stop' },
  ],
  error: [{ text: '', finish: 'error' }],
};

let cuts = 0;
for (const [name, turns] of Object.entries(expected)) {
  const captured = turnsOf(name);
  assert.equal(captured.length, turns.length, `${name}: turns`);
  captured.forEach((lines, i) => {
    const parts = translate(journalOfLines(lines));
    assert.deepEqual(parts[0], { type: 'stream-start', modelId: 'tiny-model' }, `${name}: stream-start`);
    assert.equal(parts.map((p) => (p.type === 'text-delta' ? p.delta : '')).join(''), turns[i].text, `${name} turn ${i + 1}: text`);
    assert.equal(parts.at(-1).type === 'finish' && parts.at(-1).finishReason.unified, turns[i].finish, `${name} turn ${i + 1}: finish`);
    const withoutIds = (all) => all.map(({ id, ...part }) => part); // text ids derive from seq, which pieces shift
    assert.deepEqual(withoutIds(translate(journalOfLines(lines, { piece: 7 }))), withoutIds(parts), `${name} turn ${i + 1}: the same parts from 7-char pieces`);
    cuts += checkEveryCutResumes(tinyAdapter, journalOfLines(lines), `${name} turn ${i + 1}`);
    cuts += checkEveryCutResumes(tinyAdapter, journalOfLines(lines, { piece: 7 }), `${name} turn ${i + 1}, 7-char pieces`);
  });
}
console.log(`translator: ${Object.keys(expected).length} fixtures, ${cuts} cut points resumed exactly`);
