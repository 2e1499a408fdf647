// The E2E cases every real-CLI adapter runs (issues 5 and 6: one list, parameterised over adapters),
// against the scripted model server's SCENARIO markers, plus the kit's conformance list. A profile
// says what differs between CLIs (API path, how results and errors read); a case an adapter cannot
// run is skipped by name with the reason. The environment is test/e2e/support.ts.
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adapterConformance, normalizeIds, type AdapterConformanceContext } from '../../host/testing/conformance/adapter-conformance.ts';
import { blockProblem, joinSlices } from '../../host/testing/every-cut.ts';
import { loadSource, type JournalSource } from '../../host/replay/source.ts';
import type { HarnessV1ResumeState, HarnessV1Session } from '../../protocol/harness-v1/session.ts';
import { expectValid, ofType, runConformanceCase, textOf, turn, type Control, type E2eEnv, type Part } from './support.ts';
import { uiSuspendAtHostTool } from './ui-agent-case.ts';
import { controlLater } from '../host/session-helpers.ts';

export type E2eProfile = {
  readonly name: string;
  /** stream-start's modelId, when the CLI reports one. */
  readonly modelId?: string;
  /** The tool-result text of a denied approval (Claude passes the host's reason; pi cannot). */
  readonly deniedResult: string | RegExp;
  /** What the manual compaction part's summary reads (Claude shows the model's summary; Codex keeps it to itself: ''). */
  readonly compactionSummary: RegExp;
  /**
   * The CLI keeps its newest messages verbatim after the summary (pi: settings compaction.keepRecentTokens,
   * 20k by default, and at least the last message), so the turn after compacting a small session still
   * carries the last reply — after the summary. Otherwise the summary replaces the history.
   */
  readonly compactionKeepsRecent?: boolean;
  /** The translator takes snapshots: a suspended turn's resume payload carries one, and the next slice attaches at the cursor. */
  readonly translatorSnapshots: boolean;
  /** What the model's reply after the conformance list's denied approval shows (the CLI's tool-result text for a denial); unset: not checked. */
  readonly deniedReply?: RegExp;
  /** Cases this adapter cannot run (shared and conformance), by case name → why. */
  readonly skip?: Readonly<Record<string, string>>;
  /**
   * The host-tool prompt of every case that calls the host tool (default `SCENARIO:mcp call the host tool`: the scripted
   * model calls the first MCP tool offered). A CLI that defers host tools behind a search, or offers MCP tools of its own
   * in no fixed order (claude-code-acp's `acp` server), names the tool (`TOOL:echo_upper`).
   */
  readonly hostToolPrompt?: string;
};

const defaultHostToolPrompt = 'SCENARIO:mcp call the host tool';
const hostTools = [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' as const } }, required: ['text'] } }];
/** A host tool the tools-changed case offers in its first turn only. */
const otherTool = { name: 'first_turn_only', description: 'Offered in the first turn only', inputSchema: { type: 'object' as const, properties: {} } };
const rungsOf = (session: unknown) => (session as { rungs: string[] }).rungs;
/** The user text of the last user message in a request body (Anthropic Messages, Chat Completions and Responses `input` shapes). */
const lastUserText = (body: unknown) => {
  const shaped = body as { messages?: Array<{ role?: string; content: unknown }>; input?: Array<{ role?: string; content: unknown }> };
  const messages = shaped.messages ?? shaped.input ?? [];
  return JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)?.content);
};

/** Registers the shared cases for one adapter (call inside the suite file, after useE2eEnv). */
/** Suspends the session's turn, then SIGKILLs its bridge (pid from bridge.json): the resume state a crashed host's application saved. */
async function suspendAndKillBridge(session: HarnessV1Session): Promise<HarnessV1ResumeState> {
  const state = await session.doSuspendTurn();
  const info: unknown = JSON.parse(await readFile(join((state.data as { stateDir: string }).stateDir, 'bridge.json'), 'utf8'));
  process.kill((info as { pid: number }).pid, 'SIGKILL');
  return state;
}

