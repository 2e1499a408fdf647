// `harness-bridge replay` on a recording made by a REAL session (fixture CLI,
// createBridgeHarness with recordDir, suspended in one host instance and
// continued in another) and on that session's journal: the offline
// translation equals what the live consumer got; corrupted lines are named by
// line number; --check passes on clean input and names the seq of an injected
// gap, duplicate or owner violation (records reaching a displaced segment, or
// a segment before its replay-begin); --diff finds the first differing part; --timeline shows
// records, events and the rung taken.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants, loadSource } from '../../../host/replay/index.ts';
import { fixtureAdapter } from '../../fixtures/fixture-adapter.ts';
import { ndjson, plain, recordFixtureSession, runCli, withoutRedelivery, type RecordedSession } from './cli-helpers.ts';

let session: RecordedSession;
let other: RecordedSession;
let recording: string;
let journal: string;

beforeAll(async () => {
  // 6 deltas 20 ms apart and a host tool round trip over stdin; cut after the 4th part (mid-text).
  session = await recordFixtureSession('replay', 'first prompt LINES:6 INTERVAL:20 TOOL:lookup', 4);
  other = await recordFixtureSession('replay-other', 'second prompt LINES:6 INTERVAL:20 TOOL:lookup', 3);
  const files = (await readdir(session.recordDir)).filter((name) => name.endsWith('.ndjson'));
  expect(files.length, 'the harness wrote recordings').toBeGreaterThan(0);
  recording = join(session.root, 'all.ndjson');
  let text = '';
  for (const name of files.sort()) text += await readFile(join(session.recordDir, name), 'utf8');
  await writeFile(recording, text);
  journal = join(session.stateDir, 'journal.ndjson');
}, 60_000);

afterAll(async () => {
  for (const s of [session, other]) {
    if (!s) continue;
    for (const sandbox of s.sandboxes) await sandbox.stop();
    await rm(s.root, { recursive: true, force: true });
  }
});

/** Rewrites the recording's line that holds a records frame containing `seq`, with `edit` applied to that frame's records. */
async function editRecords(seq: number, edit: (records: unknown[], index: number) => void): Promise<{ file: string; line: number }> {
  const lines = (await readFile(recording, 'utf8')).split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.includes('"type":"records"')) continue;
    const value = JSON.parse(lines[i]!) as { frame: { records: Array<{ seq: number }> } };
    const index = value.frame.records.findIndex((record) => record.seq === seq);
    if (index < 0) continue;
    edit(value.frame.records, index);
    if (value.frame.records.length > 0) lines[i] = JSON.stringify(value);
    else lines.splice(i, 1); // a records frame holds at least one record: drop the emptied line
    const file = join(session.root, `edited-${seq}-${i}.ndjson`);
    await writeFile(file, lines.join('\n'));
    return { file, line: i + 1 };
  }
  throw new Error(`no records frame holds seq ${seq}`);
}

type RecordingLine = {
  raw: string;
  value: {
    type?: string;
    startedAt?: number;
    t?: number;
    event?: string;
    frame?: { type: string; to?: number; records?: Array<{ seq: number }> };
  };
};

/** The combined recording's lines (no trailing empty line), parsed. */
async function recordingLines(): Promise<RecordingLine[]> {
  const text = (await readFile(recording, 'utf8')).replace(/\n$/, '');
  return text.split('\n').map((raw) => ({ raw, value: JSON.parse(raw) as RecordingLine['value'] }));
}

/** Line indexes per segment, each starting with its header. */
function segmentsOf(lines: ReadonlyArray<RecordingLine>): number[][] {
  const segments: number[][] = [];
  lines.forEach((line, i) => {
    if (line.value.type === 'recording-header') segments.push([]);
    segments.at(-1)!.push(i);
  });
  return segments;
}

/** Every record any segment received, by seq (as received). */
function recordsBySeq(lines: ReadonlyArray<RecordingLine>): Map<number, { seq: number }> {
  const bySeq = new Map<number, { seq: number }>();
  for (const line of lines) for (const record of line.value.frame?.type === 'records' ? line.value.frame.records! : []) bySeq.set(record.seq, record);
  return bySeq;
}

/**
 * A stdout seq in the middle of the turn that the recording holds once (not replayed to a later slice) and whose
 * next record in its segment is the next seq: removing it leaves a gap inside that segment, wherever the cut fell.
 */
