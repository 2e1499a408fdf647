// Shared by the journal tests: temp state dirs, a journal that records its
// onDurable batches, and draining read().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal, type AppendedBatch, type JournalOptions } from '../../bridge/journal/journal.ts';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';

const dirs: string[] = [];

/** A fresh parent dir; the state dir inside it does not exist yet (open creates it). */
export function tempStateDir(): string {
  const parent = mkdtempSync(join(tmpdir(), 'journal-test-'));
  dirs.push(parent);
  return join(parent, 'state');
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export type Recorded = { journal: Journal; batches: AppendedBatch[] };

export async function openRecorded(stateDir: string, options: Partial<JournalOptions> = {}): Promise<Recorded> {
  const batches: AppendedBatch[] = [];
  const journal = await Journal.open({
    stateDir,
    fsyncPolicy: 'never',
    keepBatchLines: true,
    ...options,
    onDurable: (batch) => {
      batches.push(batch);
      options.onDurable?.(batch);
    },
  });
  return { journal, batches };
}

export function stdout(text: string, turnId: string | null = 't1'): RecordDraft {
  return { turnId, kind: 'stdout', data: { text } };
}

/** Text for record i: varied lengths, some non-ASCII, so offsets are not uniform. */
export function sampleText(i: number): string {
  const base = `line ${i} `;
  switch (i % 5) {
    case 0:
      return base + 'x'.repeat(i % 97);
    case 1:
      return base + 'héllo wörld ✓';
    case 2:
      return base + '🌍'.repeat(1 + (i % 7));
    case 3:
      return base + '"quoted"\n\ttabbed\\';
    default:
      return base;
  }
}

export async function readAll(journal: Journal, from: number, to: number, maxBatchRecords: number): Promise<string[][]> {
  const batches: string[][] = [];
  for await (const batch of journal.read(from, to, maxBatchRecords)) batches.push(batch);
  return batches;
}

export function seqOf(json: string): number {
  return (JSON.parse(json) as { seq: number }).seq;
}

/** Lets pending setImmediate flushes and their writes run. */
export function nextTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
