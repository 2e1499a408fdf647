// Reaching a bridge costs one connection, not two: the ladder's probe socket
// becomes the session's first channel (host/reach/spare-socket.ts), on a fresh
// start and on a resume alike. Counted by the bridge itself: its connection
// ids are sequential, and each attach logs the id it came on, so two sessions
// attaching one after the other use consecutive ids only when no probe
// connection came between. A channel opened after the spare expired connects
// afresh and works.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKit, runTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('probe-reuse');
});
afterAll(async () => {
  await kit.cleanup();
});

/** Connection ids of the bridge's `attached` log lines, once `count` are there (async log: polled, hang guard 10 s). */
async function attachedIds(count: number): Promise<number[]> {
  const files = (await readdir(kit.root, { recursive: true })).filter((file) => file.endsWith('bridge.log'));
  expect(files).toHaveLength(1);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = (await readFile(join(kit.root, files[0]!), 'utf8')).split('\n').filter((line) => line.includes('"msg":"attached"'));
    if (lines.length >= count || Date.now() > deadline) return lines.map((line) => JSON.parse(line).connection as number);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('probe socket reuse', () => {
  it('a start and a resume each attach on the connection their probe opened', async () => {
    const { session } = await kit.start('one');
    expect((await runTurn(session, 'warm LINES:2')).filter((p) => p.type === 'text-delta')).toHaveLength(2);
    const state = await session.doDetach();
    const resumed = await kit.resume('one', state);
    expect((await runTurn(resumed.session, 'again LINES:3')).filter((p) => p.type === 'text-delta')).toHaveLength(3);
    const ids = await attachedIds(2);
    expect(ids).toHaveLength(2);
    expect(ids[1]! - ids[0]!, `attached on connections ${ids.join(', ')}`).toBe(1);
    await resumed.session.doDetach();
  });

  it('a channel opened after the spare socket expired connects afresh', async () => {
    const { session } = await kit.start('late');
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect((await runTurn(session, 'late LINES:2')).filter((p) => p.type === 'text-delta')).toHaveLength(2);
    await session.doDetach();
  });
});
