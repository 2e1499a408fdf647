// A launch's line cap outside the protocol's range (PROTOCOL_LIMITS_V1 minLineBytes..maxLineBytesCeiling)
// is refused, never clamped (docs/writing-an-adapter.md#the-launch-spec): a silently smaller cap
// hides a long end line from the adapter's turnEnd matcher and hangs the turn.
// - the host kit: startFrame throws BridgeSessionError bad-launch naming io.maxLineBytes and the ceiling
//   (a pure function: called directly, nothing is sent);
// - the bridge (a raw start frame from another host): error bad-frame, no turn started;
// - the ceiling itself is granted as asked: a 600 KB line arrives in one piece.
import { afterAll, describe, expect, it } from 'vitest';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import { PROTOCOL_LIMITS_V1 } from '../../protocol/v1/limits.ts';
import type { JournalRecord } from '../../protocol/v1/index.ts';
import { fixtureAdapter } from '../../host/testing/fixture/fixture-adapter.ts';
import { startFrame } from '../../host/session/start-frame.ts';
import type { SessionContext } from '../../host/session/session-types.ts';
import { connectClient, fixtureLaunch, startBridge, type RunningBridge, type TestClient } from '../bridge/helpers.ts';

const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const bridge of bridges) await bridge.kill();
});

function contextAsking(maxLineBytes: number): SessionContext<unknown> {
  const base = fixtureAdapter();
  const adapter = { ...base, launch: (context: Parameters<typeof base.launch>[0]) => ({ ...base.launch(context), io: { mode: 'pipes' as const, maxLineBytes } }) };
  return { adapter, sessionWorkDir: '/tmp', bootstrapDir: '/tmp', stateDir: '/tmp/state', permissionMode: 'allow-all', skills: [], mcp: MCP_ENV_V1 } as unknown as SessionContext<unknown>;
}

const request = { prompt: 'hi', instructions: undefined, tools: [], rerunOf: undefined };

describe('a launch line cap outside the protocol range is refused, not clamped', () => {
  it('host kit: bad-launch naming io.maxLineBytes and the ceiling; the ceiling itself passes', () => {
    const asked = 4 * 1024 * 1024;
    let error: unknown;
    try {
      startFrame(contextAsking(asked), { turnId: 't', threadId: undefined }, request);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'bad-launch' });
    expect((error as Error).message).toMatch(/io\.maxLineBytes/);
    expect((error as Error).message).toMatch(String(PROTOCOL_LIMITS_V1.maxLineBytesCeiling));
    expect(() => startFrame(contextAsking(8), { turnId: 't', threadId: undefined }, request)).toThrow(/io\.maxLineBytes/);
    const ok = startFrame(contextAsking(PROTOCOL_LIMITS_V1.maxLineBytesCeiling), { turnId: 't', threadId: undefined }, request);
    expect(ok).toMatchObject({ type: 'start', launch: { io: { maxLineBytes: PROTOCOL_LIMITS_V1.maxLineBytesCeiling } } });
    console.log(`[figures] line cap: asked ${asked} B → bad-launch at start (was: clamped to ${PROTOCOL_LIMITS_V1.maxLineBytesCeiling} B silently); asked 8 B → bad-launch; asked the ceiling → granted`);
  });

  it('bridge: a raw start asking for more is bad-frame and starts nothing; at the ceiling a 600 KB line is one piece', { timeout: 60_000 }, async () => {
    const bridge = await startBridge({ args: ['--isolation', 'none'] });
    bridges.push(bridge);
    const { client } = await connectClient(bridge);
    clients.push(client);
    await client.attach(0);
    const refused = await client.request({ type: 'start', id: 's1', turnId: 't1', launch: fixtureLaunch(['--json', '--lines', '1'], { io: { mode: 'pipes', maxLineBytes: 4 * 1024 * 1024 } }) });
    expect(refused).toMatchObject({ type: 'error', code: 'bad-frame' });
    expect(client.records().some((record) => record.kind === 'turn-start')).toBe(false);

    const launch = fixtureLaunch(['--big-line', '600000'], { io: { mode: 'pipes', maxLineBytes: PROTOCOL_LIMITS_V1.maxLineBytesCeiling } });
    expect((await client.request({ type: 'start', id: 's2', turnId: 't2', launch })).type).toBe('ack');
    await client.waitForRecord((record) => record.kind === 'turn-end' && record.turnId === 't2');
    const out = client.records().filter((record): record is Extract<JournalRecord, { kind: 'stdout' }> => record.kind === 'stdout' && record.turnId === 't2');
    const big = out.find((record) => record.data.text.length >= 600_000);
    expect(big).toBeDefined();
    expect(out.some((record) => record.data.cont === true)).toBe(false);
  });
});
