// Stopping a set of processes (the supervisor's stop, docs/bridge-internals.md#supervisor): EOF on
// stdin first, SIGTERM to each group not ended after the EOF wait, SIGKILL to those left when the
// grace is over. Each signal is journaled before it is sent.
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';
import type { ProcEntry } from './proc-entry.ts';

export async function stopProcesses(
  entries: ProcEntry[],
  how: {
    graceMs: number;
    /** How long EOF alone is given (capped at a third of the grace). */
    eofWaitMs: number;
    emit: (draft: RecordDraft) => void;
    /** The turn a signal record belongs to (the running turn's process) or null. */
    turnIdOf: (entry: ProcEntry) => string | null;
  },
): Promise<void> {
  for (const entry of entries) entry.proc.endStdin();
  const all = Promise.all(entries.map((e) => e.proc.done));
  // Within the grace: EOF first, and the SIGTERM only if the CLI has not ended by itself meanwhile.
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'grace'>((resolve) => (timer = setTimeout(() => resolve('grace'), how.graceMs)));
  const eofWait = Math.min(how.eofWaitMs, Math.floor(how.graceMs / 3));
  if (eofWait > 0 && entries.some((e) => e.proc.hasStdin)) await Promise.race([all, new Promise((resolve) => setTimeout(resolve, eofWait))]);
  for (const entry of entries) {
    if (entry.proc.exited) continue;
    how.emit({ kind: 'signal', turnId: how.turnIdOf(entry), data: { signal: 'SIGTERM', reason: 'stop' } });
    entry.proc.killGroup('SIGTERM');
  }
  const first = await Promise.race([all.then(() => 'done' as const), graceOver]);
  clearTimeout(timer);
  if (first === 'grace') {
    for (const entry of entries) {
      if (entry.proc.exited) continue;
      how.emit({ kind: 'signal', turnId: how.turnIdOf(entry), data: { signal: 'SIGKILL', reason: 'stop-grace-expired' } });
      entry.proc.killGroup('SIGKILL');
      entry.proc.resume(); // a paused process could not deliver its exit
    }
    await all;
  }
}
