// The streaming readers behind replay/inspect against simple references: lines
// across read boundaries and byte ranges; the sparse seq set; and the
// reconstruction of a recording (seq order, each seq once, the first copy of
// a repeat, the first conflicting repeat), in memory and from disk (the index
// pass), against the obvious materializing algorithm, on generated recordings
// with out-of-order segments, holes, repeats and conflicts; and a check over
// either gives the same violations.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { checkInvariants, loadSource, openSource, reconstruct, type RecordingSource, type Segment } from '../../../host/replay/index.ts';
import { LineTooLongError, readFileLines } from '../../../host/replay/lines.ts';
import { SeqSet } from '../../../host/replay/seq-set.ts';

const dir = mkdtempSync(join(tmpdir(), 'hb-replay-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readFileLines', () => {
  it('lines spanning 1 MiB reads, a last line without newline, byte offsets, and byte ranges', () => {
    const lengths = [0, 5, 1_048_570, 3, 2_500_000, 0, 17, 1_048_576, 9];
    const lines = lengths.map((length, i) => String.fromCharCode(97 + i).repeat(length));
    const text = `${lines.join('\n')}`; // no newline after the last line
    const path = join(dir, 'lines.txt');
    writeFileSync(path, text);
    const read: Array<{ line: number; offset: number; text: string; terminated: boolean }> = [];
    // A line's bytes are valid until the next one is read: take them as they come.
    for (const l of readFileLines(path)) read.push({ line: l.line, offset: l.offset, text: l.bytes.toString('latin1', l.start, l.end), terminated: l.terminated });
    let offset = 0;
    const expected = lines.map((line, i) => {
      const entry = { line: i + 1, offset, text: line, terminated: i < lines.length - 1 };
      offset += line.length + 1;
      return entry;
    });
    expect(read.map((l) => ({ ...l, text: l.text.length }))).toEqual(expected.map((l) => ({ ...l, text: l.text.length })));
    expect(read.every((l, i) => l.text === expected[i]!.text)).toBe(true);
    // A range starting at line 5 and stopping before line 8.
    const from = expected[4]!.offset;
    const to = expected[7]!.offset;
    expect([...readFileLines(path, { from, to, firstLine: 5 })].map((l) => [l.line, l.offset, l.end - l.start])).toEqual(
      [4, 5, 6].map((i) => [i + 1, expected[i]!.offset, lengths[i]]),
    );
    expect(() => [...readFileLines(path, { maxLineBytes: 2_000_000 })]).toThrow(LineTooLongError);
  });
});

describe('SeqSet', () => {
  it('add, has and next agree with a sorted array', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 2 ** 40 })), { maxLength: 60 }), fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { maxLength: 20 }), (seqs, probes) => {
        const set = new SeqSet();
        const reference = new Set<number>();
        for (const seq of seqs) expect(set.add(seq)).toBe(!reference.has(seq) && Boolean(reference.add(seq)));
        const sorted = [...reference].sort((a, b) => a - b);
        expect(set.size).toBe(sorted.length);
        for (const probe of [...probes, ...seqs, 0]) {
          expect(set.has(probe)).toBe(reference.has(probe));
          expect(set.next(probe)).toBe(sorted.find((seq) => seq >= probe));
        }
      }),
      { numRuns: 300 },
    );
  });
});

// ── recordings ──────────────────────────────────────────────────────────────

const record = (seq: number, variant: number): JournalRecord => ({ seq, turnId: 't1', ts: 1000 + seq, kind: 'stdout', data: { text: `line ${seq}${variant ? ` v${variant}` : ''}` } });

type Plan = { journal: 'j1' | 'j2' | null; startedAt: number; frames: Array<{ seqs: number[]; variant: number; beforeHello: boolean }> };

const planArb: fc.Arbitrary<Plan[]> = fc.array(
  fc.record({
    journal: fc.constantFrom<'j1' | 'j2' | null>('j1', 'j2', null),
    startedAt: fc.integer({ min: 0, max: 5 }),
    frames: fc.array(
      fc.record({
        seqs: fc.oneof(
          fc.integer({ min: 1, max: 30 }).chain((from) => fc.integer({ min: 0, max: 6 }).map((n) => Array.from({ length: n + 1 }, (_, i) => from + i))),
          fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        ),
        variant: fc.constantFrom(0, 0, 0, 1),
        beforeHello: fc.constantFrom(false, false, false, true),
      }),
      { maxLength: 5 },
    ),
  }),
  { minLength: 1, maxLength: 4 },
);

