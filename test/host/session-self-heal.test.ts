// A bridge SIGKILLed mid-turn is brought back by the session itself (host/reach/revive.ts):
// no suspend, no doStart({ resumeFrom }), the same doPromptTurn stream. With launch
// `survive` the new bridge adopts the kept CLI: the parts equal an uninterrupted run,
// nothing recomputed. Without it, the turn is recomputed in the same stream.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../host/sandbox/local/pids.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createKit, runTurn, startTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('self-heal', { survive: true });
});
afterAll(async () => {
  await kit.cleanup();
});

const recomputed = (parts: HarnessV1StreamPart[]) =>
  parts.some((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message)));

const stateDirOf = (workDir: string, sessionId: string) => join(workDir, '..', '.harness-bridge', 'sessions', `fixture-${sessionId}`);

/** The journal's records (crc, tab, JSON per line). */
async function journal(workDir: string, sessionId: string): Promise<Array<{ kind: string; data: Record<string, unknown> }>> {
  const text = await readFile(join(stateDirOf(workDir, sessionId), 'journal.ndjson'), 'utf8');
  return text
    .split('\n')
    .slice(1)
    .filter((line) => line.includes('\t'))
    .map((line) => JSON.parse(line.slice(line.indexOf('\t') + 1)) as { kind: string; data: Record<string, unknown> });
}

async function killBridge(workDir: string, sessionId: string): Promise<number> {
  const stateDir = stateDirOf(workDir, sessionId);
  const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
  process.kill(pid, 'SIGKILL');
  while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 5));
  return pid;
}

describe('self-healing session', () => {
  it('bridge SIGKILL mid-turn with survive: the same stream goes on, parts equal an uninterrupted run', { timeout: 60_000 }, async () => {
    const prompt = 'heal LINES:120 INTERVAL:10';
    const reference = await kit.start('heal-reference');
    const expected = await runTurn(reference.session, prompt);
    await reference.session.doDestroy();

    const { session, workDir } = await kit.start('heal');
    let killed: Promise<number> | null = null;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 30 && killed === null) killed = killBridge(workDir, 'heal');
    });
    await control.done;
    expect(await killed).toBeGreaterThan(0);
    expect(recomputed(parts)).toBe(false);
    expect(parts).toEqual(expected);
    expect((session as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
    const warnings = kit.diagnostics.filter((d) => d.level === 'warn' && /looks dead|revived|the session continues/.test(d.message));
    expect(warnings.length).toBeGreaterThanOrEqual(3);
    const next = await runTurn(session, 'again LINES:3');
    expect(next.at(-1)?.type).toBe('finish');
    await session.doDestroy();
  });

  it('a host tool answer given while the bridge is dead is delivered once, after the revival', { timeout: 60_000 }, async () => {
    const { session, workDir } = await kit.start('heal-tool');
    let killed: Promise<number> | null = null;
    let answered: Promise<void> | null = null;
    let control!: Awaited<ReturnType<typeof startTurn>>['control'];
    const started = await startTurn(session, 'tool LINES:2 TOOL:lookup', (part) => {
      if (part.type !== 'tool-call' || killed !== null) return;
      killed = killBridge(workDir, 'heal-tool');
      // Answered while the bridge is down: the channel holds it and sends it to the revived bridge.
      answered = killed.then(() => control.submitToolResult({ toolCallId: part.toolCallId, output: 'ANSWER' }));
    });
    control = started.control;
    await control.done;
    await answered;
    const parts = started.parts;
    expect(parts.filter((p) => p.type === 'tool-call')).toHaveLength(1);
    expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
    // What reached the CLI: one stdin answer, and the CLI's result line carries it once.
    const records = await journal(workDir, 'heal-tool');
    const written = records.filter((r) => r.kind === 'stdin' && String(r.data.text).includes('ANSWER'));
    const read = records.filter((r) => r.kind === 'stdout' && String(r.data.text).includes('"type":"result"') && String(r.data.text).includes('ANSWER'));
    expect([written.length, read.length]).toEqual([1, 1]);
    expect(recomputed(parts)).toBe(false);
    await session.doDestroy();
  });
});
