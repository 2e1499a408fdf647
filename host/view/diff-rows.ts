// `view --diff`: two translations (one recording through two adapter
// versions, or two recordings through one) side by side, aligned by seq: each
// row is one seq's parts on each side, marked when they differ (compared as
// `replay --diff` compares: partText, the part's JSON). Streams both sides in
// step; keeps every differing row up to a bound, with `context` same rows
// around each, and counts the rest.
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import { partText as partJson, RecordStream, translateStream, type ReplayInput, type TranslatedPart } from '../replay/index.ts';
import { counted } from '../cli/replay.ts';
import { partText } from './collect.ts';
import type { DiffData, DiffRow } from './view-data.ts';

export const diffBounds = { maxRows: 5_000, context: 2 } as const;

type Group = { journal: number; seq: number; parts: TranslatedPart[] };

/** Parts grouped by the record that produced them, with the ordinal of its journal (seq restarts with a new journal). */
function* groups(parts: Iterable<TranslatedPart>): Generator<Group, void, undefined> {
  let current: Group | undefined;
  let journal = 0;
  for (const entry of parts) {
    if (current && entry.seq === current.seq) {
      current.parts.push(entry);
      continue;
    }
    if (current) {
      if (entry.seq < current.seq) journal++;
      yield current;
    }
    current = { journal, seq: entry.seq, parts: [entry] };
  }
  if (current) yield current;
}

const line = (entry: TranslatedPart) => `${entry.part.type} ${partText(entry.part)}`.trimEnd();

export function diffView<A, B>(a: { source: ReplayInput; adapter: CliAdapter<A>; label: string }, b: { source: ReplayInput; adapter: CliAdapter<B>; label: string }): DiffData {
  let partsA = 0;
  let partsB = 0;
  const left = groups(counted(translateStream(a.adapter, new RecordStream(a.source).records()), () => partsA++))[Symbol.iterator]();
  const right = groups(counted(translateStream(b.adapter, new RecordStream(b.source).records()), () => partsB++))[Symbol.iterator]();
  const rows: DiffRow[] = [];
  const before: DiffRow[] = [];
  let after = 0;
  let seqs = 0;
  let differing = 0;
  let elided = 0;
  let x = left.next();
  let y = right.next();
  while (!x.done || !y.done) {
    const order = x.done ? 1 : y.done ? -1 : x.value.journal - y.value.journal || x.value.seq - y.value.seq;
    const ga = order <= 0 && !x.done ? x.value : undefined;
    const gb = order >= 0 && !y.done ? y.value : undefined;
    if (ga) x = left.next();
    if (gb) y = right.next();
    const same = ga !== undefined && gb !== undefined && ga.parts.length === gb.parts.length && ga.parts.every((part, i) => partJson(part) === partJson(gb.parts[i]!));
    const at = (ga ?? gb)!;
    const row: DiffRow = { journal: at.journal, seq: at.seq, a: ga ? ga.parts.map(line) : [], b: gb ? gb.parts.map(line) : [], same };
    seqs++;
    if (!same) differing++;
    if (!same && rows.length < diffBounds.maxRows) {
      rows.push(...before.splice(0), row);
      after = diffBounds.context;
    } else if (same && after > 0 && rows.length < diffBounds.maxRows) {
      rows.push(row);
      after--;
    } else {
      before.push(row);
      if (before.length > diffBounds.context) {
        before.shift();
        elided++;
      }
    }
  }
  elided += before.length;
  return { a: a.label, b: b.label, partsA, partsB, seqs, differing, rows, elided };
}