/** A recording's lines for the plan, and the in-memory source the same lines parse to. */
function build(plans: Plan[], name: string): { path: string; source: RecordingSource } {
  const lines: string[] = [];
  const segments: Segment[] = [];
  for (const plan of plans) {
    const headerLine = lines.length + 1;
    const header = { type: 'recording-header' as const, format: 'harness-bridge-recording' as const, version: 1, startedAt: plan.startedAt * 1000, url: 'ws://127.0.0.1:1/', protocolVersion: '1.0', cursor: 0 };
    lines.push(JSON.stringify(header));
    const hello =
      plan.journal === null
        ? undefined
        : { type: 'hello' as const, protocolVersion: '1.0', bridgeVersion: '0.1.0', bridgeId: 'b', journalId: plan.journal, state: 'idle' as const, firstSeq: 0, lastSeq: 0, turns: [] };
    const entries: Segment['entries'][number][] = [];
    const frames = [...plan.frames.filter((f) => f.beforeHello), ...(hello ? [null] : []), ...plan.frames.filter((f) => !f.beforeHello)];
    for (const [i, frame] of frames.entries()) {
      const t = i + 1;
      const value = frame === null ? hello! : { type: 'records' as const, records: frame.seqs.map((seq) => record(seq, frame.variant)) };
      lines.push(JSON.stringify({ dir: 'in', t, frame: value }));
      entries.push({ type: 'in', line: lines.length, at: header.startedAt + t, frame: value });
    }
    segments.push({ file: '', line: headerLine, header, hello, entries });
  }
  const path = join(dir, `${name}.ndjson`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  const ordered = segments.map((segment, index) => ({ segment: { ...segment, file: path }, index }));
  ordered.sort((a, b) => a.segment.header.startedAt - b.segment.header.startedAt || a.index - b.index);
  return { path, source: { kind: 'recording', path, segments: ordered.map((o) => o.segment) } };
}

/** The obvious reconstruction: every delivery into a map per journal (first copy wins), then sorted. */
function naive(source: RecordingSource): { records: JournalRecord[]; conflict: { seq: number; segment: number; line: number } | undefined } {
  const journals = new Map<string, Map<number, { record: JournalRecord; text: string }>>();
  let conflict: { seq: number; segment: number; line: number } | undefined;
  source.segments.forEach((segment, index) => {
    const journalId = segment.hello?.journalId ?? segment.header.journalId ?? '(unknown journal)';
    for (const entry of segment.entries) {
      if (entry.type !== 'in' || entry.frame.type !== 'records') continue;
      let bySeq = journals.get(journalId);
      if (!bySeq) journals.set(journalId, (bySeq = new Map()));
      for (const r of entry.frame.records) {
        const text = JSON.stringify(r);
        const seen = bySeq.get(r.seq);
        if (!seen) bySeq.set(r.seq, { record: r, text });
        else if (seen.text !== text && conflict === undefined) conflict = { seq: r.seq, segment: index, line: entry.line };
      }
    }
  });
  const records: JournalRecord[] = [];
  for (const bySeq of journals.values()) records.push(...[...bySeq.values()].sort((a, b) => a.record.seq - b.record.seq).map((e) => e.record));
  return { records, conflict };
}

describe('recording reconstruction streams', () => {
  let run = 0;
  it('in memory and from disk, it equals the materializing reconstruction; checks agree', () => {
    const seen = { conflicts: 0, outOfOrder: 0, journals2: 0 };
    fc.assert(
      fc.property(planArb, (plans) => {
        const { path, source } = build(plans, `r${run++}`);
        const want = naive(source);
        if (want.conflict) seen.conflicts++;
        if (new Set(source.segments.map((s) => s.hello?.journalId ?? '')).size > 1) seen.journals2++;
        const delivered = source.segments.flatMap((s) => s.entries.flatMap((e) => (e.type === 'in' && e.frame.type === 'records' ? e.frame.records.map((r) => r.seq) : [])));
        if (delivered.some((seq, i) => i > 0 && seq < delivered[i - 1]! && !delivered.slice(0, i).includes(seq))) seen.outOfOrder++;
        const fromMemory = reconstruct(source);
        const opened = openSource(path);
        const fromDisk = reconstruct(opened);
        for (const got of [fromMemory, fromDisk]) {
          expect(got.records).toEqual(want.records);
          expect(got.conflict && { seq: got.conflict.seq, segment: got.conflict.segment, line: got.conflict.line }).toEqual(want.conflict);
        }
        expect(checkInvariants(opened)).toEqual(checkInvariants(source));
        expect(checkInvariants(loadSource(path))).toEqual(checkInvariants(source));
      }),
      { numRuns: 200, seed: 4242 },
    );
    // The generated recordings did hold what the streaming has to get right.
    expect(seen.conflicts, 'conflicting repeats').toBeGreaterThan(5);
    expect(seen.outOfOrder, 'first copies arriving after a larger seq').toBeGreaterThan(5);
    expect(seen.journals2, 'recordings of two journals').toBeGreaterThan(5);
  });
});
