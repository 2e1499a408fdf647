import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import { BridgeSessionError } from '../../host/session/errors.ts';
import { createKit, runTurn, startTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('session');
});
afterAll(async () => {
  await kit.cleanup();
});

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function bridgePid(stateDir: string): Promise<number> {
  return JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')).pid as number;
}

describe('BridgeSession over the fixture CLI', () => {
  it('runs a prompt turn to finish (stream-start, text, finish) and a second one on the same CLI process', async () => {
    const { session } = await kit.start('basic');
    const parts = await runTurn(session, 'hello LINES:3');
    expect(parts.map((p) => p.type)).toEqual([
      'stream-start',
      'text-start',
      'text-delta',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(textOf(parts)).toBe('hello LINES:3 #0\nhello LINES:3 #1\nhello LINES:3 #2\n');
    const second = await runTurn(session, 'again LINES:1');
    expect(textOf(second)).toBe('again LINES:1 #0\n');
    await session.doDestroy();
  });

  it('prepends instructions on the first prompt of a fresh session only, never on a resumed one', async () => {
    const { session } = await kit.start('instructions');
    const parts1: HarnessV1StreamPart[] = [];
    const first = await session.doPromptTurn({ prompt: 'one LINES:1', instructions: 'BE BRIEF', emit: (p) => parts1.push(p) });
    await first.done;
    expect(textOf(parts1), 'the first prompt of a fresh session carries the instructions').toBe('BE BRIEF\none LINES:1 #0\n');
    const parts: HarnessV1StreamPart[] = [];
    const second = await session.doPromptTurn({ prompt: 'two LINES:1', instructions: 'BE BRIEF', emit: (p) => parts.push(p) });
    await second.done;
    expect(textOf(parts), 'second prompt of a fresh session must not repeat instructions').toBe('two LINES:1 #0\n');
    const state = await session.doDetach();
    const resumed = await kit.resume('instructions', state);
    const parts3: HarnessV1StreamPart[] = [];
    const third = await resumed.session.doPromptTurn({ prompt: 'three LINES:1', instructions: 'BE BRIEF', emit: (p) => parts3.push(p) });
    await third.done;
    expect(textOf(parts3), 'a resumed session must never re-apply instructions').toBe('three LINES:1 #0\n');
    await resumed.session.doDestroy();
  });

  it('round-trips a host tool call over stdin: tool-call part, submitToolResult, then the turn finishes', async () => {
    const { session } = await kit.start('tool');
    const { parts, control } = await startTurn(session, 'use a tool LINES:1 TOOL:lookup', (part, _count, later) => {
      if (part.type === 'tool-call') later.use((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: { answer: 42 } }));
    });
    await control.done;
    const call = parts.find((p) => p.type === 'tool-call');
    expect(call, 'the fixture CLI asked for a host tool').toMatchObject({ type: 'tool-call', toolName: 'lookup' });
    expect(parts.at(-1)?.type).toBe('finish');
    await session.doDestroy();
  });

  it('delivers a mid-turn user message to the running CLI (submitUserMessage)', async () => {
    const { session } = await kit.start('user-message');
    const { parts, control } = await startTurn(session, 'slow LINES:20 INTERVAL:20');
    expect(control.submitUserMessage, 'the fixture adapter encodes user messages').toBeTypeOf('function');
    await control.submitUserMessage!('mid-turn hello');
    await control.done;
    // The CLI queues the message as its next turn; the bridge journals the stdin write inside this turn.
    const next = await runTurn(session, 'after LINES:1');
    expect(textOf(parts)).toContain('slow LINES:20 INTERVAL:20 #19');
    expect(next.at(-1)?.type).toBe('finish');
    await session.doDestroy();
  });

  it('aborts a running turn: the CLI is interrupted and done rejects with an AbortError', async () => {
    const { session } = await kit.start('abort');
    const abort = new AbortController();
    const parts: HarnessV1StreamPart[] = [];
    const control = await session.doPromptTurn({
      prompt: 'long LINES:500 INTERVAL:20',
      abortSignal: abort.signal,
      emit: (p) => {
        parts.push(p);
        if (parts.length === 5) abort.abort();
      },
    });
    const error = await Promise.resolve(control.done).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.name, 'done must settle with an AbortError').toBe('AbortError');
    expect(parts.filter((p) => p.type === 'text-delta').length, 'the CLI stopped long before 500 lines').toBeLessThan(400);
    const after = await runTurn(session, 'still alive LINES:1');
    expect(textOf(after)).toBe('still alive LINES:1 #0\n');
    await session.doDestroy();
  });

  it('detach → a new host instance → the next prompt runs on the same live bridge (attach rung)', async () => {
    const { session } = await kit.start('detach');
    await runTurn(session, 'first LINES:1');
    const state = await session.doDetach();
    await expect(session.doPromptTurn({ prompt: 'x', emit: () => undefined })).rejects.toMatchObject({ code: 'session-closed' });
    const resumed = await kit.resume('detach', state);
    expect(resumed.session.isResume).toBe(true);
    const parts = await runTurn(resumed.session, 'second LINES:2');
    expect(textOf(parts)).toBe('second LINES:2 #0\nsecond LINES:2 #1\n');
    const diagnostic = kit.diagnostics.find((d) => d.sessionId === 'detach' && d.attrs?.rungs === 'attach');
    expect(diagnostic, 'the attach rung is reported as a diagnostic').toBeDefined();
    await resumed.session.doDestroy();
  });

  it('stop → resume in a new host → the next prompt resumes the CLI thread in a new bridge (replay rung)', async () => {
    const { session, sandbox } = await kit.start('stop');
    await runTurn(session, 'first LINES:1');
    const stopped = await session.doStop();
    const data = stopped.data as { threadId?: string; stateDir: string; journalId: string };
    expect(data.threadId, 'the thread id was read from the CLI output').toMatch(/^fx-/);
    const stateDir = data.stateDir;
    expect(existsSync(join(stateDir, 'journal.ndjson')), 'stop keeps the journal').toBe(true);
    const resumed = await kit.resume('stop', stopped);
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['replay']);
    const parts = await runTurn(resumed.session, 'second LINES:1');
    expect(textOf(parts)).toBe('second LINES:1 #0\n');
    const after = (await resumed.session.doDetach()).data as { threadId?: string; journalId: string };
    expect(after.threadId, 'the CLI was relaunched on the same thread').toBe(data.threadId);
    expect(after.journalId, 'the new bridge continued the same journal').toBe(data.journalId);
    void sandbox;
    const again = await kit.resume('stop', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: after });
    await again.session.doDestroy();
  });

  it('destroy kills the bridge and removes its state dir', async () => {
    const { session } = await kit.start('destroy');
    await runTurn(session, 'x LINES:1');
    const state = (await session.doSuspendTurn()).data as { stateDir: string };
    const pid = await bridgePid(state.stateDir);
    const resumed = await kit.resume('destroy', { harnessId: 'fixture', specificationVersion: 'harness-v1', data: state });
    await resumed.session.doDestroy();
    for (let i = 0; i < 50 && pidAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(pidAlive(pid), 'bridge process is gone').toBe(false);
    expect(existsSync(state.stateDir), 'state dir is gone').toBe(false);
  });

  it('refuses a resume state from another harness, and a corrupt one, with bad-resume-state', async () => {
    const { session } = await kit.start('refuse');
    await runTurn(session, 'x LINES:1');
    const state = await session.doDetach();
    const foreign = { ...state, harnessId: 'claude-code' };
    await expect(kit.resume('refuse', foreign)).rejects.toSatisfy(
      (e: unknown) => BridgeSessionError.isInstance(e) && e.code === 'bad-resume-state' && /claude-code/.test(e.message),
    );
    const corrupt = { ...state, data: { ...(state.data as object), cursor: -5 } };
    await expect(kit.resume('refuse', corrupt)).rejects.toSatisfy(
      (e: unknown) => BridgeSessionError.isInstance(e) && e.code === 'bad-resume-state' && /cursor/.test(e.message),
    );
    await expect(kit.resume('refuse', { nonsense: true } as never)).rejects.toMatchObject({ code: 'bad-resume-state' });
    const carriesText = { ...state, data: { ...(state.data as object), carry: [{ type: 'text-delta', id: 't', delta: 'x' }] } };
    await expect(kit.resume('refuse', carriesText), 'only compaction parts may be carried').rejects.toSatisfy(
      (e: unknown) => BridgeSessionError.isInstance(e) && e.code === 'bad-resume-state' && /carry/.test(e.message),
    );
    const ok = await kit.resume('refuse', state);
    await ok.session.doDestroy();
  });

  it('doCompact throws HarnessCapabilityUnsupportedError for a CLI that cannot compact', async () => {
    const { session } = await kit.start('compact');
    await expect(session.doCompact()).rejects.toSatisfy((e: unknown) => HarnessCapabilityUnsupportedError.isInstance(e));
    await session.doDestroy();
  });
});

