// Which registered adapter produced a journal, guessed from the argv its
// turns launched (turn-start and spawn records), so `replay` works without
// --adapter on the common cases. A guess only: --adapter always wins.
import { posix } from 'node:path';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';

const byExecutable: ReadonlyArray<readonly [RegExp, string]> = [
  [/^fixture-cli\.mjs$/, 'fixture'],
  [/^claude(\.exe)?$/, 'claude-code'],
  [/^cli\.js$/, 'claude-code'],
];

export function guessAdapterId(records: Iterable<JournalRecord>): string | undefined {
  for (const record of records) {
    const argv = record.kind === 'turn-start' ? record.data.argv : record.kind === 'spawn' ? record.data.argv : undefined;
    if (!argv) continue;
    for (const arg of argv.slice(0, 2)) {
      const name = posix.basename(arg);
      for (const [pattern, id] of byExecutable) if (pattern.test(name)) return id;
    }
  }
  return undefined;
}
