// The insider attack suite run by a real CLI's own shell tool (issue 14; docs/security.md#attack-suite):
// the scripted model asks for one shell call, `node attack.mjs …` (SCENARIO:shell with the command in
// CMD, base64url), and the CLI runs it the way it runs any command the model chooses — under the
// bridge's default isolation and the E2E sandbox's network policy (the scripted model only). The
// attack ends with `kill -9 -1`, which takes the CLI with it: the turn's outcome is not the point;
// the results file, the bridge's survival and the host's journal are.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { alive, figuresLine, killAllAttempt, readAttempts } from '../chaos/insider/figures.ts';
import type { E2eEnv } from './support.ts';

const attackScript = new URL('../chaos/insider/attack.mjs', import.meta.url).pathname;

export function insiderE2eCase(env: E2eEnv, cli: string): void {
  it(`${cli}: the insider attack, run by the CLI's own shell tool, gets nowhere (default isolation, a policy allowing the scripted model only)`, async () => {
    const { session, workDir, sandbox } = await env.open('insider');
    // The session's state dir and its bridge (the attacker is told where everything is).
    const sessions = join(sandbox.defaultWorkingDirectory, '.harness-bridge', 'sessions');
    const stateDir = join(sessions, (await readdir(sessions)).find((name) => name.endsWith('-insider'))!);
    const ready = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number; port: number };
    const results = join(workDir, 'attack-results.ndjson');
    const hints = { stateDir, bridgePid: ready.pid, port: ready.port, results, killAll: true };
    const command = `${process.execPath} ${attackScript} '${JSON.stringify(hints)}'`;
    const prompt = `SCENARIO:shell CMD:${Buffer.from(command).toString('base64url')} run the check`;
    const control = await session.doPromptTurn({ prompt, emit: () => undefined });
    await Promise.resolve(control.done).catch(() => undefined); // kill -9 -1 ends the CLI mid-tool
    const bridgeAlive = alive(ready.pid);
    const attempts = [...readAttempts(results), killAllAttempt(true, bridgeAlive, 'namespace')];
    console.log(figuresLine(`cli=${cli}`, attempts));
    expect(attempts.filter((a) => a.success).map((a) => a.attempt)).toEqual([]);
    expect(attempts.length, 'every attempt ran').toBeGreaterThanOrEqual(20);
    expect(bridgeAlive).toBe(true);
    // The host still owns the session: a new turn runs (on a new CLI process) and the journal holds no forged record.
    const next = await session.doPromptTurn({ prompt: 'SCENARIO:text after the insider', emit: () => undefined });
    await next.done;
    const journal = await readFile(join(stateDir, 'journal.ndjson'), 'utf8');
    expect(journal).not.toContain('forged by the insider');
    await session.doDestroy();
  }, 180_000);
}