async function middleSeq(): Promise<number> {
  const lines = await recordingLines();
  const received = segmentsOf(lines).map((segment) =>
    segment.flatMap((i) => (lines[i]!.value.frame?.type === 'records' ? (lines[i]!.value.frame!.records as Array<{ seq: number; kind?: string }>) : [])),
  );
  const times = new Map<number, number>();
  for (const record of received.flat()) times.set(record.seq, (times.get(record.seq) ?? 0) + 1);
  const seqs = received.flatMap((records) => records.filter((record, i) => record.kind === 'stdout' && times.get(record.seq) === 1 && records[i + 1]?.seq === record.seq + 1).map((record) => record.seq));
  if (seqs.length === 0) throw new Error('no stdout record with its successor in the same segment');
  return seqs.sort((a, b) => a - b)[Math.floor(seqs.length / 2)]!;
}

describe('replay re-translates offline', () => {
  it('a recording of a real two-slice session replays to the parts the live session emitted', async () => {
    expect(session.live.filter((p) => p.type === 'tool-call'), 'the unanswered tool call is delivered again').not.toHaveLength(0);
    const result = await runCli(['replay', session.recordDir, '--adapter', 'fixture', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(ndjson(result.stdout)).toEqual(plain(withoutRedelivery(session.joined)));
    // The single concatenated file and the human listing agree too.
    const listing = await runCli(['replay', recording]);
    expect(listing.code, listing.stderr).toBe(0);
    expect(listing.stdout.trim().split('\n')).toHaveLength(withoutRedelivery(session.joined).length);
    expect(listing.stdout).toMatch(/#\s+0\s+seq\s+\d+\s+stream-start/);
  });

  it("the session's journal replays to the same parts (adapter guessed from the argv)", async () => {
    const result = await runCli(['replay', journal, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(ndjson(result.stdout)).toEqual(plain(withoutRedelivery(session.joined)));
    const fromStateDir = await runCli(['replay', session.stateDir, '--json']);
    expect(fromStateDir.stdout).toBe(result.stdout);
  });

  it('a corrupted recording is reported at the right line', async () => {
    const lines = (await readFile(recording, 'utf8')).split('\n');
    const target = Math.floor(lines.length / 2);
    lines[target] = lines[target]!.slice(0, Math.floor(lines[target]!.length / 2));
    const broken = join(session.root, 'broken.ndjson');
    await writeFile(broken, lines.join('\n'));
    const result = await runCli(['replay', broken, '--adapter', 'fixture']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(new RegExp(`broken\\.ndjson:${target + 1}: not JSON`));
    // A frame that is JSON but breaks the protocol schema is named too.
    const bad = (await readFile(recording, 'utf8')).split('\n');
    const recordsLine = bad.findIndex((line) => line.includes('"type":"records"'));
    bad[recordsLine] = bad[recordsLine]!.replace('"seq":', '"seq":-');
    await writeFile(broken, bad.join('\n'));
    const schema = await runCli(['replay', broken, '--adapter', 'fixture']);
    expect(schema.code).toBe(1);
    expect(schema.stderr.trim()).toMatch(new RegExp(`broken\\.ndjson:${recordsLine + 1}: inbound frame fails the protocol schema: records\\.0\\.seq`));
  });

  it('a corrupted journal line (bad crc) is reported with its line number; a torn tail too', async () => {
    const bytes = await readFile(journal);
    const text = bytes.toString('utf8');
    const starts = [0];
    for (let i = 0; i < text.length - 1; i++) if (text[i] === '\n') starts.push(i + 1);
    const line = 6; // a record line (line 1 is the header)
    const flipped = Buffer.from(bytes);
    const at = starts[line - 1]! + 20; // inside the JSON, after the crc prefix
    flipped[at] = flipped[at] === 0x61 ? 0x62 : 0x61;
    const corrupt = join(session.root, 'corrupt-journal.ndjson');
    await writeFile(corrupt, flipped);
    const result = await runCli(['replay', corrupt, '--adapter', 'fixture']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(new RegExp(`corrupt-journal\\.ndjson:${line}: journal crc mismatch`));
    const torn = join(session.root, 'torn-journal.ndjson');
    await writeFile(torn, bytes.subarray(0, bytes.length - 7));
    const tornResult = await runCli(['replay', torn, '--adapter', 'fixture']);
    expect(tornResult.code).toBe(1);
    expect(tornResult.stderr.trim()).toMatch(new RegExp(`torn-journal\\.ndjson:${starts.length}: journal torn tail`));
  });
});

describe('replay --check', () => {
  it('passes on the clean recording and the clean journal', async () => {
    for (const input of [recording, session.recordDir, journal]) {
      const result = await runCli(['replay', input, '--check', '--adapter', 'fixture']);
      expect(result.code, `${input}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(/^ok: \d+ records, \d+ deliveries, 1 turns, 1 host tool calls/);
    }
  });

  it('catches an injected gap and names its seq', async () => {
    const seq = await middleSeq();
    const { file } = await editRecords(seq, (records, index) => records.splice(index, 1));
    const result = await runCli(['replay', file, '--check', '--adapter', 'fixture']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(result.stderr.trim().split('\n')[0]);
    const match = new RegExp(`seq-gap at seq ${seq}: seq ${seq} missing in segment \\d+: the next record was seq ${seq + 1} \\(line (\\d+)\\)`).exec(result.stderr);
    expect(match, result.stderr).not.toBeNull();
    const named = (await readFile(file, 'utf8')).split('\n')[Number(match![1]) - 1]!;
    expect(named, 'the named line holds the record after the gap').toContain(`"seq":${seq + 1},`);
  });

  it('catches an injected duplicate and names its seq', async () => {
    const seq = await middleSeq();
    const { file } = await editRecords(seq, (records, index) => records.splice(index + 1, 0, structuredClone(records[index])));
    const result = await runCli(['replay', file, '--check', '--adapter', 'fixture']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`seq-duplicate at seq ${seq}: seq ${seq} delivered again`));
  });

  it('catches records that reach a displaced segment (rule owner, at the delivery after the newer segment took over)', async () => {
    expect(checkInvariants(loadSource(recording), fixtureAdapter()).violations, 'the clean recording has no violation').toEqual([]);
    const lines = await recordingLines();
    const [first, second] = segmentsOf(lines);
    expect(second, 'the recording has a second segment (the continued slice)').toBeDefined();
    const beginAt = second!.findIndex((i) => lines[i]!.value.frame?.type === 'replay-begin');
    const begin = lines[second![beginAt]!]!.value;
    const to = begin.frame!.to!;
    const bySeq = recordsBySeq(lines);
    const delivered = first!.flatMap((i) => (lines[i]!.value.frame?.type === 'records' ? lines[i]!.value.frame!.records!.map((r) => r.seq) : []));
    const last = Math.max(...delivered);
    // Segment 1 keeps receiving after segment 2's replay-begin: the stream continues (no gap, no
    // duplicate within segment 1) past `to`, the seq where the bridge handed ownership over.
    const stale = [];
    for (let seq = last + 1; seq <= to + 1; seq++) stale.push(bySeq.get(seq)!);
    expect(stale.every(Boolean), 'segment 2 delivered every record the injection copies').toBe(true);
    const startedAt = (i: number) => lines[i]!.value.startedAt!;
    const t = Math.ceil((startedAt(second![0]!) + begin.t! + 1 - startedAt(first![0]!)) * 10) / 10;
    const close = first!.find((i) => lines[i]!.value.event === 'close') ?? first!.at(-1)! + 1;
    const injected = JSON.stringify({ dir: 'in', t, frame: { type: 'records', records: stale } });
    const edited = lines.map((line, i) => (i === close && line.value.t !== undefined ? JSON.stringify({ ...line.value, t: Math.max(line.value.t, t) }) : line.raw));
    edited.splice(close, 0, injected);
    const file = join(session.root, 'displaced-owner.ndjson');
    await writeFile(file, `${edited.join('\n')}\n`);

    const result = await runCli(['replay', file, '--check', '--adapter', 'fixture']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `replay --check: owner at seq ${to + 1}: seq ${to + 1} reached segment 1 after segment 2 had taken ownership at seq ${to}: two owners at once (line ${close + 1})`,
    );
    const check = checkInvariants(loadSource(file), fixtureAdapter());
    expect(check.violations, 'only the owner rule fires: the copies are contiguous and identical').toEqual([
      expect.objectContaining({ rule: 'owner', seq: to + 1, line: close + 1 }),
    ]);
  });

  it('catches records that reach a segment before its replay-begin (rule owner, at that line)', async () => {
    const lines = await recordingLines();
    const [, second] = segmentsOf(lines);
    const begin = second!.find((i) => lines[i]!.value.frame?.type === 'replay-begin')!;
    const firstRecords = second!.find((i) => i > begin && lines[i]!.value.frame?.type === 'records')!;
    const seq = lines[firstRecords]!.value.frame!.records![0]!.seq;
    const edited = lines.map((line) => line.raw);
    edited.splice(begin, 0, lines[firstRecords]!.raw); // the same frame, once before ownership was confirmed
    const file = join(session.root, 'before-replay-begin.ndjson');
    await writeFile(file, `${edited.join('\n')}\n`);

    const result = await runCli(['replay', file, '--check', '--adapter', 'fixture']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `replay --check: owner at seq ${seq}: seq ${seq} reached segment 2 while it did not own the stream (no replay-begin since it connected or was displaced) (line ${begin + 1})`,
    );
    expect(checkInvariants(loadSource(file), fixtureAdapter()).violations).toEqual([expect.objectContaining({ rule: 'owner', seq, line: begin + 1 })]);
  });

  it('catches a gap in a journal (a deleted line) and a tool call answered twice (library level)', async () => {
    const lines = (await readFile(journal, 'utf8')).split('\n');
    const gapped = join(session.root, 'gapped-journal.ndjson');
    await writeFile(gapped, [...lines.slice(0, 8), ...lines.slice(9)].join('\n'));
    const result = await runCli(['replay', gapped, '--check', '--adapter', 'fixture']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/seq-gap at seq 8: seq 8 missing in the journal/);
    // Answer the fixture's tool call twice: duplicate the stdin record that answered it, renumbering after it.
    const source = loadSource(journal);
    if (source.kind !== 'journal') throw new Error('expected a journal');
    const records = source.records.map((entry) => entry.record);
    const answer = records.findIndex((record) => record.kind === 'stdin' && record.data.text.includes('"tool-result"'));
    const doubled = [...records.slice(0, answer + 1), records[answer]!, ...records.slice(answer + 1)].map((record, i) => ({ ...record, seq: i + 1 }));
    const check = checkInvariants({ ...source, records: doubled.map((record, i) => ({ line: i + 2, record })) }, fixtureAdapter());
    expect(check.violations[0]).toMatchObject({ rule: 'tool-call', seq: answer + 2 });
  });
});

describe('replay --diff and --timeline', () => {
  it('--diff: the recording and the journal translate the same; two sessions differ at the first differing part', async () => {
    const same = await runCli(['replay', recording, '--adapter', 'fixture', '--diff', journal]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toMatch(/^same: both translations have the same \d+ parts/);
    const adapters = await runCli(['replay', recording, '--adapter', 'fixture', '--diff-adapter', 'fixture']);
    expect(adapters.code).toBe(0);

    const a = plain(withoutRedelivery(session.joined));
    const b = plain(withoutRedelivery(other.joined));
    const first = a.findIndex((part, i) => JSON.stringify(part) !== JSON.stringify(b[i]));
    expect(first, 'the two prompts produce different text').toBeGreaterThan(0);
    const differ = await runCli(['replay', session.recordDir, '--adapter', 'fixture', '--diff', other.recordDir]);
    expect(differ.code).toBe(1);
    expect(differ.stdout).toContain(`differ at part #${first} `);
    expect(differ.stdout).toMatch(/ a #\s*\d+\s+seq\s+\d+\s+text-delta .*first prompt/);
    expect(differ.stdout).toMatch(/ b #\s*\d+\s+seq\s+\d+\s+text-delta .*second prompt/);
  });

  it('--timeline shows records with seq and turn, connection events, replay traffic and the rung of the second slice', async () => {
    const result = await runCli(['replay', recording, '--timeline']);
    expect(result.code, result.stderr).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/━━ segment 1 \(all\.ndjson:1\) cursor 0/);
    expect(out).toMatch(/━━ segment 2 /);
    expect(out).toMatch(/⚑ rung attach: the same bridge/);
    expect(out).toMatch(/\+\s*\d+\.\d{3}s\s+seq\s+\d+\s+turn-\S+\s+turn-start input/);
    expect(out).toMatch(/· attached cursor=\d+/);
    expect(out).toMatch(/turn-end matched/);
    const journalTimeline = await runCli(['replay', journal, '--timeline']);
    expect(journalTimeline.code).toBe(0);
    expect(journalTimeline.stdout).toMatch(/━━ journal [0-9a-f]{8}/);
  });
});
