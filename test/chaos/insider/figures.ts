// The insider suite's results (test/chaos/insider/attack.mjs writes one JSON line per attempt) and
// its [figures] line, shared by the fixture-CLI suite and the real CLIs' E2E case.
import { existsSync, readFileSync } from 'node:fs';

export type Attempt = { attempt: string; success: boolean; refusedBy: string | null; detail?: string; onHost?: string };

/** The attempts from the results file; a file the attacker planted counts only if it is in the real state dir. */
export function readAttempts(resultsFile: string): Attempt[] {
  return readFileSync(resultsFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Attempt)
    .map((a) => (a.onHost === undefined || existsSync(a.onHost) ? a : { ...a, success: false, refusedBy: 'mount-namespace' }));
}

/** `kill -9 -1` is decided from outside: did the bridge survive it? */
export function killAllAttempt(ran: boolean, bridgeAlive: boolean, mode: string): Attempt {
  if (!ran) return { attempt: 'kill-all', success: true, refusedBy: null, detail: "not run: with the bridge's uid and pid namespace it kills the bridge (and, as root, everything)" };
  return { attempt: 'kill-all', success: !bridgeAlive, refusedBy: bridgeAlive ? (mode === 'uid' ? 'uid' : 'pid-namespace') : null };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function figuresLine(label: string, attempts: readonly Attempt[]): string {
  const refused = new Map<string, number>();
  for (const a of attempts) if (!a.success) refused.set(a.refusedBy ?? '?', (refused.get(a.refusedBy ?? '?') ?? 0) + 1);
  const successes = attempts.filter((a) => a.success);
  return (
    `[figures] insider ${label} attempts=${attempts.length} successes=${successes.length}` +
    (successes.length ? ` (${successes.map((a) => a.attempt).join(',')})` : '') +
    ` refused-by=${[...refused].map(([k, v]) => `${k}:${v}`).join(',')}`
  );
}