export function sharedE2eCases(env: E2eEnv, profile: E2eProfile): void {
  const hostToolPrompt = profile.hostToolPrompt ?? defaultHostToolPrompt;
  /** The MCP tool names in the model requests since `since`: what a failed host-call check shows the model was offered. */
  const offeredMcp = (since: number) => `MCP tools offered to the model: ${[...new Set(env.requests(since).flatMap((r) => JSON.stringify(r.body).match(/mcp__[A-Za-z0-9_-]+/g) ?? []))].join(', ') || 'none'}`;
  const open = env.open;
  const test = (name: string, run: () => Promise<void>, timeoutMs = 120_000) => {
    const reason = profile.skip?.[name];
    if (reason) it.skip(`${name} (skipped: ${reason})`, run);
    else it(name, run, timeoutMs);
  };

  describe(`${profile.name} through the bridge (real CLI)`, () => {
    test('a text turn', async () => {
      const { session } = await open('text');
      const { parts } = await turn(session, 'SCENARIO:text say hi');
      expectValid(parts, 'text');
      if (profile.modelId) expect(parts[0]).toMatchObject({ type: 'stream-start', modelId: profile.modelId });
      expect(textOf(parts)).toBe('Scripted reply 1 (text): you said "say hi".');
      expect(ofType(parts, 'text-delta').length, 'real deltas').toBeGreaterThan(1);
      expect(ofType(parts, 'finish')[0]!.finishReason.unified).toBe('stop');
      await session.doDestroy();
    });

    test('bash + write in one turn (allow-all)', async () => {
      const { session, workDir } = await open('bash-write');
      const { parts } = await turn(session, 'SCENARIO:multi run a command and write a file');
      expectValid(parts, 'bash-write');
      // The model asks for both in one response: an agent that runs them in parallel (codex-acp) may report either first.
      expect(ofType(parts, 'tool-call').map((c) => [c.toolName, c.providerExecuted]).sort()).toEqual([
        ['bash', true],
        ['write', true],
      ]);
      expect(ofType(parts, 'tool-result').map((r) => r.isError)).toEqual([false, false]);
      expect(ofType(parts, 'file-change').map((c) => [c.event, resolve(workDir, c.path)])).toEqual([['create', join(workDir, 'written.txt')]]);
      expect(await readFile(join(workDir, 'written.txt'), 'utf8')).toBe('hello from the scripted model\n');
      expect(await readFile(join(workDir, 'f.txt'), 'utf8')).toBe('hi\n');
      await session.doDestroy();
    });

    test('host tool round trip over the bridge MCP endpoint', async () => {
      const { session } = await open('mcp');
      const before = env.requests().length;
      const parts: Part[] = [];
      const later = controlLater();
      const control = later.resolve(
        await session.doPromptTurn({
          prompt: hostToolPrompt,
          tools: hostTools,
          emit: (part) => {
            parts.push(part);
            if (part.type === 'tool-call' && !part.providerExecuted) {
              const input: unknown = JSON.parse(part.input);
              const text = typeof input === 'object' && input !== null && 'text' in input ? String(input.text) : '';
              later.use((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: `HOST: ${text.toUpperCase()}` }));
            }
          },
        }),
      );
      await control.done;
      expectValid(parts, 'mcp');
      expect(ofType(parts, 'tool-call').map((c) => [c.toolName, c.providerExecuted ?? false]), `exactly one host call, from the bridge record; ${offeredMcp(before)}`).toEqual([['echo_upper', false]]);
      expect(textOf(parts)).toContain('HOST: HELLO MCP');
      await session.doDestroy();
    });

    test('through the real HarnessAgent and readUIMessageStream: a host-tool turn suspended while the tool runs and continued in a new agent folds to the uninterrupted message', () =>
      uiSuspendAtHostTool(env, hostToolPrompt), 180_000);

    test('host tools changed between turns: a tool first offered in the second turn reaches the long-lived CLI and runs', async () => {
      const { session } = await open('tools-changed');
      const first: Part[] = [];
      await (await session.doPromptTurn({ prompt: 'SCENARIO:text before the new tool', tools: [otherTool], emit: (part) => first.push(part) })).done;
      expectValid(first, 'first turn');
      expect(ofType(first, 'finish')[0]!.finishReason.unified).toBe('stop');
      const before = env.requests().length;
      const parts: Part[] = [];
      let controlled!: (control: Control) => void;
      const controlling = new Promise<Control>((r) => (controlled = r)); // a part may come before doPromptTurn returns
      const control = await session.doPromptTurn({
        prompt: hostToolPrompt,
        tools: hostTools,
        emit: (part) => {
          parts.push(part);
          if (part.type === 'tool-call' && !part.providerExecuted) void controlling.then((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'HOST: HELLO MCP' }));
        },
      });
      controlled(control);
      await control.done;
      expectValid(parts, 'second turn');
      expect(ofType(parts, 'tool-call').map((c) => [c.toolName, c.providerExecuted ?? false]), offeredMcp(before)).toEqual([['echo_upper', false]]);
      expect(textOf(parts)).toContain('HOST: HELLO MCP');
      const state = await session.doStop();
      const records = (loadSource((state.data as { stateDir: string }).stateDir) as JournalSource).records.map((r) => r.record);
      const spawns = records.filter((r) => r.kind === 'spawn').length;
      console.log(`[figures] ${profile.name}: host tools changed between turns: ${spawns} CLI process(es) for 2 turns`);
    });

    for (const approved of [true, false]) {
      test(`approval round trip (${approved ? 'approve' : 'deny'}) with allow-reads`, async () => {
        const { session, workDir, sandbox } = await open(`approval-${approved}`, 'allow-reads');
        const parts: Part[] = [];
        const later = controlLater();
        const control = later.resolve(
          await session.doPromptTurn({
            prompt: 'SCENARIO:shell',
            emit: (part) => {
              parts.push(part);
              if (part.type === 'tool-approval-request') later.use((c) => c.submitToolApproval!({ approvalId: part.approvalId, approved, ...(approved ? {} : { reason: 'host said no' }) }));
            },
          }),
        );
        await control.done;
        expectValid(parts, 'approval');
        const [call] = ofType(parts, 'tool-call');
        expect(ofType(parts, 'tool-approval-request')).toEqual([{ type: 'tool-approval-request', approvalId: expect.any(String), toolCallId: call!.toolCallId }]);
        const results = ofType(parts, 'tool-result').filter((result) => result.toolCallId === call!.toolCallId);
        if (approved) {
          expect(results).toMatchObject([{ toolCallId: call!.toolCallId, isError: false }]);
          expect(String(results[0]!.result).trim()).toBe('hi');
          expect(await readFile(join(workDir, 'f.txt'), 'utf8')).toBe('hi\n');
        } else {
          // The CLI's error result for a call the host denied is not passed on: the AI SDK shows the denial by its
          // own approval response (docs/guarantees.md#denial). That the CLI was told: its answer is in the journal.
          expect(results, 'no result part for the denied call').toEqual([]);
          const sessions = join(sandbox.defaultWorkingDirectory, '.harness-bridge', 'sessions');
          const [stateDir] = await readdir(sessions);
          expect(await readFile(join(sessions, stateDir!, 'journal.ndjson'), 'utf8')).toMatch(profile.deniedResult);
          await expect(readFile(join(workDir, 'f.txt'), 'utf8')).rejects.toThrow();
        }
        await session.doDestroy();
      });
    }

    test('two prompts in one session (one live process, the second sees the first)', async () => {
      const { session } = await open('two-prompts');
      const before = env.requests().length;
      const first = await turn(session, 'SCENARIO:text first prompt');
      const second = await turn(session, 'SCENARIO:text second prompt');
      expectValid(first.parts, 'first');
      expectValid(second.parts, 'second');
      expect(textOf(first.parts)).toBe('Scripted reply 1 (text): you said "first prompt".');
      expect(textOf(second.parts)).toBe('Scripted reply 2 (text): you said "second prompt".');
      expect(JSON.stringify(env.requests(before).at(-1)?.body)).toContain('first prompt');
      await session.doDestroy();
    });

    test('instructions are applied once, on the first prompt', async () => {
      const { session } = await open('instructions');
      const before = env.requests().length;
      const control = await session.doPromptTurn({ prompt: 'SCENARIO:text hello', instructions: 'INSTRUCTION-MARKER be brief', emit: () => undefined });
      await control.done;
      await turn(session, 'SCENARIO:text again');
      const [first, ...rest] = env.requests(before);
      expect(lastUserText(first!.body)).toContain('INSTRUCTION-MARKER be brief');
      expect(lastUserText(rest.at(-1)!.body), 'the second prompt goes without the instructions').not.toContain('INSTRUCTION-MARKER');
      await session.doDestroy();
    });

    test('a failed model call: error part and finish error; the session carries on', async () => {
      const { session } = await open('error');
      const failed = await turn(session, 'SCENARIO:fail');
      expectValid(failed.parts, 'fail');
      expect(JSON.stringify(ofType(failed.parts, 'error')[0]?.error)).toMatch(/scripted failure/);
      expect(ofType(failed.parts, 'finish')[0]!.finishReason.unified).toBe('error');
      const next = await turn(session, 'SCENARIO:text after the error');
      expect(ofType(next.parts, 'finish')[0]!.finishReason.unified).toBe('stop');
      await session.doDestroy();
    });

    test('abort interrupts cleanly; the next prompt works in the same session', async () => {
      const { session } = await open('abort');
      const abort = new AbortController();
      const parts: Part[] = [];
      const control = await session.doPromptTurn({
        prompt: 'SCENARIO:slow INTERVAL:200 stream slowly',
        abortSignal: abort.signal,
        emit: (part) => {
          parts.push(part);
          if (part.type === 'text-delta') abort.abort();
        },
      });
      await expect(control.done).rejects.toThrow();
      expect(ofType(parts, 'finish').map((p) => p.finishReason)).toEqual([{ unified: 'other', raw: expect.any(String) }]);
      expect(ofType(parts, 'error')).toEqual([]);
      const next = await turn(session, 'SCENARIO:text after the interrupt');
      expect(textOf(next.parts)).toContain('after the interrupt');
      await session.doDestroy();
    });

    test('mid-turn user message reaches the model within the running turn', async () => {
      const { session } = await open('mid-turn');
      const before = env.requests().length;
      let sent = false;
      const { parts } = await turn(session, 'SCENARIO:chain do the chain', (part, control) => {
        if (part.type !== 'tool-call' || sent || !control) return undefined;
        sent = true;
        return control.submitUserMessage?.('MIDTURN-MARKER also do this');
      });
      expectValid(parts, 'mid-turn');
      expect(env.requests(before).some((r) => JSON.stringify(r.body).includes('MIDTURN-MARKER')), 'the model saw the mid-turn message').toBe(true);
      await session.doDestroy();
    });

    test('mid-turn user message during a text-only turn: the answer to it is part of that turn; the next turn is normal', async () => {
      const { session } = await open('mid-turn-text');
      let sent = false;
      const { parts } = await turn(session, 'SCENARIO:slow CHUNKS:6 INTERVAL:150 a text-only turn', (part, control) => {
        if (part.type !== 'text-delta' || sent || !control) return undefined;
        sent = true;
        // SCENARIO:text makes the scripted model quote this message in its reply, also when a CLI sends it right after
        // the prompt (Codex re-samples with it; the last SCENARIO of adjoining user texts wins): the quote marks the answer.
        return control.submitUserMessage?.('SCENARIO:text MIDTURN-TEXT-MARKER answer this too');
      });
      expect(sent, 'the message was sent while the turn streamed').toBe(true);
      expectValid(parts, 'mid-turn text');
      expect(ofType(parts, 'finish'), 'one finish, at the very end').toHaveLength(1);
      expect(textOf(parts), "the turn's own reply streamed first").toMatch(/^slow 1 /);
      expect(textOf(parts), 'the model answered the mid-turn message within this turn').toMatch(/you said "MIDTURN-TEXT-MARKER answer this too"/);
      const next = await turn(session, 'SCENARIO:text after the mid-turn message');
      expectValid(next.parts, 'next turn');
      expect(textOf(next.parts)).toMatch(/you said "after the mid-turn message"\.$/);
      expect(textOf(next.parts), 'nothing of the earlier turn leaks into the next').not.toContain('MIDTURN-TEXT-MARKER');
      expect(ofType(next.parts, 'finish')[0]!.finishReason.unified).toBe('stop');
      await session.doDestroy();
    });

    test(
      'suspend mid-turn in one host instance, continue in another: the parts equal an uninterrupted run',
      async () => {
        const prompt = 'SCENARIO:slow CHUNKS:8 INTERVAL:150 slow for slices';
        const reference = await (async () => {
          const { session } = await open('slices-reference');
          const { parts } = await turn(session, prompt);
          await session.doDestroy();
          return parts;
        })();
        const { session } = await open('slices');
        const first: Part[] = [];
        let suspend!: (state: PromiseLike<HarnessV1ResumeState>) => void;
        const suspended = new Promise<PromiseLike<HarnessV1ResumeState>>((r) => (suspend = r));
        let asked = false;
        await session.doPromptTurn({
          prompt,
          emit: (part) => {
            first.push(part);
            if (!asked && part.type === 'text-delta' && ofType(first, 'text-delta').length === 3) {
              asked = true;
              suspend(session.doSuspendTurn());
            }
          },
        });
        const state = await (await suspended);
        const snapshot = (state.data as { turn?: { snapshot?: { seq: number } } }).turn?.snapshot;
        if (profile.translatorSnapshots) expect(snapshot, 'the payload carries a translator snapshot').toMatchObject({ seq: expect.any(Number) });
        else expect(snapshot).toBeUndefined();
        const second: Part[] = [];
        const next = await open('slices', 'allow-all', state);
        const control = await next.session.doContinueTurn({ emit: (part) => second.push(part) });
        await control.done;
        // Seq-derived ids and the CLI's per-session uuids in raw parts differ between two sessions; nothing else may.
        const normalize = (parts: Part[]) => normalizeIds(parts.map((p) => (p.type === 'raw' ? { type: 'raw' as const, rawValue: null } : p)));
        // The continuation re-opens the block cut open (docs/guarantees.md#ui): each slice folds alone; joined, nothing is twice.
        expect(blockProblem(second), 'the continued slice stands alone').toBeNull();
        expect(normalize(joinSlices([first, second]))).toEqual(normalize(reference));
        await next.session.doDestroy();
      },
      180_000,
    );

    test(
      'stop, then resume the thread in a new bridge: the model sees the earlier conversation',
      async () => {
        const { session } = await open('resume');
        await turn(session, 'SCENARIO:text remember the word apple');
        const state = await session.doStop();
        const before = env.requests().length;
        const next = await open('resume', 'allow-all', state);
        const { parts } = await turn(next.session, 'SCENARIO:text what was the word');
        expect(textOf(parts)).toBe('Scripted reply 2 (text): you said "what was the word".');
        expect(JSON.stringify(env.requests(before)[0]?.body)).toContain('remember the word apple');
        await next.session.doDestroy();
      },
      180_000,
    );

    test('doCompact between turns from a re-attached host: the next turn carries the compaction part; the model gets the summary', async () => {
      const { session } = await open('compact');
      await turn(session, 'SCENARIO:text a turn to compact');
      // Another host instance compacts: it knows the CLI thread only from the resume payload.
      const next = await open('compact', 'allow-all', await session.doDetach());
      const before = env.requests().length;
      await next.session.doCompact();
      const compacting = env.requests(before);
      expect(compacting.map((r) => r.scenario), 'the CLI asked the model for a summary').toContain('compact');
      const { parts } = await turn(next.session, 'SCENARIO:text after compact');
      expectValid(parts, 'after compact');
      expect(ofType(parts, 'compaction')).toEqual([expect.objectContaining({ type: 'compaction', trigger: 'manual' })]);
      expect(ofType(parts, 'compaction')[0]!.summary).toMatch(profile.compactionSummary);
      expect(parts[0]?.type, 'the compaction part comes after the turn\'s stream-start').toBe('stream-start');
      expect(textOf(parts)).toContain('after compact');
      const after = env.requests(before + compacting.length);
      const body = JSON.stringify(after.at(-1)?.body);
      expect(body, 'the turn after compaction sends the summary instead of the history').toContain('Scripted summary of a conversation');
      if (profile.compactionKeepsRecent) expect(body.indexOf('Scripted summary of a conversation'), 'the kept messages come after the summary').toBeLessThan(body.indexOf('Scripted reply 1'));
      else expect(body).not.toContain('Scripted reply 1');
      await next.session.doDestroy();
    });

    test('detach between turns, re-attach from another host instance: same bridge (attach rung), same thread', async () => {
      const { session } = await open('detach');
      await turn(session, 'SCENARIO:text first prompt');
      const state = await session.doDetach();
      const next = await open('detach', 'allow-all', state);
      expect(rungsOf(next.session)).toEqual(['attach']);
      const { parts } = await turn(next.session, 'SCENARIO:text second prompt');
      expect(textOf(parts)).toBe('Scripted reply 2 (text): you said "second prompt".');
      await next.session.doDestroy();
    });

    test(
      'bridge SIGKILL mid-turn: replay rung, then the rerun rung re-drives the thread (marked recomputed) and finishes',
      async () => {
        // survive off: the CLI dies with its bridge, so this is the rerun rung's case (the survive case is below).
        const { session } = await open('sigkill', 'allow-all', undefined, undefined, { survive: false });
        const first: Part[] = [];
        let kill!: (state: Promise<HarnessV1ResumeState>) => void;
        const killed = new Promise<Promise<HarnessV1ResumeState>>((r) => (kill = r));
        let asked = false;
        await session.doPromptTurn({
          prompt: 'SCENARIO:slow CHUNKS:10 INTERVAL:150 slow then killed',
          emit: (part) => {
            first.push(part);
            if (asked || part.type !== 'text-delta' || ofType(first, 'text-delta').length < 3) return;
            asked = true;
            kill(suspendAndKillBridge(session));
          },
        });
        const state = await (await killed);
        const next = await open('sigkill', 'allow-all', state, undefined, { survive: false });
        const rest: Part[] = [];
        const control = await next.session.doContinueTurn({ emit: (part) => rest.push(part) });
        await control.done;
        expect(rungsOf(next.session)).toEqual(['replay', 'rerun']);
        const all = [...first, ...rest];
        const marker = all.findIndex((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message)));
        expect(marker, 'the rerun is marked recomputed').toBeGreaterThan(0);
        expect(textOf(all.slice(0, marker)), 'everything journaled before the kill, once').toMatch(/^slow 1 slow 2 slow 3 /);
        expect(ofType(all.slice(0, marker), 'finish'), 'the killed turn does not finish on its own').toEqual([]);
        expect(all.at(-1)?.type).toBe('finish');
        expect(ofType(all.slice(marker), 'finish')[0]!.finishReason.unified).toBe('stop');
        await next.session.doDestroy();
      },
      180_000,
    );

    test(
      'survive on: bridge SIGKILL mid-turn, resumed in a fresh host: the adopted CLI finishes the turn (replay rung only, nothing recomputed, the parts equal an uninterrupted run) and serves the next turn',
      async () => {
        const survive = { survive: true } as const;
        const prompt = 'SCENARIO:slow CHUNKS:10 INTERVAL:150 slow while the bridge dies';
        const reference = await (async () => {
          const { session } = await open('survive-reference', 'allow-all', undefined, undefined, survive);
          const parts: Part[] = [];
          await (await session.doPromptTurn({ prompt, tools: hostTools, emit: (part) => parts.push(part) })).done;
          await session.doDestroy();
          return parts;
        })();
        const { session } = await open('survive', 'allow-all', undefined, undefined, survive);
        const first: Part[] = [];
        let kill!: (state: Promise<HarnessV1ResumeState>) => void;
        const killed = new Promise<Promise<HarnessV1ResumeState>>((r) => (kill = r));
        let asked = false;
        await session.doPromptTurn({
          prompt,
          tools: hostTools, // the CLI is spawned knowing the host tools; the next turn calls one through the adopting bridge
          emit: (part) => {
            first.push(part);
            if (asked || part.type !== 'text-delta' || ofType(first, 'text-delta').length < 3) return;
            asked = true;
            kill(
              (async () => {
                const state = await session.doSuspendTurn();
                const info: unknown = JSON.parse(await readFile(join((state.data as { stateDir: string }).stateDir, 'bridge.json'), 'utf8'));
                process.kill((info as { pid: number }).pid, 'SIGKILL'); // the model is still streaming: 10 chunks 150 ms apart
                return state;
              })(),
            );
          },
        });
        const state = await (await killed);
        const stateDir = (state.data as { stateDir: string }).stateDir;
        const next = await open('survive', 'allow-all', state, undefined, survive);
        const rest: Part[] = [];
        const control = await next.session.doContinueTurn({ emit: (part) => rest.push(part) });
        await control.done;
        expect(rungsOf(next.session), 'lossless: no rerun').toEqual(['replay']);
        const all = [...first, ...rest];
        expect(
          all.some((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message))),
          'no recomputed marker',
        ).toBe(false);
        expectValid(all, 'adopted turn');
        expect(ofType(all, 'finish').map((p) => p.finishReason.unified), 'one finish').toEqual(['stop']);
        // The comparison the suspend case makes: seq-derived ids and the CLI's per-session uuids in raw parts may differ.
        const normalize = (parts: Part[]) => normalizeIds(parts.map((p) => (p.type === 'raw' ? { type: 'raw' as const, rawValue: null } : p)));
        expect(blockProblem(rest), 'the continued slice stands alone').toBeNull();
        expect(normalize(joinSlices([first, rest]))).toEqual(normalize(reference));

        // The next turn: a host tool round trip, served by the adopting bridge on the endpoint the kept CLI was given.
        const before = env.requests().length;
        const after: Part[] = [];
        let controlled!: (control: Control) => void;
        const controlling = new Promise<Control>((r) => (controlled = r)); // a part may come before doPromptTurn returns
        const again = await next.session.doPromptTurn({
          prompt: hostToolPrompt,
          tools: hostTools,
          emit: (part) => {
            after.push(part);
            if (part.type === 'tool-call' && !part.providerExecuted) void controlling.then((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'HOST: HELLO MCP' }));
          },
        });
        controlled(again);
        await again.done;
        expectValid(after, 'the turn after adoption');
        expect(ofType(after, 'tool-call').map((c) => [c.toolName, c.providerExecuted ?? false]), offeredMcp(before)).toEqual([['echo_upper', false]]);
        expect(textOf(after)).toContain('HOST: HELLO MCP');
        expect(JSON.stringify(env.requests(before)[0]?.body), 'the model sees the adopted turn').toContain('slow while the bridge dies');
        const records = (loadSource(stateDir) as JournalSource).records.map((r) => r.record);
        expect(records.filter((r) => r.kind === 'spawn').map((r) => r.data.keeper !== undefined), 'one CLI, kept, and reused for the next turn').toEqual([true]);
        expect(records.filter((r) => r.kind === 'bridge-start' && r.data.adopted !== undefined), 'the second bridge adopted it').toHaveLength(1);
        await next.session.doDestroy();
      },
      180_000,
    );

    test(
      'survive on: a host tool call in flight at the bridge SIGKILL survives it (the keeper holds the CLI\'s MCP request; the re-delivered answer reaches the model once; replay rung only, nothing recomputed)',
      async () => {
        // docs/bridge-internals.md#survive-mcp-relay: the kept CLI's MCP URL names its keeper, which re-sends the request to the adopting bridge.
        const survive = { survive: true } as const;
        const { session } = await open('survive-tool', 'allow-all', undefined, undefined, survive);
        const first: Part[] = [];
        let kill!: (state: Promise<HarnessV1ResumeState>) => void;
        const killed = new Promise<Promise<HarnessV1ResumeState>>((r) => (kill = r));
        let asked = false;
        await session.doPromptTurn({
          prompt: hostToolPrompt,
          tools: hostTools,
          emit: (part) => {
            first.push(part);
            if (asked || part.type !== 'tool-call' || part.providerExecuted) return;
            asked = true; // the CLI is waiting on its MCP request for this call
            kill(suspendAndKillBridge(session));
          },
        });
        const state = await (await killed);
        const stateDir = (state.data as { stateDir: string }).stateDir;
        const next = await open('survive-tool', 'allow-all', state, undefined, survive);
        const rest: Part[] = [];
        const answers: Array<Promise<string>> = [];
        let controlled!: (control: Control) => void;
        const controlling = new Promise<Control>((r) => (controlled = r)); // a part may come before doContinueTurn returns
        const control = await next.session.doContinueTurn({
          emit: (part) => {
            rest.push(part);
            if (part.type === 'tool-call' && !part.providerExecuted) {
              answers.push(controlling.then((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'HOST: HELLO MCP' })).then(() => 'accepted', (e: unknown) => String(e)));
            }
          },
        });
        controlled(control);
        await control.done;
        expect(rungsOf(next.session), 'lossless: no rerun').toEqual(['replay']);
        expect(ofType(rest, 'tool-call').filter((c) => !c.providerExecuted), 'the unanswered call is re-delivered').toHaveLength(1);
        expect(await Promise.all(answers), 'the adopting bridge waits for this answer').toEqual(['accepted']);
        const all = [...first, ...rest];
        expect(
          all.some((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message))),
          'no recomputed marker',
        ).toBe(false);
        expect(ofType(all, 'finish').map((p) => p.finishReason.unified)).toEqual(['stop']);
        expect(textOf(all), 'the model read the host\'s answer').toContain('HOST: HELLO MCP');
        const records = (loadSource(stateDir) as JournalSource).records.map((r) => r.record);
        const calls = records.filter((r) => r.kind === 'tool-call');
        expect(calls.map((r) => r.data.relay !== undefined), 'one call, through the keeper relay').toEqual([true]);
        expect(records.filter((r) => r.kind === 'tool-result').map((r) => [r.data.callId, r.data.isError]), 'one result, the host\'s').toEqual([[calls[0]!.data.callId, false]]);
        await next.session.doDestroy();
      },
      180_000,
    );
  });

    test(
      'survive on: an approval pending at the bridge SIGKILL survives it (the kept CLI still waits; the host answers it after the resume; the tool runs once; replay rung only)',
      async () => {
        const survive = { survive: true } as const;
        const { session, workDir } = await open('survive-approval', 'allow-reads', undefined, undefined, survive);
        const first: Part[] = [];
        let kill!: (state: Promise<HarnessV1ResumeState>) => void;
        const killed = new Promise<Promise<HarnessV1ResumeState>>((r) => (kill = r));
        let asked = false;
        await session.doPromptTurn({
          prompt: 'SCENARIO:shell',
          emit: (part) => {
            first.push(part);
            if (asked || part.type !== 'tool-approval-request') return;
            asked = true; // the CLI waits for this answer on its stdin, which its keeper holds
            kill(suspendAndKillBridge(session));
          },
        });
        const state = await (await killed);
        const next = await open('survive-approval', 'allow-reads', state, undefined, survive);
        const rest: Part[] = [];
        const answered: Array<Promise<unknown>> = [];
        let controlled!: (control: Control) => void;
        const controlling = new Promise<Control>((r) => (controlled = r));
        const control = await next.session.doContinueTurn({
          emit: (part) => {
            rest.push(part);
            if (part.type === 'tool-approval-request') answered.push(controlling.then((c) => c.submitToolApproval!({ approvalId: part.approvalId, approved: true })));
          },
        });
        controlled(control);
        await control.done;
        await Promise.all(answered);
        expect(rungsOf(next.session), 'lossless: no rerun').toEqual(['replay']);
        expect(answered, 'the pending approval is asked again after the resume').toHaveLength(1);
        const all = [...first, ...rest];
        expect(ofType(all, 'finish').map((p) => p.finishReason.unified)).toEqual(['stop']);
        const results = ofType(all, 'tool-result').filter((r) => !r.isError);
        expect(results, 'the approved tool ran once').toHaveLength(1);
        expect(String(results[0]!.result).trim()).toBe('hi');
        expect(await readFile(join(workDir, 'f.txt'), 'utf8')).toBe('hi\n');
        await next.session.doDestroy();
      },
      180_000,
    );

  conformanceE2eCases(env, profile);
}

