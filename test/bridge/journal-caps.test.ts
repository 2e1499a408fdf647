// The journal caps (docs/bridge-internals.md#journal-caps), on the built bridge with a real fixture CLI:
// - a turn past HARNESS_BRIDGE_MAX_TURN_JOURNAL_BYTES: its CLI is SIGKILLed (signal record, reason
//   journal-cap), the turn ends 'capped' naming the cap, and the next turn runs normally;
// - a session past HARNESS_BRIDGE_MAX_SESSION_JOURNAL_BYTES: the running turn is capped the same
//   way, later starts are refused with `journal-cap`, also by a bridge restarted on that journal.
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../protocol/v1/index.ts';
import { connectClient, fixtureLaunch, seqProblem, startBridge, tempDir, type RunningBridge, type TestClient } from './helpers.ts';
import { join } from 'node:path';

const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const bridge of bridges) await bridge.kill();
});

async function open(env: Record<string, string>, stateDir?: string): Promise<{ bridge: RunningBridge; client: TestClient }> {
  const bridge = await startBridge({ ...(stateDir ? { stateDir } : {}), args: ['--isolation', 'none'], env });
  bridges.push(bridge);
  const { client } = await connectClient(bridge);
  clients.push(client);
  await client.attach(0);
  return { bridge, client };
}

/** Journal bytes of a turn's records as the journal holds them (their JSON; framing adds ~10 B each). */
function turnBytes(records: readonly JournalRecord[], turnId: string): number {
  return records.filter((record) => record.turnId === turnId).reduce((sum, record) => sum + JSON.stringify(record).length, 0);
}

const flood = fixtureLaunch(['--json', '--lines', '100000', '--line-bytes', '1000']); // ~100 MB unless stopped

describe('journal caps', () => {
  it('a turn past its cap is killed and ends capped naming the cap; the next turn runs', { timeout: 60_000 }, async () => {
    const cap = 256 * 1024;
    const { client } = await open({ HARNESS_BRIDGE_MAX_TURN_JOURNAL_BYTES: String(cap) });
    expect((await client.request({ type: 'start', id: 's1', turnId: 't1', launch: flood })).type).toBe('ack');
    const end = (await client.waitForRecord((record) => record.kind === 'turn-end' && record.turnId === 't1')) as Extract<JournalRecord, { kind: 'turn-end' }>;
    expect(end.data.reason).toBe('capped');
    expect(end.data.message).toMatch(/maxTurnJournalBytes/);
    const records = client.records();
    expect(records.some((record) => record.kind === 'signal' && record.turnId === 't1' && record.data.signal === 'SIGKILL' && record.data.reason === 'journal-cap')).toBe(true);
    const written = turnBytes(records, 't1');
    // Past the cap only what was already read from the CLI's pipe when it was killed (a few pipe reads).
    expect(written).toBeGreaterThan(cap);
    expect(written).toBeLessThan(cap + 4 * 1024 * 1024);

    expect((await client.request({ type: 'start', id: 's2', turnId: 't2', launch: fixtureLaunch(['--json', '--lines', '3']) })).type).toBe('ack');
    const next = (await client.waitForRecord((record) => record.kind === 'turn-end' && record.turnId === 't2')) as Extract<JournalRecord, { kind: 'turn-end' }>;
    expect(next.data).toMatchObject({ reason: 'exit', code: 0 });
    expect(seqProblem(client.records(), 1, client.records().at(-1)!.seq)).toBeNull();
    console.log(`[figures] journal cap per turn: cap ${cap} B, the capped turn journaled ${written} B (${(((written - cap) / 1024) | 0)} KiB past the cap) of ~100 MB the CLI would write; next turn: exit 0`);
  });

  it('a session past its cap: the turn is capped, later starts are refused with journal-cap, also after a restart', { timeout: 60_000 }, async () => {
    const cap = 512 * 1024;
    const stateDir = join(tempDir(), 'state');
    const env = { HARNESS_BRIDGE_MAX_SESSION_JOURNAL_BYTES: String(cap) };
    const { bridge, client } = await open(env, stateDir);
    expect((await client.request({ type: 'start', id: 's1', turnId: 't1', launch: flood })).type).toBe('ack');
    const end = (await client.waitForRecord((record) => record.kind === 'turn-end' && record.turnId === 't1')) as Extract<JournalRecord, { kind: 'turn-end' }>;
    expect(end.data.reason).toBe('capped');
    expect(end.data.message).toMatch(/maxSessionJournalBytes/);
    const refused = await client.request({ type: 'start', id: 's2', turnId: 't2', launch: fixtureLaunch(['--json', '--lines', '3']) });
    expect(refused).toMatchObject({ type: 'error', code: 'journal-cap' });

    await client.close();
    await bridge.kill('SIGTERM');
    const again = await open(env, stateDir);
    const refusedAgain = await again.client.request({ type: 'start', id: 's3', turnId: 't3', launch: fixtureLaunch(['--json', '--lines', '3']) });
    expect(refusedAgain).toMatchObject({ type: 'error', code: 'journal-cap' });
    console.log(`[figures] journal cap per session: cap ${cap} B; the running turn capped, 2/2 later starts refused journal-cap (one after a restart)`);
  });
});
