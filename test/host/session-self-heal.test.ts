// A bridge SIGKILLed mid-turn is brought back by the session itself (host/reach/revive.ts):
// no suspend, no doStart({ resumeFrom }), the same doPromptTurn stream. With launch
// `survive` the new bridge adopts the kept CLI: the parts equal an uninterrupted run,
// nothing recomputed. Without it, the turn is recomputed in the same stream.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../host/sandbox/local/pids.ts';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { echoUpperTool, mcpClientAdapter } from '../fixtures/mcp-client-adapter.ts';
import { chaosAdapter, shapeOf, verifyTurn } from '../chaos/chaos-kit.ts';
import { channelOf, createKit, runTurn, startTurn, type Kit } from './session-helpers.ts';

let kit: Kit;
let plain: Kit;
/** Without survive, with the chaos adapter: HOLDAT/HOLDFILE in a prompt hold the CLI after a delta until a file exists. */
let holding: Kit;
beforeAll(async () => {
  kit = await createKit('self-heal', { survive: true });
  plain = await createKit('self-heal-plain', { survive: false });
  holding = await createKit('self-heal-hold', {}, () => chaosAdapter());
});
afterAll(async () => {
  await kit.cleanup();
  await plain.cleanup();
  await holding.cleanup();
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

  it('without survive the CLI dies with its bridge: the same stream goes on with the turn recomputed, marked', { timeout: 60_000 }, async () => {
    const { session, workDir } = await plain.start('heal-rerun');
    let killed: Promise<number> | null = null;
    const { parts, control } = await startTurn(session, 'rerun LINES:60 INTERVAL:10', (_p, n) => {
      if (n === 10 && killed === null) killed = killBridge(workDir, 'heal-rerun');
    });
    await control.done;
    await killed;
    expect(recomputed(parts)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
    expect((session as unknown as { rungs: string[] }).rungs).toEqual(['replay', 'rerun']);
    const next = await runTurn(session, 'again LINES:2');
    expect(next.at(-1)?.type).toBe('finish');
    await session.doDestroy();
  });

  // A host that suspends while its self-heal is under way: a suspend at each step of the heal (the revival reported;
  // the rerun decided, its start in flight), and a fresh host continues. Held: the bridge is killed at the turn's first
  // part, and the CLI (as the rerun's) waits after its first line until the gate opens, after the suspend.
  it.each([
    ['the revival is reported', /^bridge .* died; the session continues/, false],
    ['the rerun is decided (its start in flight)', /lost its producer; re-driving/, false],
    ['the revival is reported, the CLI held', /^bridge .* died; the session continues/, true],
    ['the rerun is decided, the CLI held', /lost its producer; re-driving/, true],
  ])('suspended as %s, continued in a fresh host: the turn ends once, recomputed, every line of the rerun once', { timeout: 90_000 }, async (when, moment, held) => {
    const id = `heal-suspend-${when.replace(/[^a-z]+/g, '-')}`;
    const { session, workDir } = await holding.start(id);
    const from = holding.diagnostics.length;
    let killed: Promise<number> | null = null;
    const gate = join(holding.root, `gate-${id}`); // a dir the CLI's own uid can pass through (createKit)
    const prompt = `suspended LINES:30 INTERVAL:10${held ? ` HOLDAT:1 HOLDFILE:${gate}` : ''}`;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === (held ? 1 : 5) && killed === null) killed = killBridge(workDir, id);
    });
    // Counted, not timed: polls for the diagnostic that marks the step (a hang guard bounds it).
    for (let i = 0; i < 6000 && !holding.diagnostics.slice(from).some((d) => moment.test(d.message)); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(holding.diagnostics.slice(from).some((d) => moment.test(d.message)), 'the heal reached the step').toBe(true);
    const state = await session.doSuspendTurn();
    await control.done;
    await killed;
    if (held) await writeFile(gate, '');
    const fresh = await holding.resume(id, state);
    const rest: HarnessV1StreamPart[] = [];
    const next = await fresh.session.doContinueTurn({ emit: (part) => rest.push(part) });
    await next.done;
    // Each segment before a recomputed marker is the run's prefix closed as interrupted; the last is a whole run.
    const verdict = verifyTurn(shapeOf(prompt), [...parts, ...rest]);
    expect(verdict).toMatchObject({ ok: true });
    expect(verdict.ok && verdict.markers, 'recomputed').toBeGreaterThanOrEqual(1);
    await fresh.session.doDestroy();
  });

  it.each([['in a fresh host', true], ['in the same host', false]])(
    'suspended as the interrupted end is read back after the revival (its rerun not yet sent), continued %s: no connection left behind, the turn re-driven once, every line once',
    { timeout: 90_000 },
    async (where, fresh) => {
      const id = `heal-suspend-at-end-${fresh ? 'fresh' : 'same'}`;
      const { session, workDir } = await holding.start(id);
      const from = holding.diagnostics.length;
      const gate = join(holding.root, `gate-${id}`);
      // Held after its first line until the gate opens: after the kill the journal's next record is the turn's interrupted end.
      const prompt = `at-end LINES:20 INTERVAL:10 HOLDAT:1 HOLDFILE:${gate}`;
      let killed: Promise<number> | null = null;
      let suspended: Promise<HarnessV1ResumeState> | null = null;
      const { parts, control } = await startTurn(session, prompt, (_p, n) => {
        if (n === 1 && killed === null) killed = killBridge(workDir, id);
        const revived = holding.diagnostics.slice(from).some((d) => /^bridge .* died; the session continues/.test(d.message));
        if (revived && suspended === null) suspended = Promise.resolve(session.doSuspendTurn());
      });
      await control.done;
      await killed;
      expect(suspended, 'a part came after the revival').not.toBeNull();
      const state = await suspended!;
      expect(channelOf(session), 'no connection opened after the suspend').toBeNull();
      await writeFile(gate, '');
      const next = fresh ? (await holding.resume(id, state)).session : session;
      const rest: HarnessV1StreamPart[] = [];
      await (await next.doContinueTurn({ emit: (part) => rest.push(part) })).done;
      const verdict = verifyTurn(shapeOf(prompt), [...parts, ...rest]);
      expect(verdict, where).toMatchObject({ ok: true });
      expect(verdict.ok && verdict.markers, 'recomputed').toBe(1);
      await next.doDestroy();
    },
  );

  it('over the exec transport (no port: each connection a relay over spawn stdio) the relay that cannot reach the bridge starts the revival', { timeout: 60_000 }, async () => {
    const execOnly = (box: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => {
      const { getPortEndpoint: _endpoint, getPortUrl: _url, ...rest } = box as HarnessV1NetworkSandboxSession & Record<string, unknown>;
      return rest as unknown as HarnessV1NetworkSandboxSession;
    };
    const prompt = 'exec LINES:80 INTERVAL:10';
    // A relay is a process spawn per connection: a loaded machine needs more than the kit's 1.5 s probe.
    const { session, workDir } = await kit.start('heal-exec', { wrap: execOnly, settings: { probeTimeoutMs: 10_000 } });
    let killed: Promise<number> | null = null;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 20 && killed === null) killed = killBridge(workDir, 'heal-exec');
    });
    await control.done;
    await killed;
    const deltas = parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta);
    expect(deltas).toEqual(Array.from({ length: 80 }, (_, i) => `${prompt} #${i}\n`));
    expect(recomputed(parts)).toBe(false);
    expect((session as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
    await session.doDestroy();
  });

  it('a sandbox that is gone ends the turn with a typed error naming the cause, not 300 s of retries', { timeout: 60_000 }, async () => {
    // The bridge is SIGKILLed for real; the sandbox then answers every call as a stopped container does (the Docker
    // provider's "Container … is not running"): the local provider cannot be made to refuse, so its methods are wrapped.
    let gone = false;
    const refuse = <T extends (...args: never[]) => unknown>(method: T): T =>
      ((...args: Parameters<T>) => (gone ? Promise.reject(new Error('sandbox heal-gone is not running')) : method(...args))) as T;
    const wrap = (box: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => {
      const restricted = box.restricted();
      const view = { ...restricted, spawn: refuse(restricted.spawn), run: refuse(restricted.run), readTextFile: refuse(restricted.readTextFile) };
      return { ...box, restricted: () => view } as HarnessV1NetworkSandboxSession;
    };
    const { session, workDir } = await plain.start('heal-gone', { wrap });
    let killed: Promise<number> | null = null;
    const { control } = await startTurn(session, 'gone LINES:400 INTERVAL:10', (_p, n) => {
      if (n !== 10 || killed !== null) return;
      gone = true;
      killed = killBridge(workDir, 'heal-gone');
    });
    const error = (await control.done.then(() => null, (reason: unknown) => reason)) as { code?: string; message?: string; cause?: { code?: string } } | null;
    await killed;
    expect(error?.code).toBe('channel-lost');
    expect(error?.cause?.code).toBe('bridge-gone');
    expect(error?.message).toMatch(/ECONNREFUSED.*could not be brought back: sandbox heal-gone is not running/);
    expect(plain.diagnostics.some((d) => d.level === 'warn' && /looks dead/.test(d.message))).toBe(true);
    gone = false;
    await Promise.resolve(session.doDestroy()).catch(() => undefined);
  });

  it('a stopped (SIGSTOP) bridge is slow, not dead: the channel keeps reconnecting and never revives it', { timeout: 60_000 }, async () => {
    const settings = { channel: { heartbeatMs: 100, connectTimeoutMs: 300 } };
    const seen = plain.diagnostics.length;
    const { session, workDir } = await plain.start('heal-slow', { settings });
    const { pid } = JSON.parse(await readFile(join(stateDirOf(workDir, 'heal-slow'), 'bridge.json'), 'utf8')) as { pid: number };
    let stopped = false;
    const { parts, control } = await startTurn(session, 'slow LINES:40 INTERVAL:10', (_p, n) => {
      if (n !== 10 || stopped) return;
      stopped = true;
      process.kill(pid, 'SIGSTOP');
    });
    // Held until the channel has dropped the silent bridge and failed to reconnect twice (heartbeat, then connect timeouts).
    const lost = () => plain.diagnostics.filter((d) => d.sessionId === undefined && /connection lost/.test(d.message)).length;
    const before = lost();
    while (!stopped || lost() < before + 2) await new Promise((resolve) => setTimeout(resolve, 10));
    process.kill(pid, 'SIGCONT');
    await control.done;
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
    expect(recomputed(parts)).toBe(false);
    expect((session as unknown as { rungs: string[] }).rungs).toEqual([]);
    expect(plain.diagnostics.slice(seen).some((d) => /looks dead|revived/.test(d.message))).toBe(false);
    await session.doDestroy();
  });

  it('a host tool over MCP (the keeper relays the CLI\'s call): an answer given while no bridge runs reaches the CLI once', { timeout: 60_000 }, async () => {
    const adapter = mcpClientAdapter({ harnessId: 'mcp-heal' });
    const sandbox = await kit.provider.createSession({ sessionId: 'heal-mcp' });
    const session = await createBridgeHarness(adapter, { probeTimeoutMs: 1_500 }).doStart({
      sessionId: 'heal-mcp',
      sandboxSession: sandbox,
      sessionWorkDir: sandbox.defaultWorkingDirectory,
      observability: { report: (d) => kit.diagnostics.push(d) },
    });
    const stateDir = join(sandbox.defaultWorkingDirectory, '.harness-bridge', 'sessions', 'mcp-heal-heal-mcp');
    let answered: Promise<void> | null = null;
    let control!: Awaited<ReturnType<typeof session.doPromptTurn>>;
    control = await session.doPromptTurn({
      prompt: 'call it',
      tools: [echoUpperTool],
      emit: (part) => {
        if (part.type !== 'tool-call' || answered !== null) return;
        answered = (async () => {
          const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
          process.kill(pid, 'SIGKILL');
          while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 5));
          await control.submitToolResult({ toolCallId: part.toolCallId, output: 'HEALED' });
        })();
      },
    });
    await control.done;
    await answered;
    const text = await readFile(join(stateDir, 'journal.ndjson'), 'utf8');
    const lines = text.split('\n').filter((line) => line.includes('\t')).map((line) => JSON.parse(line.slice(line.indexOf('\t') + 1)) as { kind: string; data: Record<string, unknown> });
    const read = lines.filter((r) => r.kind === 'stdout' && String(r.data.text).includes('"step":"tools/call"'));
    expect(read, 'the CLI read one answer').toHaveLength(1);
    expect(String(read[0]!.data.text)).toContain('HEALED');
    expect(lines.filter((r) => r.kind === 'tool-result')).toHaveLength(1);
    expect(lines.filter((r) => r.kind === 'turn-end').map((r) => r.data)).toEqual([{ reason: 'exit', code: 0 }]);
    await session.doDestroy();
  });
});