describe('destroy without a live bridge', () => {
  it('still removes the state dir and does not hang when the bridge was killed (issue: destroy waited for the reconnect budget)', async () => {
    const { session } = await kit.start('destroy-dead');
    await runTurn(session, 'x LINES:1');
    const state = (await session.doSuspendTurn()).data as { stateDir: string };
    const pid = await bridgePid(state.stateDir);
    process.kill(pid, 'SIGKILL');
    const started = Date.now();
    await session.doDestroy();
    expect(Date.now() - started, 'destroy is bounded by lifecycleTimeoutMs, not the 5-minute reconnect budget').toBeLessThan(20_000);
    expect(existsSync(state.stateDir), 'state dir is gone').toBe(false);
  });
});

describe('stale bridges', () => {
  it('reports a warning when the live bridge was installed by another recipe than this harness expects', async () => {
    const { session } = await kit.start('stale');
    await runTurn(session, 'x LINES:1');
    const state = await session.doDetach();
    const { createBridgeHarness } = await import('../../host/harness.ts');
    const { fixtureAdapter } = await import('../fixtures/fixture-adapter.ts');
    const newer = fixtureAdapter();
    // An "upgraded" adapter: its recipe gains an install command, so its identity changes.
    const upgraded = { ...newer, install: { commands: [{ command: 'true' }] } };
    const sandbox = await kit.provider.resumeSession({ sessionId: 'stale' });
    const diagnostics: { message: string; level: string }[] = [];
    const harness = createBridgeHarness(upgraded, { probeTimeoutMs: 1_500 });
    const resumed = await harness.doStart({
      sessionId: 'stale',
      sandboxSession: sandbox,
      sessionWorkDir: join(sandbox.defaultWorkingDirectory, 'fixture-stale'),
      resumeFrom: state,
      observability: { report: (d) => diagnostics.push(d) },
    });
    const stale = diagnostics.find((d) => /stale bridge/.test(d.message));
    expect(stale?.level, 'a stale-bridge warning names both identities').toBe('warn');
    expect(stale?.message).toContain((await harness.getRecipeIdentity()).slice(0, 12));
    await resumed.doDestroy();
  });
});

