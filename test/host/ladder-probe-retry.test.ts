// Regression (found by test/chaos): one 502 from a port proxy on the resume
// probe made the ladder take the replay rung and spawn a second bridge on the
// same state dir while the first one was alive and still writing the journal.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import { startProxy, type TestProxy } from './proxy.ts';
import { createKit, type Kit } from './session-helpers.ts';

let kit: Kit;
const proxies: TestProxy[] = [];
beforeAll(async () => {
  kit = await createKit('probe-retry');
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.close();
  await kit.cleanup();
});

const bridgePid = async (stateDir: string): Promise<number> =>
  (JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number }).pid;

describe('resume probe', () => {
  it('a transient 502 on the resume probe attaches to the live bridge instead of spawning a second one on its journal', async () => {
    const { session } = await kit.start('probe-502');
    const state = await session.doSuspendTurn();
    const stateDir = (state.data as { stateDir: string }).stateDir;
    const before = await bridgePid(stateDir);
    // A canary.3-shaped sandbox: getPortUrl only (the harness uses getPortEndpoint when there is one).
    const wrap = (sandbox: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => ({
      ...sandbox,
      getPortEndpoint: undefined,
      getPortUrl: async ({ port }) => {
        // The first connection through the port proxy gets a 502 (it is reshuffling); later ones pass.
        const proxy = await startProxy({ targetPort: port, mode: proxies.length === 0 ? 'http-502' : 'pass' });
        proxies.push(proxy);
        const first = proxy;
        const timer = setInterval(() => {
          if (first.stats.answeredHttpError > 0) {
            first.setMode('pass');
            clearInterval(timer);
          }
        }, 5);
        return proxy.url;
      },
    });
    const resumed = await kit.resume('probe-502', state, { wrap });
    expect(proxies[0]!.stats.answeredHttpError, 'the probe really met a 502').toBeGreaterThan(0);
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['attach']);
    expect(await bridgePid(stateDir), 'the same bridge process still owns the state dir').toBe(before);
    await resumed.session.doDestroy();
  });
});
