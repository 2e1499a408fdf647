// The kit's optional adapter hooks that JSON-RPC CLIs (Codex app-server) need, over the fixture CLI:
// encodeThreadStart (an internal thread-start turn before the first prompt, its parts dropped) and
// encodeInterrupt (the CLI's own interrupt request, built from translator state, sent before abort).
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCliAdapter, type CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { runTurn, textOf } from './session-helpers.ts';

let root: string;
let provider: LocalSandboxProvider;
/** Every sandbox a test opened: stopped after the file even when a test failed before its own stop(). */
const opened: Array<{ stop(): Promise<void> }> = [];
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-adapter-hooks-'));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
  provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
});
afterAll(async () => {
  for (const sandbox of opened) await sandbox.stop().catch(() => undefined);
  await rm(root, { recursive: true, force: true });
});

type State = ReturnType<ReturnType<typeof fixtureAdapter>['translator']['init']>;

function variant(patch: (base: CliAdapter<State>) => Partial<CliAdapter<State>>): CliAdapter<State> {
  const { kind: _kind, ...base } = fixtureAdapter();
  return defineCliAdapter<State>({ ...base, ...patch(fixtureAdapter()) });
}

/**
 * The fixture CLI has no compaction: doCompact(x) sends a prompt whose 'COMPACTED-x' delta stands for one, and the
 * translator adds a compaction part `summary x` for it. `override` may return another input for some instructions.
 */
function compacting(override: (instructions: string | undefined) => string | undefined = () => undefined): CliAdapter<State> {
  return variant((base) => ({
    encodeCompact: (instructions) => override(instructions) ?? `${JSON.stringify({ type: 'prompt', text: `COMPACTED-${instructions}`, lines: 1 })}\n`,
    translator: {
      ...base.translator,
      step: (state, record) => {
        const out = base.translator.step(state, record);
        const compacted = /COMPACTED-(\w+)/.exec(out.parts.map((p) => (p.type === 'text-delta' ? p.delta : '')).join(''));
        if (!compacted) return out;
        return { state: out.state, parts: [...out.parts, { type: 'compaction', trigger: 'manual', summary: `summary ${compacted[1]}` }] };
      },
    },
  }));
}

async function open(sessionId: string, adapter: CliAdapter<State>) {
  const sandbox = await provider.createSession({ sessionId });
  opened.push(sandbox);
  const workDir = join(sandbox.defaultWorkingDirectory, `hooks-${sessionId}`);
  await mkdir(workDir, { recursive: true });
  const session = await createBridgeHarness(adapter, { probeTimeoutMs: 1_500 }).doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: workDir });
  return { session, stop: () => sandbox.stop() };
}

describe('encodeThreadStart', () => {
  it('runs the thread-start exchange once, before the first prompt, drops its parts, and hands the prompt the thread id', async () => {
    const threadStarts: number[] = [];
    const seen: Array<string | undefined> = [];
    const adapter = variant((base) => ({
      // Only the thread-start turn's result reveals the thread (like Codex's thread/start answer).
      threadId: (record) => (record.kind === 'stdout' && /"type":"result".*"text":"THREAD-START"/.test(record.data.text) ? 'thread-from-setup' : undefined),
      encodeThreadStart: () => {
        threadStarts.push(1);
        return `${JSON.stringify({ type: 'prompt', text: 'THREAD-START', lines: 1 })}\n`;
      },
      encodePrompt: (context) => {
        seen.push(context.threadId);
        expect(context.permissionMode, 'the prompt context carries the permission mode').toBe('allow-all');
        return base.encodePrompt!(context);
      },
    }));
    const { session, stop } = await open('thread-start', adapter);
    const first = await runTurn(session, 'hello LINES:2');
    expect(textOf(first), 'no part of the thread-start turn reaches the consumer').toBe('hello LINES:2 #0\nhello LINES:2 #1\n');
    expect(first.filter((p) => p.type === 'stream-start')).toHaveLength(1);
    const second = await runTurn(session, 'again LINES:1');
    expect(textOf(second)).toBe('again LINES:1 #0\n');
    expect(threadStarts, 'one thread-start exchange per session').toHaveLength(1);
    expect(seen).toEqual(['thread-from-setup', 'thread-from-setup']);
    await session.doDestroy();
    await stop();
  }, 30_000);

  it('fails the prompt with bridge-refused when the exchange reveals no thread id', async () => {
    const adapter = variant(() => ({ threadId: () => undefined, encodeThreadStart: () => `${JSON.stringify({ type: 'prompt', text: 'x', lines: 0 })}\n` }));
    const { session, stop } = await open('thread-start-fails', adapter);
    await expect(session.doPromptTurn({ prompt: 'hello', emit: () => undefined })).rejects.toMatchObject({ code: 'bridge-refused' });
    await session.doDestroy();
    await stop();
  }, 30_000);
});