describe('bridge start-up failures', () => {
  it('a bridge that cannot start fails doStart with bridge-start-failed carrying its stderr tail', async () => {
    const sandbox = await kit.provider.createSession({ sessionId: 'no-start' });
    const { createBridgeHarness } = await import('../../host/harness.ts');
    const { fixtureAdapter } = await import('../fixtures/fixture-adapter.ts');
    // A "node" that prints to stderr and exits: what a broken install looks like from the host.
    const { writeFile, chmod } = await import('node:fs/promises');
    const fakeNode = join(kit.root, 'broken-node.sh');
    await writeFile(fakeNode, '#!/bin/sh\necho "boom: cannot load $1" >&2\nexit 3\n');
    await chmod(fakeNode, 0o755);
    const harness = createBridgeHarness(fixtureAdapter(), { nodeCommand: fakeNode });
    const error = await Promise.resolve(
      harness.doStart({ sessionId: 'no-start', sandboxSession: sandbox, sessionWorkDir: sandbox.defaultWorkingDirectory }),
    ).then(
      () => null,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(error?.code).toBe('bridge-start-failed');
    expect(error?.message).toMatch(/exit(ed with)? code 3/);
    expect(error?.message).toMatch(/stderr tail:\n.*boom: cannot load \/.*bridge\.mjs/);
  });

  it('a sandbox Node older than the bridge needs fails doStart with bridge-start-failed naming both versions', async () => {
    const sandbox = await kit.provider.createSession({ sessionId: 'old-node' });
    const { createBridgeHarness } = await import('../../host/harness.ts');
    const { fixtureAdapter } = await import('../fixtures/fixture-adapter.ts');
    // This Node, reporting itself as 18 (the bundle's syntax level), as an old sandbox Node would.
    const { writeFile, chmod } = await import('node:fs/promises');
    const oldNode = join(kit.root, 'old-node.sh');
    await writeFile(oldNode, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --import ${JSON.stringify(join(kit.root, 'node18.mjs'))} "$@"\n`);
    await writeFile(join(kit.root, 'node18.mjs'), "Object.defineProperty(process.versions, 'node', { value: '18.19.0' });\n");
    await chmod(oldNode, 0o755);
    const harness = createBridgeHarness(fixtureAdapter(), { nodeCommand: oldNode });
    const error = await Promise.resolve(
      harness.doStart({ sessionId: 'old-node', sandboxSession: sandbox, sessionWorkDir: sandbox.defaultWorkingDirectory }),
    ).then(
      () => null,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(error?.code).toBe('bridge-start-failed');
    expect(error?.message).toMatch(/exit(ed with)? code 78/);
    expect(error?.message).toMatch(/needs Node 20 or newer in the sandbox; .* is Node 18\.19\.0/);
  });

  it('doStart honours an already-aborted abortSignal', async () => {
    const sandbox = await kit.provider.createSession({ sessionId: 'aborted-start' });
    const { createBridgeHarness } = await import('../../host/harness.ts');
    const { fixtureAdapter } = await import('../fixtures/fixture-adapter.ts');
    const abort = new AbortController();
    abort.abort();
    await expect(
      createBridgeHarness(fixtureAdapter()).doStart({
        sessionId: 'aborted-start',
        sandboxSession: sandbox,
        sessionWorkDir: sandbox.defaultWorkingDirectory,
        abortSignal: abort.signal,
      }),
    ).rejects.toMatchObject({ name: expect.stringMatching(/Abort/) });
  });
});