/** The kit's conformance list on one adapter's real CLI (sharedE2eCases runs it; an agent with only this list calls it alone). */
export function conformanceE2eCases(env: E2eEnv, profile: Pick<E2eProfile, 'name' | 'modelId' | 'deniedReply' | 'skip' | 'hostToolPrompt'>): void {
  describe(`adapter conformance: ${profile.name} (real CLI)`, () => {
    for (const testCase of adapterConformance) {
      const reason = profile.skip?.[testCase.name];
      if (reason) {
        it.skip(`${testCase.name} (skipped: ${reason})`, () => undefined);
        continue;
      }
      it(
        testCase.name,
        async (context) => {
          await runConformanceCase(
            (ctx: AdapterConformanceContext) => testCase.run(ctx),
            (defer, deferStop) => ({
              ...env.conformance(
                {
                  text: 'SCENARIO:text conformance',
                  textReply: /^Scripted reply \d+ \(text\): you said "conformance"\.$/,
                  long: 'SCENARIO:slow CHUNKS:30 INTERVAL:60 conformance slices',
                  minParts: 30,
                  hostTool: { prompt: profile.hostToolPrompt ?? defaultHostToolPrompt, tools: hostTools, output: 'HOST SAYS HI', reply: /Last tool result was: [\s\S]*HOST SAYS HI/ },
                  approval: { prompt: 'SCENARIO:shell', permissionMode: 'allow-reads', ...(profile.deniedReply ? { reply: profile.deniedReply } : {}) },
                },
                defer,
                deferStop,
              ),
              ...(profile.modelId === undefined ? {} : { modelId: profile.modelId }),
            }),
            context,
            env.failedCase,
          );
        },
        180_000,
      );
    }
  });
}