describe('encodeInterrupt', () => {
  it('abort sends the state-built interrupt first; the CLI ends the turn itself (not the kill after the grace)', async () => {
    const adapter = variant((base) => ({
      launch: (context) => ({ ...base.launch(context), interrupt: { input: '' } }), // the launch's own interrupt does nothing
      encodeInterrupt: (state) => (state.textId === null ? undefined : '{"type":"interrupt"}\n'),
    }));
    const { session, stop } = await open('interrupt', adapter);
    const abort = new AbortController();
    const parts: HarnessV1StreamPart[] = [];
    const control = await session.doPromptTurn({
      prompt: 'long LINES:500 INTERVAL:20',
      abortSignal: abort.signal,
      emit: (part) => {
        parts.push(part);
        if (parts.length === 5) abort.abort();
      },
    });
    await expect(control.done).rejects.toMatchObject({ name: 'AbortError' });
    const finish = parts.find((p) => p.type === 'finish');
    expect(finish?.type === 'finish' && finish.finishReason, 'the CLI printed its interrupted result').toEqual({ unified: 'other', raw: 'interrupted' });
    expect(textOf(await runTurn(session, 'still alive LINES:1'))).toBe('still alive LINES:1 #0\n');
    await session.doDestroy();
    await stop();
  }, 30_000);
});

describe('encodeCompact', () => {
  it('gets the thread id and whether a turn runs; a refusal rejects doCompact and leaves the session usable', async () => {
    const contexts: unknown[] = [];
    let compacts = 0;
    const adapter = variant((base) => ({
      // As the Claude adapter's command_lifecycle: a compact written during a turn holds that turn's end until the
      // CLI takes it up (the fixture's `taken`), so its output ends inside that turn, never in the next one.
      launch: (ctx) => ({ ...base.launch(ctx), inputAck: { inputId: ['uuid'], stream: 'stdout', when: [{ path: ['type'], equals: 'taken' }], ackId: ['uuid'] } }),
      encodeCompact: (instructions, context) => {
        contexts.push({ instructions, ...context });
        if (instructions === 'refuse') throw new Error('fixture: cannot compact now');
        // The fixture CLI has no compaction: any prompt line makes an internal turn its result ends. Its line comes
        // 300 ms late, so without the ack the next turn would have started and ended at this turn's result.
        return `${JSON.stringify({ type: 'prompt', text: 'COMPACT', lines: 1, intervalMs: 300, uuid: `compact-${++compacts}` })}\n`;
      },
    }));
    const { session, stop } = await open('compact-context', adapter);
    await expect(session.doCompact('refuse'), 'refused before any thread').rejects.toThrow(/cannot compact now/);
    expect(textOf(await runTurn(session, 'first LINES:1'))).toBe('first LINES:1 #0\n');
    await session.doCompact('focus');
    await expect(session.doCompact('refuse')).rejects.toThrow(/cannot compact now/);
    const parts: HarnessV1StreamPart[] = [];
    const control = await session.doPromptTurn({ prompt: 'long LINES:40 INTERVAL:20', emit: (part) => void parts.push(part) });
    await session.doCompact('mid');
    await control.done;
    expect(textOf(await runTurn(session, 'after LINES:1')), 'nothing of the internal compact turn leaks').toBe('after LINES:1 #0\n');
    const thread = contexts[1] as { threadId: unknown };
    expect(typeof thread.threadId, 'the thread the first turn revealed').toBe('string');
    expect(contexts).toEqual([
      { instructions: 'refuse', threadId: undefined, duringTurn: false },
      { instructions: 'focus', threadId: thread.threadId, duringTurn: false },
      { instructions: 'refuse', threadId: thread.threadId, duringTurn: false },
      { instructions: 'mid', threadId: thread.threadId, duringTurn: true },
    ]);
    await session.doDestroy();
    await stop();
  }, 30_000);

  it('a compaction whose internal turn fails rejects doCompact with compact-failed, naming why, and the next turn still runs', async () => {
    // The fixture CLI has no compaction; {"type":"crash"} makes the internal turn end with the CLI exiting 3.
    const adapter = variant(() => ({ encodeCompact: () => `${JSON.stringify({ type: 'crash' })}\n` }));
    const { session, stop } = await open('compact-failed', adapter);
    expect(textOf(await runTurn(session, 'first LINES:1'))).toBe('first LINES:1 #0\n');
    const failed = await session.doCompact().then(
      () => null,
      (error: unknown) => error as { code?: string; message?: string },
    );
    expect(failed, 'doCompact rejected').not.toBeNull();
    expect(failed?.code).toBe('compact-failed');
    expect(failed?.message, 'the message says how the internal turn ended').toMatch(/did not compact: .*turn finished error/);
    expect(textOf(await runTurn(session, 'after LINES:1')), 'the session carries on, with nothing of the failed compaction').toBe('after LINES:1 #0\n');
    await session.doDestroy();
    await stop();
  }, 30_000);

  it('a compaction that succeeded reaches the next turn even when a later doCompact fails before it', async () => {
    const adapter = compacting((instructions) => (instructions === 'crash' ? `${JSON.stringify({ type: 'crash' })}\n` : undefined));
    const { session, stop } = await open('compact-carry', adapter);
    await runTurn(session, 'first LINES:1');
    await session.doCompact('one');
    await expect(session.doCompact('crash')).rejects.toMatchObject({ code: 'compact-failed' });
    const next = await runTurn(session, 'next LINES:1');
    expect(
      next.filter((p) => p.type === 'compaction').map((p) => (p.type === 'compaction' ? p.summary : '')),
      "the first compaction's part, once, in the next turn",
    ).toEqual(['summary one']);
    expect(next[0]?.type, 'stream-start comes first').toBe('stream-start');
    await session.doDestroy();
    await stop();
  }, 30_000);

  it('a compaction done between turns survives doDetach: a new host resumed from the state emits it in its next turn', async () => {
    const adapter = compacting();
    const { session, stop } = await open('compact-detach', adapter);
    await runTurn(session, 'first LINES:1');
    await session.doCompact('kept');
    const state = await session.doDetach();
    expect(JSON.stringify(state), 'the resume state carries the undelivered compaction').toContain('summary kept');
    const sandbox = await provider.resumeSession({ sessionId: 'compact-detach' });
    opened.push(sandbox);
    const resumed = await createBridgeHarness(adapter, { probeTimeoutMs: 1_500 }).doStart({
      sessionId: 'compact-detach',
      sandboxSession: sandbox,
      sessionWorkDir: join(sandbox.defaultWorkingDirectory, 'hooks-compact-detach'),
      resumeFrom: state,
    });
    const next = await runTurn(resumed, 'next LINES:1');
    expect(next.filter((p) => p.type === 'compaction').map((p) => (p.type === 'compaction' ? p.summary : '')), 'delivered once, by the new host').toEqual(['summary kept']);
    expect(textOf(next)).toBe('next LINES:1 #0\n');
    await resumed.doDestroy();
    await stop();
  }, 30_000);
});

