// A real SIGKILL: a child process appends in a loop and prints the seqs its
// journal reported durable; we kill -9 it at a random moment, reopen, and every
// seq it reported must be there (write before send, docs/design.md#d2). Three rounds
// on the same journal also check that seq continues across killed bridges.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openRecorded, readAll, removeTempDirs, seqOf, tempStateDir } from './journal-helpers.ts';

afterEach(removeTempDirs);

const writer = fileURLToPath(new URL('../fixtures/journal-writer.ts', import.meta.url));

type Run = { openedAt: number; maxDurable: number; durableReports: number };

/** Starts the writer, waits until it has reported `minDurable` seqs past where it opened, then SIGKILLs it after `delayMs`. */
function runAndKill(stateDir: string, minDurable: number, delayMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, stateDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const run: Run = { openedAt: -1, maxDurable: -1, durableReports: 0 };
    let pending = '';
    let stderr = '';
    let killScheduled = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const [word, value] = line.split(' ');
        if (word === 'open') run.openedAt = Number(value);
        if (word === 'durable') {
          run.maxDurable = Math.max(run.maxDurable, Number(value));
          run.durableReports++;
        }
      }
      if (!killScheduled && run.openedAt >= 0 && run.maxDurable >= run.openedAt + minDurable) {
        killScheduled = true;
        setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.on('error', reject);
    // 'close' waits for stdout to drain: every line the child wrote before dying is counted.
    child.on('close', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`writer exited ${code} ${signal}: ${stderr}`));
      else resolve(run);
    });
  });
}

describe('SIGKILL', () => {
  it('every seq reported durable before a kill -9 is in the reopened journal, and seq continues', async () => {
    const stateDir = tempStateDir();
    const seed = Number(process.env.JOURNAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
    let state = seed;
    const random = (): number => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state / 2 ** 31;
    };
    let previousLast = 0;
    const notes: string[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const run = await runAndKill(stateDir, 2000, Math.floor(random() * 150));
        expect(run.openedAt).toBe(previousLast);
        const { journal } = await openRecorded(stateDir);
        expect(journal.lastSeq).toBeGreaterThanOrEqual(run.maxDurable);
        let next = 1;
        for (const batch of await readAll(journal, 1, journal.lastSeq, 5000)) {
          for (const line of batch) expect(seqOf(line)).toBe(next++);
        }
        expect(next).toBe(journal.lastSeq + 1);
        notes.push(`${run.maxDurable} reported/${journal.lastSeq} kept/${journal.recovered.droppedRecords} torn`);
        previousLast = journal.lastSeq;
        await journal.close();
      }
    } catch (error) {
      console.log(`journal SIGKILL test failed with seed ${seed} (rerun: JOURNAL_SEED=${seed})`);
      throw error;
    }
    console.log(`[figures] journal sigkill 3 rounds (seed ${seed}): ${notes.join(', ')}; 0 reported seqs lost`);
  });
});
