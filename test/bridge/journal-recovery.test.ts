// Journal crash consistency (issue 8): truncate at every byte offset of the
// last records and flip bits at random positions; reopening must keep every
// complete valid record, drop the rest, report what it dropped, and continue
// seq right after the last kept record.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeLine } from '../../protocol/journal/line-format.ts';
import { journalFileName } from '../../bridge/journal/journal.ts';
import { openRecorded, readAll, removeTempDirs, sampleText, stdout, tempStateDir } from './journal-helpers.ts';

afterEach(removeTempDirs);

/** A closed journal of `count` records; its bytes, record JSON and line offsets. */
async function makeJournal(count: number) {
  const stateDir = tempStateDir();
  const { journal, batches } = await openRecorded(stateDir);
  for (let i = 1; i <= count; i++) journal.append(stdout(sampleText(i)));
  await journal.close();
  const bytes = readFileSync(join(stateDir, journalFileName));
  const lineEnds: number[] = []; // lineEnds[0] = end of header; lineEnds[k] = end of record k (past its newline)
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) lineEnds.push(i + 1);
  expect(lineEnds).toHaveLength(count + 1);
  return { journalId: journal.journalId, bytes, records: batches.flatMap((b) => b.lines), lineEnds };
}

type Expected = { journalId?: string; lastSeq: number; droppedBytes: number; droppedRecords: number };

/** Writes `bytes` as the journal in a fresh state dir, reopens, checks, appends one, reopens again. */
async function reopenAndCheck(bytes: Uint8Array, records: string[], expected: Expected): Promise<void> {
  const stateDir = tempStateDir();
  mkdirSync(stateDir, { mode: 0o700 });
  writeFileSync(join(stateDir, journalFileName), bytes, { mode: 0o600 });
  const { journal } = await openRecorded(stateDir);
  expect(journal.recovered).toEqual({ droppedBytes: expected.droppedBytes, droppedRecords: expected.droppedRecords });
  expect(journal.lastSeq).toBe(expected.lastSeq);
  if (expected.journalId !== undefined) expect(journal.journalId).toBe(expected.journalId);
  else expect(journal.journalId).not.toBe('');
  expect((await readAll(journal, 1, Number.MAX_SAFE_INTEGER, 1000)).flat()).toEqual(records.slice(0, expected.lastSeq));
  expect(journal.append(stdout('after recovery'))).toBe(expected.lastSeq + 1);
  await journal.close();
  const again = await openRecorded(stateDir);
  expect(again.journal.recovered).toEqual({ droppedBytes: 0, droppedRecords: 0 });
  expect(again.journal.lastSeq).toBe(expected.lastSeq + 1);
  await again.journal.close();
}

/** Dropped lines as recovery counts them: newline-terminated ones plus a final fragment. */
function countLines(bytes: Uint8Array): number {
  let lines = 0;
  for (const byte of bytes) if (byte === 0x0a) lines++;
  return bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? lines + 1 : lines;
}

const figures: string[] = [];

