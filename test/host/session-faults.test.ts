// Faults between host and bridge: socket drops and port-proxy 502 spells
// (through a loopback proxy standing in for a hosted sandbox's port proxy),
// and a SIGKILLed bridge (the replay rung, then the rerun rung, marked).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { startProxy, type TestProxy } from './proxy.ts';
import { createKit, startTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
const proxies: TestProxy[] = [];
beforeAll(async () => {
  kit = await createKit('faults', { survive: false }); // the rerun rung: a CLI that dies with its bridge
});
afterAll(async () => {
  for (const proxy of proxies) await proxy.close();
  await kit.cleanup();
});

/** Routes the session's WebSocket through a proxy we control (what a hosted sandbox's getPortEndpoint returns). */
function viaProxy(onProxy: (proxy: TestProxy) => void) {
  return (sandbox: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => ({
    ...sandbox,
    getPortEndpoint: async ({ port }) => {
      const proxy = await startProxy({ targetPort: port });
      proxies.push(proxy);
      onProxy(proxy);
      return { url: proxy.url };
    },
  });
}

const expectedDeltas = (prompt: string, n: number) => Array.from({ length: n }, (_, i) => `${prompt} #${i}\n`);
const deltasOf = (parts: HarnessV1StreamPart[]) => parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta);

describe('session faults', () => {
  it('host socket drops mid-turn are invisible to the consumer: every part once, in order', async () => {
    let proxy: TestProxy | undefined;
    const { session } = await kit.start('drops', { wrap: viaProxy((p) => (proxy = p)) });
    const prompt = 'drops LINES:150 INTERVAL:4';
    const { parts, control } = await startTurn(session, prompt);
    let drops = 0;
    const timer = setInterval(() => {
      drops += proxy?.dropAll() ?? 0;
    }, 60);
    await control.done;
    clearInterval(timer);
    expect(drops, 'the test really cut live connections').toBeGreaterThan(2);
    expect(deltasOf(parts)).toEqual(expectedDeltas(prompt, 150));
    expect(parts.filter((p) => p.type === 'stream-start' || p.type === 'finish')).toHaveLength(2);
    await session.doDestroy();
  });

  it('survives a port-proxy 502 spell when the reconnect budget allows it', async () => {
    let proxy: TestProxy | undefined;
    const { session } = await kit.start('spell-ok', {
      wrap: viaProxy((p) => (proxy = p)),
      settings: { channel: { reconnectDeadlineMs: 20_000, backoff: { initialMs: 50, maxMs: 300 } } },
    });
    const prompt = 'spell LINES:80 INTERVAL:10';
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 10) {
        proxy!.setMode('http-502');
        proxy!.dropAll();
        setTimeout(() => proxy!.setMode('pass'), 2_500);
      }
    });
    await control.done;
    expect(proxy!.stats.answeredHttpError, 'the proxy answered 502 during the spell').toBeGreaterThan(0);
    expect(deltasOf(parts)).toEqual(expectedDeltas(prompt, 80));
    await session.doDestroy();
  });

  it('survives a 502 spell longer than 30 s with the default reconnect budget (several minutes)', { timeout: 90_000 }, async () => {
    let proxy: TestProxy | undefined;
    const { session } = await kit.start('spell-long', { wrap: viaProxy((p) => (proxy = p)) });
    const prompt = 'long spell LINES:40 INTERVAL:20';
    const spellMs = Number(process.env.HB_SPELL_MS ?? 31_000);
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 5) {
        proxy!.setMode('http-502');
        proxy!.dropAll();
        setTimeout(() => proxy!.setMode('pass'), spellMs);
      }
    });
    const started = Date.now();
    await control.done;
    expect(Date.now() - started, 'the spell really lasted').toBeGreaterThanOrEqual(spellMs - 1_000);
    expect(deltasOf(parts)).toEqual(expectedDeltas(prompt, 40));
    await session.doDestroy();
  });

  it('fails with a clear error naming the last cursor when a 502 spell outlasts the budget', async () => {
    let proxy: TestProxy | undefined;
    const { session } = await kit.start('spell-fail', {
      wrap: viaProxy((p) => (proxy = p)),
      settings: { channel: { reconnectDeadlineMs: 1_000, backoff: { initialMs: 50, maxMs: 200 } } },
    });
    const { control } = await startTurn(session, 'spell LINES:400 INTERVAL:10', (_p, n) => {
      if (n === 10) {
        proxy!.setMode('http-502');
        proxy!.dropAll();
      }
    });
    const error = await Promise.resolve(control.done).then(
      () => null,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(error?.code).toBe('channel-lost');
    expect(error?.message).toMatch(/cursor \d+/);
    proxy!.setMode('pass');
    await session.doDestroy();
  });

  it('a drop right after start or a stdin tool result (ack lost, outcome unknown) is settled from the journal: the turn completes once', async () => {
    let proxy: TestProxy | undefined;
    const { session } = await kit.start('lost-ack', { wrap: viaProxy((p) => (proxy = p)) });
    let settled = 0;
    for (let round = 0; round < 8; round++) {
      const prompt = `lost ack ${round} LINES:5 TOOL:lookup`;
      const parts: HarnessV1StreamPart[] = [];
      const pending = session.doPromptTurn({
        prompt,
        emit: (part) => {
          parts.push(part);
          if (part.type === 'tool-call') {
            void control.then((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'x' }));
            setImmediate(() => proxy!.dropAll()); // cut the socket while the tool result's ack is in flight
          }
        },
      });
      const control = Promise.resolve(pending);
      setImmediate(() => proxy!.dropAll()); // cut the socket while the start's ack is in flight
      await (await control).done;
      expect(deltasOf(parts), `round ${round}: every delta once`).toEqual(expectedDeltas(prompt, 5));
      expect(parts.filter((p) => p.type === 'tool-call'), `round ${round}: the tool call once`).toHaveLength(1);
    }
    settled = kit.diagnostics.filter((d) => d.sessionId === 'lost-ack' && /lost its ack/.test(d.message)).length;
    console.log(`[figures] lost-ack rounds=8 settled-from-journal=${settled}`);
    await session.doDestroy();
  });

  it('bridge SIGKILL mid-turn: the replay rung delivers everything journaled, then the rerun rung recomputes, marked', async () => {
    const { session } = await kit.start('sigkill');
    const prompt = 'crash LINES:200 INTERVAL:5';
    let suspended: Promise<HarnessV1ResumeState> | null = null;
    let stateDir = '';
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 30 && suspended === null) {
        suspended = (async () => {
          const state = await session.doSuspendTurn();
          stateDir = (state.data as { stateDir: string }).stateDir;
          const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
          process.kill(pid, 'SIGKILL');
          return state;
        })();
      }
    });
    await control.done;
    const state = await suspended!;
    const resumed = await kit.resume('sigkill', state);
    const rest: HarnessV1StreamPart[] = [];
    const control2 = await resumed.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await control2.done;
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['replay', 'rerun']);
    const all = [...parts, ...rest];
    const marker = all.findIndex((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message)));
    expect(marker, 'a recomputed marker stands where the rerun began').toBeGreaterThan(0);
    const before = deltasOf(all.slice(0, marker));
    const after = deltasOf(all.slice(marker));
    // Everything journaled before the kill arrives exactly once, in order: a prefix of the full output.
    expect(before).toEqual(expectedDeltas(prompt, before.length));
    expect(before.length, 'everything delivered before the kill was kept').toBeGreaterThanOrEqual(25);
    // The rerun re-drives the prompt on the same CLI thread and completes.
    expect(after).toEqual(expectedDeltas(prompt, 200));
    expect(all.at(-1)?.type).toBe('finish');
    const report = kit.diagnostics.find((d) => d.sessionId === 'sigkill' && d.attrs?.rung === 'rerun');
    expect(report?.level).toBe('warn');
    await resumed.session.doDestroy();
    void textOf;
  });
});
