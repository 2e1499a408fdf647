// `harness-bridge replay` on a recording made by a REAL session (fixture CLI,
// createBridgeHarness with recordDir, suspended in one host instance and
// continued in another) and on that session's journal: the offline
// translation equals what the live consumer got; corrupted lines are named by
// line number; --check passes on clean input and names the seq of an injected
// gap or duplicate; --diff finds the first differing part; --timeline shows
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

/** A seq in the middle of the turn, delivered live (not as replay traffic) in the second slice. */
async function middleSeq(): Promise<number> {
  const seqs = (await readFile(recording, 'utf8'))
    .split('\n')
    .filter((line) => line.includes('"kind":"stdout"'))
    .flatMap((line) => [...line.matchAll(/"seq":(\d+)/g)].map((m) => Number(m[1])));
  return seqs.sort((a, b) => a - b)[Math.floor(seqs.length / 2)]!;
}

describe('replay re-translates offline', () => {
  it('a recording of a real two-slice session replays to the parts the live session emitted', async () => {
    expect(session.live.filter((p) => p.type === 'tool-call'), 'the unanswered tool call is delivered again').not.toHaveLength(0);
    const result = await runCli(['replay', session.recordDir, '--adapter', 'fixture', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(ndjson(result.stdout)).toEqual(plain(withoutRedelivery(session.live)));
    // The single concatenated file and the human listing agree too.
    const listing = await runCli(['replay', recording]);
    expect(listing.code, listing.stderr).toBe(0);
    expect(listing.stdout.trim().split('\n')).toHaveLength(withoutRedelivery(session.live).length);
    expect(listing.stdout).toMatch(/#\s+0\s+seq\s+\d+\s+stream-start/);
  });

  it("the session's journal replays to the same parts (adapter guessed from the argv)", async () => {
    const result = await runCli(['replay', journal, '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(ndjson(result.stdout)).toEqual(plain(withoutRedelivery(session.live)));
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

    const a = plain(withoutRedelivery(session.live));
    const b = plain(withoutRedelivery(other.live));
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