describe('recovery', () => {
  it('truncated at every byte offset within the last 3 records: keeps every complete record', async () => {
    const count = 20;
    const { journalId, bytes, records, lineEnds } = await makeJournal(count);
    const from = lineEnds[count - 3]!;
    for (let cut = from; cut <= bytes.length; cut++) {
      const complete = lineEnds.filter((end) => end <= cut).length - 1;
      const boundary = lineEnds[complete]!;
      await reopenAndCheck(bytes.subarray(0, cut), records, {
        journalId,
        lastSeq: complete,
        droppedBytes: cut - boundary,
        droppedRecords: cut > boundary ? 1 : 0,
      });
    }
    figures.push(`${bytes.length - from + 1} truncation offsets`);
  });

  it('a torn or missing header starts a new journal and reports the whole file as dropped', async () => {
    const { journalId, bytes, records, lineEnds } = await makeJournal(3);
    for (const cut of [0, 1, 9, lineEnds[0]! - 1]) {
      await reopenAndCheck(bytes.subarray(0, cut), records, { lastSeq: 0, droppedBytes: cut, droppedRecords: 0 });
    }
    const flipped = Buffer.from(bytes);
    flipped[20]! ^= 0x04;
    const stateDir = tempStateDir();
    mkdirSync(stateDir, { mode: 0o700 });
    writeFileSync(join(stateDir, journalFileName), flipped);
    const { journal } = await openRecorded(stateDir);
    expect(journal.journalId).not.toBe(journalId);
    expect(journal.recovered).toEqual({ droppedBytes: bytes.length, droppedRecords: 3 });
    expect(journal.lastSeq).toBe(0);
    await journal.close();
  });

  it('flipped bits anywhere in the records: keeps exactly the records before the first damaged line', async () => {
    const count = 50;
    const { journalId, bytes, records, lineEnds } = await makeJournal(count);
    const headerEnd = lineEnds[0]!;
    const seed = Number(process.env.JOURNAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const numRuns = Number(process.env.JOURNAL_FLIP_RUNS ?? 300);
    const flip = fc.record({ position: fc.integer({ min: headerEnd, max: bytes.length - 1 }), bit: fc.integer({ min: 0, max: 7 }) });
    try {
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(flip, { minLength: 1, maxLength: 3, selector: (f) => f.position }), async (flips) => {
          const damaged = Buffer.from(bytes);
          for (const { position, bit } of flips) damaged[position]! ^= 1 << bit;
          const first = Math.min(...flips.map((f) => f.position));
          const kept = lineEnds.filter((end) => end <= first).length - 1; // records wholly before the first flip
          const boundary = lineEnds[kept]!;
          await reopenAndCheck(damaged, records, {
            journalId,
            lastSeq: kept,
            droppedBytes: bytes.length - boundary,
            droppedRecords: countLines(damaged.subarray(boundary)),
          });
        }),
        { seed, numRuns },
      );
    } catch (error) {
      console.log(`journal bit-flip property failed with seed ${seed} (rerun: JOURNAL_SEED=${seed})`);
      throw error;
    }
    figures.push(`${numRuns} bit-flip cases (seed ${seed})`);
  });

  it('drops a seq gap, a duplicated line, a foreign line with a valid crc, and an over-long garbage tail', async () => {
    const { journalId, bytes, records, lineEnds } = await makeJournal(12);
    const line = (k: number): Buffer => bytes.subarray(lineEnds[k - 1]!, lineEnds[k]!);
    const upTo = (k: number): Buffer => bytes.subarray(0, lineEnds[k]!);
    const cases: Array<[string, Buffer, number, number]> = [
      ['gap', Buffer.concat([upTo(10), line(12)]), 10, 1],
      ['duplicate', Buffer.concat([upTo(10), line(10), line(11)]), 10, 2],
      ['foreign', Buffer.concat([upTo(12), encodeLine('{"type":"not-a-record"}')]), 12, 1],
      ['seq-first-but-stale', Buffer.concat([upTo(12), encodeLine('{"seq":3,"x":1}')]), 12, 1],
      ['garbage', Buffer.concat([upTo(12), Buffer.alloc(1024 * 1024 + 5, 'x')]), 12, 1],
    ];
    for (const [name, file, lastSeq, droppedRecords] of cases) {
      const droppedBytes = file.length - lineEnds[lastSeq]!;
      await expect(reopenAndCheck(file, records, { journalId, lastSeq, droppedBytes, droppedRecords }), name).resolves.toBeUndefined();
    }
  });

  it('refuses a journal written in a newer format instead of overwriting it', async () => {
    const stateDir = tempStateDir();
    mkdirSync(stateDir, { mode: 0o700 });
    const header = encodeLine(JSON.stringify({ type: 'journal-header', format: 2, journalId: 'j', createdAt: 1 }));
    writeFileSync(join(stateDir, journalFileName), header);
    await expect(openRecorded(stateDir)).rejects.toThrow(/format 2/);
    expect(readFileSync(join(stateDir, journalFileName)).equals(header)).toBe(true);
  });

  it('recovers an appended-to torn tail in place', async () => {
    const stateDir = tempStateDir();
    const first = await openRecorded(stateDir);
    for (let i = 1; i <= 10; i++) first.journal.append(stdout(sampleText(i)));
    await first.journal.close();
    appendFileSync(join(stateDir, journalFileName), '1234abcd\t{"seq":11,"tu');
    const second = await openRecorded(stateDir);
    expect(second.journal.recovered).toEqual({ droppedBytes: 22, droppedRecords: 1 });
    expect(second.journal.lastSeq).toBe(10);
    expect(second.journal.append(stdout('next'))).toBe(11);
    await second.journal.close();
    console.log(`[figures] journal recovery ${figures.join(', ')}: every complete record kept, torn/corrupt tail dropped and counted`);
  });
});
