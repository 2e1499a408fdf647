// Regression (found by test/chaos): after a bridge SIGKILL the resumed slice
// sends a rerun; a socket drop while its ack was in flight rejected the rerun
// with outcome-unknown, but the slice had already been cleared, so the
// continued turn's `done` never settled (the consumer hung forever).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { startProxy, type TestProxy } from './proxy.ts';
import { createKit, startTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
const proxies: TestProxy[] = [];
beforeAll(async () => {
  kit = await createKit('rerun-ack');
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.close();
  await kit.cleanup();
});

describe('rerun after a bridge SIGKILL', () => {
  it('a socket drop while the rerun ack is in flight settles the continued turn with an error instead of hanging', async () => {
    const { session } = await kit.start('rerun-drop');
    let suspended: Promise<HarnessV1ResumeState> | null = null;
    const { control } = await startTurn(session, 'doomed LINES:200 INTERVAL:5', (_part, n) => {
      if (n === 10 && suspended === null) suspended = Promise.resolve(session.doSuspendTurn());
    });
    await control.done;
    const state = await suspended!;
    const stateDir = (state.data as { stateDir: string }).stateDir;
    const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
    process.kill(pid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 100));

    let proxy: TestProxy | undefined;
    // A canary.3-shaped sandbox: getPortUrl only (the harness uses getPortEndpoint when there is one).
    const wrap = (sandbox: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => ({
      ...sandbox,
      getPortEndpoint: undefined,
      getPortUrl: async ({ port }) => {
        proxy = await startProxy({ targetPort: port });
        proxies.push(proxy);
        return proxy.url;
      },
    });
    const resumed = await kit.resume('rerun-drop', state, { wrap });
    const parts: HarnessV1StreamPart[] = [];
    const continued = await resumed.session.doContinueTurn({
      emit: (part) => {
        parts.push(part);
        // The interrupted turn's finish comes right before the session sends its rerun frame: cut the socket now.
        if (part.type === 'finish' && part.finishReason.raw === 'interrupted') proxy!.dropAll();
      },
    });
    const outcome = await Promise.race([
      Promise.resolve(continued.done).then(
        () => 'resolved',
        (error: unknown) => `rejected: ${(error as { code?: string }).code}`,
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('hung'), 10_000)),
    ]);
    // Either the rerun's ack beat the drop (then the turn completes), or the slice fails explicitly; never a hang.
    expect(outcome).toMatch(/^(resolved|rejected: bridge-refused)$/);
    if (outcome === 'resolved') expect(parts.at(-1)?.type).toBe('finish');
    await resumed.session.doDestroy();
  });
});
