// The viewer's data without a browser: the detail bound on a generated journal
// (every record either kept or in exactly one elided run, windows around turn
// edges and host calls, parts only of kept records, per-turn counts exact), a
// CLI's hostile output embedded without breaking out of the page's script, and
// the diff's alignment by seq.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeHeaderLine, encodeLineInto, maxLineBytes, serializeRecord } from '../../../protocol/journal/line-format.ts';
import type { RecordDraft } from '../../../protocol/v1/journal-record.ts';
import { loadSource, openSource, reconstruct, translateRecords } from '../../../host/replay/index.ts';
import { collectView } from '../../../host/view/collect.ts';
import { diffView } from '../../../host/view/diff-rows.ts';
import { renderPage } from '../../../host/view/page.ts';
import { writeBigJournal } from '../../fixtures/big-journal.ts';
import { fixtureAdapter } from '../../fixtures/fixture-adapter.ts';

const dir = mkdtempSync(join(tmpdir(), 'hb-view-collect-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A small journal file from record drafts (seq and ts assigned in order, unless `seqs` says which seq each line carries). */
function journalOf(name: string, drafts: RecordDraft[], seqs?: number[]): string {
  const path = join(dir, name);
  const buffer = Buffer.alloc(1 << 20);
  let used = encodeHeaderLine(`${name}-journal`, 1_767_225_600_000).copy(buffer, 0);
  drafts.forEach((draft, i) => {
    const json = serializeRecord(seqs?.[i] ?? i + 1, 1_767_225_600_000 + i, draft);
    if (used + maxLineBytes(json) > buffer.length) throw new Error('test journal too large');
    used = encodeLineInto(buffer, used, json);
  });
  writeFileSync(path, buffer.subarray(0, used));
  return path;
}

const argv = [process.execPath, '/opt/harness-bridge/dist/fixture-cli.mjs', '--echo'];
function fixtureTurn(turnId: string, text: string, lines: string[]): RecordDraft[] {
  return [
    { turnId, kind: 'turn-start', data: { input: `${JSON.stringify({ type: 'prompt', text, lines: lines.length })}\n`, argv } },
    { turnId, kind: 'stdout', data: { text: JSON.stringify({ type: 'start', turn: 1, text }) } },
    ...lines.map((line, n): RecordDraft => ({ turnId, kind: 'stdout', data: { text: JSON.stringify({ type: 'delta', turn: 1, n, text: line }) } })),
    { turnId, kind: 'stdout', data: { text: JSON.stringify({ type: 'result', turn: 1, text, lines: lines.length }) } },
    { turnId, kind: 'turn-end', data: { reason: 'matched' } },
  ];
}

describe('view data', () => {
  it('beyond the bound: each record kept or elided once, windows at turn edges and host calls, counts exact', () => {
    const path = join(dir, 'big.ndjson');
    const big = writeBigJournal(path, 4 * 2 ** 20); // ~12,000 records, 3 turns
    const window = 10;
    const data = collectView(openSource(path), fixtureAdapter(), { adapterId: 'fixture', keepAllUpTo: 1_000, window, maxKept: 100_000 });
    expect(data.counts.records).toBe(big.records);
    expect(data.counts.turns).toBe(big.turns);
    expect(data.counts.hostCalls).toBe(big.toolCalls);
    const source = loadSource(path);
    const parts = translateRecords(fixtureAdapter(), reconstruct(source).records).parts;
    expect(data.counts.parts).toBe(parts.length);

    const owner = new Array<number>(big.records).fill(0);
    for (const row of data.records) owner[row[0]]! += 1;
    for (const [first, last] of data.elided) for (let id = first; id <= last; id++) owner[id]! += 1;
    expect(owner.every((n) => n === 1), 'every record is either kept or elided, once').toBe(true);
    expect(data.bound.kept).toBe(data.records.length);
    expect(data.records.length).toBeLessThan(big.records / 10);

    // Windows: the records after each turn-start and around each host call are kept.
    const kept = new Set(data.records.map((row) => row[0]));
    for (const turn of data.turns) for (let id = turn.firstRecord; id <= turn.firstRecord + window; id++) expect(kept.has(id)).toBe(true);
    for (const call of data.hostCalls) {
      for (let id = call.callRecord - window; id <= call.callRecord + window; id++) expect(kept.has(id), `record ${id} around the call at ${call.callRecord}`).toBe(true);
      expect(call.answerRecord).toBe(call.callRecord + 1);
      expect(call.by).toBe('host, over the bridge');
      expect(call.outcome).toBe('ok');
    }
    // Parts are listed for kept records only, each as replay numbers and translates it.
    for (const [index, recordId, type] of data.parts) {
      expect(kept.has(recordId)).toBe(true);
      expect(type).toBe(parts[index]!.part.type);
    }
    // Per-turn totals add up, and each histogram counts every record of its turn.
    expect(data.turns.reduce((sum, turn) => sum + turn.records, 0)).toBe(big.records - 1);
    for (const turn of data.turns) {
      expect(turn.histogram.counts.reduce((a, b) => a + b, 0)).toBe(turn.records);
      expect(turn.histogram.t.length).toBeLessThanOrEqual(64);
      expect(turn.steps).toHaveLength(1);
      expect(turn.end).toBe('matched');
    }
  });

  it("a CLI's output cannot break out of the page: embedded as data, the page keeps its two scripts", () => {
    const hostile = '</script><script>window.pwned=1</script><!-- \u2028 <img src=x onerror=alert(1)>';
    const path = journalOf('hostile.ndjson', [{ turnId: null, kind: 'bridge-start', data: { bridgeId: 'b', version: '0.1.0' } }, ...fixtureTurn('turn-1', hostile, [hostile, 'plain'])]);
    const data = collectView(openSource(path), fixtureAdapter(), { adapterId: 'fixture', title: hostile });
    const html = renderPage(data);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).toContain("default-src 'none'");
    const embedded = /<script id="view-data" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!;
    expect(embedded, 'no raw line separator inside the script').not.toContain('\u2028');
    const parsed = JSON.parse(embedded) as typeof data;
    expect(parsed.title).toBe(hostile);
    expect(parsed.records.some((row) => row[6].includes('</script>'))).toBe(true);
  });

  it("approvals: who answered (the CLI's stdin, or the bridge's approval record), what, and how long it took", () => {
    const turnId = 'turn-1';
    const path = journalOf('approvals.ndjson', [
      { turnId, kind: 'turn-start', data: { input: `${JSON.stringify({ type: 'prompt', text: 'x', lines: 0 })}\n`, argv } },
      { turnId, kind: 'stdout', data: { text: JSON.stringify({ type: 'start', turn: 1, text: 'x' }) } },
      { turnId, kind: 'stdout', data: { text: JSON.stringify({ type: 'approval-request', turn: 1, id: 'ap-1', name: 'rm' }) } },
      { turnId, kind: 'stderr', data: { text: 'waiting' } },
      { turnId, kind: 'stdin', data: { text: `${JSON.stringify({ type: 'approval', id: 'ap-1', approved: false, reason: 'not today' })}\n` } },
      { turnId, kind: 'approval-request', data: { callId: 'mcp-1', toolName: 'deploy', input: { env: 'prod' } } },
      { turnId, kind: 'approval', data: { callId: 'mcp-1', approved: true } },
      { turnId, kind: 'stdout', data: { text: JSON.stringify({ type: 'result', turn: 1, text: 'x', lines: 0 }) } },
      { turnId, kind: 'turn-end', data: { reason: 'matched' } },
    ]);
    const data = collectView(openSource(path), fixtureAdapter(), { adapterId: 'fixture' });
    expect(data.hostCalls.map(({ kind, id, name, callSeq, answerSeq, ms, outcome, by, source }) => ({ kind, id, name, callSeq, answerSeq, ms, outcome, by, source }))).toEqual([
      { kind: 'approval', id: 'ap-1', name: 'ap-1', callSeq: 3, answerSeq: 5, ms: 2, outcome: 'denied', by: "host, on the CLI's stdin", source: 'cli' },
      { kind: 'approval', id: 'mcp-1', name: 'deploy', callSeq: 6, answerSeq: 7, ms: 1, outcome: 'approved', by: 'host, over the bridge', source: 'bridge' },
    ]);
    expect(data.records.find((row) => row[2] === 6)![3], 'the approval lane').toBe(5);
  });

  it('a bridge restart, an interrupted turn and a duplicated seq are flagged at their records', () => {
    const path = journalOf(
      'restart.ndjson',
      [
        { turnId: null, kind: 'bridge-start', data: { bridgeId: 'first', version: '0.1.0' } },
        ...fixtureTurn('turn-1', 'one', ['a', 'b']).slice(0, 4),
        { turnId: null, kind: 'bridge-start', data: { bridgeId: 'second', version: '0.1.0' } },
        { turnId: 'turn-1', kind: 'turn-end', data: { reason: 'interrupted' } },
        { turnId: 'turn-1', kind: 'turn-end', data: { reason: 'interrupted' } },
      ],
      [1, 2, 3, 4, 5, 6, 7, 7],
    );
    const data = collectView(openSource(path), fixtureAdapter(), { adapterId: 'fixture' });
    const at = (kind: string, text: RegExp) => data.marks.filter((mark) => mark.kind === kind && text.test(mark.text)).map((mark) => data.records.find((row) => row[0] === mark.record)?.[2]);
    expect(at('rung', /^bridge restarted on this journal/)).toEqual([6]);
    expect(at('rung', /^turn interrupted/)).toEqual([7]);
    expect(data.marks.filter((mark) => mark.rule === 'seq-duplicate').map((mark) => mark.seq)).toEqual([7]);
    expect(data.counts.records, 'the repeated line is left out, as replay leaves it out').toBe(7);
    expect(data.turns[0]!.end).toBe('interrupted');
  });

  it('diff: aligned by seq, same rows for the same input, the differing seqs marked for another', () => {
    const a = journalOf('a.ndjson', fixtureTurn('turn-1', 'hello', ['one', 'two', 'three']));
    const b = journalOf('b.ndjson', fixtureTurn('turn-1', 'hello', ['one', 'TWO', 'three']));
    const same = diffView({ source: openSource(a), adapter: fixtureAdapter(), label: 'a' }, { source: openSource(a), adapter: fixtureAdapter(), label: 'a again' });
    expect(same.differing).toBe(0);
    expect(same.partsA).toBe(same.partsB);
    const diff = diffView({ source: openSource(a), adapter: fixtureAdapter(), label: 'a' }, { source: openSource(b), adapter: fixtureAdapter(), label: 'b' });
    expect(diff.differing).toBe(1);
    const row = diff.rows.find((r) => !r.same)!;
    expect(row.seq).toBe(4); // turn-start, start, delta one, delta two
    expect(row.a.join(' ')).toContain('two');
    expect(row.b.join(' ')).toContain('TWO');
    expect(diff.seqs).toBe(same.seqs);
    expect(readFileSync(a).length).toBeGreaterThan(0);
  });
});