describe('encodeInterrupt', () => {
  it('an abort before the CLI named what its interrupt needs sends the interrupt once the translator can encode it (the CLI ends its own turn)', async () => {
    // Like Codex's turn/interrupt, which names a turn id the CLI reports only after the turn starts: undefined until
    // the first text part; the launch's own interrupt input is empty, so only encodeInterrupt can stop the turn early.
    let refused = 0;
    const adapter = variant((base) => ({
      // The CLI prints nothing for its first second: the abort at stream-start comes before any text, however fast its
      // spawn (its jail may be started ahead) and however late this host reads the records.
      launch: (ctx) => {
        const launch = base.launch(ctx);
        return { ...launch, argv: [...launch.argv, '--delay-start-ms', '1000'], interrupt: { input: '' } };
      },
      encodeInterrupt: (state) => {
        if (state.textId !== null) return `${JSON.stringify({ type: 'interrupt' })}\n`;
        refused++;
        return undefined;
      },
    }));
    const { session, stop } = await open('interrupt-pending', adapter);
    const abort = new AbortController();
    const parts: HarnessV1StreamPart[] = [];
    const control = await session.doPromptTurn({
      prompt: 'long LINES:400 INTERVAL:20',
      abortSignal: abort.signal,
      emit: (part) => {
        parts.push(part);
        if (part.type === 'stream-start') abort.abort(); // before any text: the interrupt cannot be encoded yet
      },
    });
    await Promise.resolve(control.done).catch(() => undefined);
    expect(refused, 'asked before the CLI named its turn').toBeGreaterThan(0);
    const finish = parts.find((part) => part.type === 'finish');
    expect(finish?.type === 'finish' ? finish.finishReason.raw : undefined, 'the CLI ended the turn on its interrupt, not the abort grace SIGKILL').toBe('interrupted');
    expect(parts.filter((part) => part.type === 'text-delta').length, 'far fewer than 400 lines').toBeLessThan(400);
    await session.doDestroy();
    await stop();
  }, 30_000);
});
