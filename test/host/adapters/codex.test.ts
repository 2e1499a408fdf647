// The Codex adapter driven by the real captured app-server fixtures (test/fixtures/codex): each
// fixture's stdout lines become the stdout records a bridge would journal, cut into turns where the
// adapter's own turnEnd matchers cut them, and go through the translator — alone and through the
// kit's TurnTranslation (continue slices at every cut point). Encoders are checked against the
// stdin lines the capture actually wrote.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { compileTurnEnd } from '../../../bridge/supervisor/turn-end-matcher.ts';
import { codexAdapter, codexLaunch, type CodexState } from '../../../host/adapters/codex/codex.ts';
import { piAdapter } from '../../../host/adapters/pi/pi.ts';
import * as rpc from '../../../host/adapters/codex/rpc.ts';
import { codexBuiltinTools } from '../../../host/adapters/codex/tools.ts';
import type { LaunchContext } from '../../../host/adapter-kit/adapter.ts';
import { TurnTranslation } from '../../../host/adapter-kit/turn-translation.ts';
import { HarnessCapabilityUnsupportedError } from '../../../protocol/harness-v1/errors.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { launchSpecSchema } from '../../../protocol/v1/launch-spec.ts';
import { MCP_ENV_V1 } from '../../../protocol/v1/mcp-env.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { checkEveryCutFolds } from '../ui-replay.ts';
import { expectEveryCutResumes, expectSliceResumes, expectWellFormed, kitBySeq, normalizeIds, ofType, textOf } from './translator-checks.ts';

const fixtureDir = fileURLToPath(new URL('../../fixtures/codex/', import.meta.url));
const fixtures = readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.jsonl'))
  .map((f) => f.slice(0, -'.jsonl'.length))
  .sort();
const adapter = codexAdapter({ modelId: 'gpt-5.5' });

type Part = HarnessV1StreamPart;
type TurnEnd = Extract<JournalRecord, { kind: 'turn-end' }>['data'];
type Meta = { argv: string[]; env: Record<string, string>; stdin: Array<Record<string, unknown>>; modelRequests: Array<{ scenario: string }> };

const ctx = (over: Partial<LaunchContext> = {}): LaunchContext => ({
  mode: 'fresh',
  threadId: undefined,
  prompt: '',
  sessionWorkDir: '/w/proj',
  bootstrapDir: '/w/boot',
  stateDir: '/w/state',
  permissionMode: 'allow-all',
  tools: [],
  mcp: undefined,
  modelId: undefined,
  ...over,
});
const spec = launchSpecSchema.parse(codexLaunch({}, ctx()));
const endsTurn = compileTurnEnd(spec.turnEnd);
if (!endsTurn.ok || !endsTurn.test) throw new Error('the launch has no usable turnEnd matchers');
const matcher = endsTurn.test;

const lines = (name: string) => readFileSync(`${fixtureDir}${name}.jsonl`, 'utf8').split('\n').filter((l) => l.length > 0);
const meta = (name: string): Meta => JSON.parse(readFileSync(`${fixtureDir}${name}.meta.json`, 'utf8')) as Meta;
const stdinLine = (value: unknown) => `${JSON.stringify(value)}\n`;

/** The fixture cut where the adapter's turnEnd matchers cut it (lines after a match open the next turn). */
function turnsOf(name: string): string[][] {
  const turns: string[][] = [[]];
  for (const line of lines(name)) {
    turns[turns.length - 1]!.push(line);
    if (matcher('stdout', line)) turns.push([]);
  }
  return turns.filter((t) => t.length > 0);
}

/** The request that started the k-th prompt turn — turn/start, or doCompact's thread/compact/start (it names the thread the translator reads). */
function promptInput(name: string, k: number): string {
  const starts = meta(name).stdin.filter((l) => l.method === 'turn/start' || l.method === 'thread/compact/start');
  return starts[k] ? stdinLine(starts[k]) : rpc.threadStart();
}

const isSetup = (turn: string[]) => turn.some((l) => l.startsWith(`{"id":"${rpc.rpcIds.threadStart}",`));

/** The records a bridge would journal for one turn; `piece` splits every line into `cont` pieces of that many chars. */
function journal(turnLines: string[], opts: { input?: string; end?: TurnEnd; piece?: number } = {}): JournalRecord[] {
  let seq = 1;
  const turnId = 'turn-1';
  const records: JournalRecord[] = [{ seq: seq++, turnId, ts: 0, kind: 'turn-start', data: { input: opts.input ?? '' } }];
  for (const line of turnLines) {
    const pieces = opts.piece ? line.match(new RegExp(`[\\s\\S]{1,${opts.piece}}`, 'g'))! : [line];
    pieces.forEach((text, i) => records.push({ seq: seq++, turnId, ts: 0, kind: 'stdout', data: i < pieces.length - 1 ? { text, cont: true } : { text } }));
  }
  records.push({ seq: seq++, turnId, ts: 0, kind: 'turn-end', data: opts.end ?? { reason: 'matched' } });
  return records;
}

function translate(records: JournalRecord[]): { parts: Part[]; bySeq: Map<number, Part[]>; state: CodexState } {
  let state = adapter.translator.init({ turnId: 'turn-1', rerun: false });
  const parts: Part[] = [];
  const bySeq = new Map<number, Part[]>();
  for (const record of records) {
    const out = adapter.translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
    bySeq.set(record.seq, [...out.parts]);
  }
  return { parts, bySeq, state };
}

/** The k-th prompt turn of a fixture (the thread-start exchange is not counted). */
function promptTurn(name: string, k = 0, opts: { end?: TurnEnd } = {}) {
  const turn = turnsOf(name).filter((t) => !isSetup(t))[k]!;
  return translate(journal(turn, { input: promptInput(name, k), ...opts }));
}

const text = textOf;
const shape = (parts: Part[]) => parts.map((p) => p.type).filter((t) => t !== 'raw');

/** The UI-level every-cut check (test/host/ui-replay.ts): every cut folds to the uninterrupted message, approvals answered as an application answers them (docs/guarantees.md#ui). */
const ui = { cuts: 0, differing: 0, turns: [] as string[] };
afterAll(() => console.log(`[figures] ui-every-cut codex: cuts=${ui.cuts} fold-errors=0 message-differs=${ui.differing} in ${ui.turns.join(', ') || 'none'}`));

describe('every fixture, every turn', () => {
  for (const name of fixtures) {
    let prompts = 0;
    turnsOf(name).forEach((turn, index) => {
      const where = `${name} turn ${index + 1}${isSetup(turn) ? ' (thread start)' : ''}`;
      const input = isSetup(turn) ? rpc.threadStart() : promptInput(name, prompts++);
      const records = journal(turn, { input });

      it(`${where}: well-formed parts that validate against streamPartSchema`, () => {
        expectWellFormed(translate(records).parts, where);
      });

      it(`${where}: deterministic (translating twice gives identical parts)`, () => {
        expect(translate(records).parts).toEqual(translate(records).parts);
      });

      it(`${where}: every cut point k — a fresh TurnTranslation emitting after k reproduces the tail, re-opening the blocks open at k`, () => {
        const full = kitBySeq(adapter, records);
        for (let k = 0; k <= records.length; k++) {
          const slice = new TurnTranslation(adapter, { turnId: 'turn-1', rerun: false }, k, new Set());
          const got = records.flatMap((record) => slice.push(record));
          const head = records.filter((r) => r.seq <= k).flatMap((r) => full.get(r.seq)!);
          expectSliceResumes(head, got, records.flatMap((r) => full.get(r.seq)!), `${where}: slice after seq ${k}`);
        }
      });

      it(`${where}: every cut point, the slice after it folded onto the message before it by the real HarnessAgent + readUIMessageStream: no fold error, no refused chunk`, async () => {
        const { checked, differing } = await checkEveryCutFolds(() => codexAdapter({ modelId: 'gpt-5.5' }), records, where);
        ui.cuts += checked;
        ui.differing += differing.length;
        if (differing.length > 0) ui.turns.push(`${where} (${differing.length})`);
      }, 120_000);

      it(`${where}: lines split into cont pieces translate the same (ids aside)`, () => {
        expect(normalizeIds(translate(journal(turn, { input, piece: 97 })).parts)).toEqual(normalizeIds(translate(records).parts));
      });

      it(`${where}: every cut point k — snapshot, restore in a fresh translator, the rest: exactly the uninterrupted parts`, () => {
        expectEveryCutResumes(() => codexAdapter({ modelId: 'gpt-5.5' }), records, where);
      });

      it(`${where}: every cut point k inside split lines (cont pieces) — the snapshot carries the partial line`, () => {
        expectEveryCutResumes(() => codexAdapter({ modelId: 'gpt-5.5' }), journal(turn, { input, piece: 509 }), where);
      });
    });
  }
});

describe('fixture by fixture', () => {
  it('text: stream-start with the model, one streamed text block, one step, finish with usage and ids', () => {
    const { parts, state } = promptTurn('text');
    expect(shape(parts)).toEqual(['stream-start', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(parts[0]).toEqual({ type: 'stream-start', modelId: 'gpt-5.5' });
    expect(text(parts)).toBe('Scripted reply 1 (text): you said "say hi".');
    const [stepPart] = ofType(parts, 'finish-step');
    expect(stepPart!.finishReason.unified).toBe('stop');
    expect(stepPart!.usage.inputTokens).toEqual({ total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 });
    const [finish] = ofType(parts, 'finish');
    expect(finish!.finishReason).toEqual({ unified: 'stop', raw: 'completed' });
    expect(finish!.totalUsage.outputTokens.total).toBe(5);
    expect(finish!.harnessMetadata, 'no per-session Codex ids in parts').toBeUndefined();
    expect(state.threadId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('the thread-start exchange: threadId() reads the id from our thread/start answer only', () => {
    const setup = turnsOf('text')[0]!;
    expect(isSetup(setup)).toBe(true);
    const ids = journal(setup).map((r) => adapter.threadId(r)).filter((x) => x !== undefined);
    expect(ids).toEqual([meta('text').stdin.find((l) => l.method === 'turn/start')!.params && (meta('text').stdin.find((l) => l.method === 'turn/start')!.params as { threadId: string }).threadId]);
    const resumed = lines('resume').map((text, i) => adapter.threadId({ seq: i + 1, turnId: 't', ts: 0, kind: 'stdout', data: { text } })).filter((x) => x !== undefined);
    expect(resumed, 'a resume answer names the same thread').toHaveLength(1);
  });

  it('think: a reasoning block from summary deltas, then the text', () => {
    const { parts } = promptTurn('think');
    expect(shape(parts).filter((t) => !t.endsWith('-delta'))).toEqual(['stream-start', 'reasoning-start', 'reasoning-end', 'text-start', 'text-end', 'finish-step', 'finish']);
    expect(ofType(parts, 'reasoning-delta').map((p) => p.delta).join('')).toBe('Thinking about request 1: the user wants a scripted answer.');
  });

  it('multi: exec_command and apply_patch as providerExecuted bash/edit calls, results, a file change, two steps', () => {
    const { parts } = promptTurn('multi');
    const calls = ofType(parts, 'tool-call');
    expect(calls.map((c) => [c.toolName, c.nativeName, c.providerExecuted])).toEqual([
      ['bash', 'exec_command', true],
      ['write', 'apply_patch', true],
    ]);
    expect(JSON.parse(calls[0]!.input)).toMatchObject({ command: "/bin/bash -lc 'echo hi > f.txt && cat f.txt'" });
    expect(ofType(parts, 'tool-result').map((r) => [r.toolName, r.result, r.isError])).toEqual([
      ['bash', 'hi\n', false],
      ['write', 'completed', false],
    ]);
    expect(ofType(parts, 'file-change')).toEqual([{ type: 'file-change', event: 'create', path: '/var/tmp/hb-codex-fixtures/multi/proj/written.txt' }]);
    expect(ofType(parts, 'finish-step').map((p) => p.finishReason.unified)).toEqual(['tool-calls', 'stop']);
    expect(ofType(parts, 'finish')[0]!.totalUsage.inputTokens.total, 'the turn total sums the steps').toBe(20);
    expect(Object.keys(codexBuiltinTools)).toEqual(expect.arrayContaining(calls.map((c) => c.toolName)));
  });

  it('edit: an update patch is an edit call and a modify file change', () => {
    const { parts } = promptTurn('edit');
    expect(ofType(parts, 'tool-call').map((c) => [c.toolName, c.nativeName])).toEqual([['edit', 'apply_patch']]);
    expect(ofType(parts, 'file-change')).toEqual([{ type: 'file-change', event: 'modify', path: '/var/tmp/hb-codex-fixtures/edit/proj/edit-me.txt' }]);
  });

  for (const [name, approved] of [['approval-accept', true], ['approval-decline', false]] as const) {
    it(`${name}: the command approval request becomes a tool-approval-request for its call; encodeApproval writes the captured answer`, () => {
      const { parts, state } = promptTurn(name);
      const [call] = ofType(parts, 'tool-call');
      const [request] = ofType(parts, 'tool-approval-request');
      expect(request).toEqual({ type: 'tool-approval-request', approvalId: 'codex-approval-0', toolCallId: call!.toolCallId });
      expect(adapter.encodeApproval!({ approvalId: request!.approvalId, approved }, state)).toBe(stdinLine(meta(name).stdin.at(-1)));
      const [result] = ofType(parts, 'tool-result');
      expect([result!.result, result!.isError]).toEqual(approved ? ['hi\n', false] : ['declined', true]);
      expect(() => adapter.encodeApproval!({ approvalId: 'codex-approval-9', approved: true }, state)).toThrow(/no approval request/);
    });
  }

  it('patch-approval: an apply_patch approval request, accepted, then the file change', () => {
    const { parts, state } = promptTurn('patch-approval');
    const [request] = ofType(parts, 'tool-approval-request');
    expect(request!.toolCallId).toBe(ofType(parts, 'tool-call')[0]!.toolCallId);
    expect(adapter.encodeApproval!({ approvalId: request!.approvalId, approved: true }, state)).toBe(stdinLine(meta('patch-approval').stdin.at(-1)));
    expect(ofType(parts, 'file-change').map((p) => p.event)).toEqual(['create']);
  });

  it('mcp: the host tool call is not echoed (the kit emits it from the bridge record); three steps, the hidden tool search first', () => {
    const { parts } = promptTurn('mcp');
    expect(ofType(parts, 'tool-call')).toEqual([]);
    expect(ofType(parts, 'tool-result')).toEqual([]);
    expect(text(parts)).toContain('ECHO_UPPER: HELLO MCP');
    expect(ofType(parts, 'finish-step').map((p) => p.finishReason.unified)).toEqual(['tool-calls', 'tool-calls', 'stop']);
  });

  it('interrupt: the open text block is closed, finish interrupted; encodeInterrupt names thread and turn as captured', () => {
    const { parts, state } = promptTurn('interrupt', 0, { end: { reason: 'aborted' } });
    expect(shape(parts).slice(-3), 'the block, then the step the CLI never closed, then the finish').toEqual(['text-end', 'finish-step', 'finish']);
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'other', raw: 'interrupted' });
    expect(adapter.encodeInterrupt!(state)).toBe(stdinLine(meta('interrupt').stdin.find((l) => l.method === 'turn/interrupt')));
    expect(adapter.encodeInterrupt!(adapter.translator.init({ turnId: 't', rerun: false })), 'no turn announced yet: abort alone').toBeUndefined();
    expect(text(promptTurn('interrupt', 1).parts)).toBe('Scripted reply 2 (text): you said "after the interrupt".');
  });

  it('interrupt: encodeInterrupt waits for turn/started (Codex refuses turn/interrupt for the turn its turn/start answer names, "no active turn to interrupt")', () => {
    const turn = turnsOf('interrupt').filter((t) => !isSetup(t))[0]!;
    const records = journal(turn, { input: promptInput('interrupt', 0) });
    let state = adapter.translator.init({ turnId: 'turn-1', rerun: false });
    const interruptible: string[] = [];
    for (const record of records.slice(0, -1)) {
      state = adapter.translator.step(state, record).state;
      const line = record.kind === 'stdout' ? record.data.text : '';
      if (adapter.encodeInterrupt!(state) !== undefined && interruptible.length === 0) interruptible.push(line);
    }
    expect(turn.some((l) => l.startsWith(`{"id":"${rpc.rpcIds.turnStart}",`)), 'the fixture has the turn/start answer').toBe(true);
    expect(interruptible[0]).toMatch(/^\{"method":"turn\/started"/);
  });

  it('fail: a failed turn is an error part and finish error; the next turn works', () => {
    const { parts } = promptTurn('fail');
    expect(ofType(parts, 'error')[0]!.error).toMatchObject({ message: expect.stringContaining('scripted failure') });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'failed' });
    expect(ofType(promptTurn('fail', 1).parts, 'finish')[0]!.finishReason.unified).toBe('stop');
  });

  it('bad-thread: a refused turn/start is an error part and finish error (the regex matcher ends that turn)', () => {
    const { parts } = promptTurn('bad-thread');
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: 'codex refused turn/start: thread not found: 01a20000-0000-7000-8000-000000000000' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'turn/start refused' });
  });

  it('steer: encodeUserMessage writes the captured turn/steer for the running turn', () => {
    const { state } = promptTurn('steer');
    expect(adapter.encodeUserMessage!('MIDTURN-MARKER also do this', state)).toBe(stdinLine(meta('steer').stdin.find((l) => l.method === 'turn/steer')));
    expect(() => adapter.encodeUserMessage!('x', adapter.translator.init({ turnId: 't', rerun: false }))).toThrow(/not started/);
  });

  it('two-prompts and resume: each prompt turn finishes stop with the scripted reply count', () => {
    expect(text(promptTurn('two-prompts', 1).parts)).toBe('Scripted reply 2 (text): you said "second prompt".');
    expect(text(promptTurn('resume').parts)).toBe('Scripted reply 2 (text): you said "what was the word".');
  });

  it('compact: our thread/compact/start turn yields one manual compaction part; the next prompt turn goes on', () => {
    const { parts } = promptTurn('compact', 1);
    expectWellFormed(parts, 'compact');
    expect(ofType(parts, 'compaction'), 'Codex does not show the summary').toEqual([{ type: 'compaction', trigger: 'manual', summary: '' }]);
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'stop', raw: 'completed' });
    expect(ofType(promptTurn('compact', 0).parts, 'compaction')).toEqual([]);
    expect(text(promptTurn('compact', 2).parts), 'the summary message is no user prompt to the scripted model').toBe('Scripted reply 2 (text): you said "after compact".');
    expect(meta('compact').modelRequests.map((r) => r.scenario)).toEqual(['text', 'compact', 'text']);
  });

  it('compact: a contextCompaction inside a prompt turn (Codex compacting on its own) is an auto compaction', () => {
    const compacting = turnsOf('compact').filter((t) => !isSetup(t))[1]!;
    const { parts } = translate(journal(compacting, { input: promptInput('compact', 0) }));
    expect(ofType(parts, 'compaction')).toEqual([{ type: 'compaction', trigger: 'auto', summary: '' }]);
  });

  it('compact: a refused thread/compact/start is an error part and finish error, and a turnEnd matcher ends it', () => {
    const refusal = '{"error":{"code":-32600,"message":"thread not found: x"},"id":"hb-compact-start"}';
    expect(matcher('stdout', refusal)).toBe(true);
    const { parts } = translate(journal([refusal], { input: rpc.compactStart('x') }));
    expectWellFormed(parts, 'refused compact');
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: 'codex refused thread/compact/start: thread not found: x' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'thread/compact/start refused' });
  });

  it('a turn that ends without turn/completed (the process exited) gets the generic error ending', () => {
    const turn = turnsOf('text').filter((t) => !isSetup(t))[0]!.slice(0, 8);
    const { parts } = translate(journal(turn, { input: promptInput('text', 0), end: { reason: 'exit', code: 1 } }));
    expectWellFormed(parts, 'exit');
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'exit' });
  });
});

describe('encoders and launch', () => {
  it('encodeThreadStart and encodePrompt write exactly the captured stdin lines', () => {
    const stdin = meta('text').stdin.map(stdinLine);
    expect(adapter.encodeThreadStart!()).toBe(stdin.slice(0, 3).join(''));
    const threadId = (meta('text').stdin[6]!.params as { threadId: string }).threadId;
    expect(adapter.encodePrompt!({ text: 'SCENARIO:text say hi', instructions: undefined, skills: [], threadId, permissionMode: 'allow-all' })).toBe(stdin.slice(3).join(''));
    const asked = adapter.encodePrompt!({ text: 'SCENARIO:shell', instructions: undefined, skills: [], threadId, permissionMode: 'allow-reads' })!;
    expect(asked).toContain('"approvalPolicy":"untrusted"');
    expect(adapter.encodePrompt!({ text: 'hi', instructions: 'BE BRIEF', skills: [], threadId, permissionMode: 'allow-all' })).toContain('"text":"BE BRIEF\\n\\nhi"');
    expect(() => adapter.encodePrompt!({ text: 'hi', instructions: undefined, skills: [], threadId: undefined })).toThrow(/no thread/);
  });

  it('encodeCompact writes the captured compaction request for the thread; refuses mid-turn and before a thread', () => {
    const stdin = meta('compact').stdin.map(stdinLine);
    const threadId = (meta('compact').stdin[6]!.params as { threadId: string }).threadId;
    const at = stdin.findIndex((l) => l.includes('"thread/compact/start"'));
    expect(adapter.encodeCompact!(undefined, { threadId, duringTurn: false })).toBe(stdin.slice(at - 3, at + 1).join(''));
    expect(adapter.encodeCompact!('focus on the tests', { threadId, duringTurn: false }), 'Codex takes no instructions').toBe(stdin.slice(at - 3, at + 1).join(''));
    let midTurn: unknown;
    try {
      adapter.encodeCompact!(undefined, { threadId, duringTurn: true });
    } catch (error) {
      midTurn = error;
    }
    expect(HarnessCapabilityUnsupportedError.isInstance(midTurn), 'thread/compact/start would interrupt the running turn').toBe(true);
    expect(() => adapter.encodeCompact!(undefined, { threadId: undefined, duringTurn: false })).toThrow(/no thread to compact/);
    expect(() => adapter.encodeCompact!(undefined), 'a caller that passes no context').toThrow(/no thread to compact/);
  });

  it('launch: the captured argv; MCP and model URLs by env-var name only; CODEX_HOME in the state dir; same spec for every mode', () => {
    const captured = meta('mcp');
    const options = { binPath: captured.argv[3]!, modelId: 'gpt-5.5', extraEnv: { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', OPENAI_API_KEY: 'sk-test' } };
    const launch = codexLaunch(options, ctx({ mcp: MCP_ENV_V1 }));
    expect(launch.argv).toEqual(captured.argv);
    expect(launch.argv.join(' ')).not.toMatch(/127\.0\.0\.1/);
    expect(launch.argv[2]).toContain(`$${MCP_ENV_V1.urlEnvVar}`);
    expect(launch.argv).toContain(`mcp_servers.host.bearer_token_env_var="${MCP_ENV_V1.tokenEnvVar}"`);
    expect(launch.env).toMatchObject({ HOME: '/w/state/codex-home', CODEX_HOME: '/w/state/codex-home/.codex' });
    expect(codexLaunch(options, ctx({ mode: 'resume', threadId: 'x', prompt: 'p', mcp: MCP_ENV_V1 })), 'the live process is reused across turns').toEqual(launch);
    expect(launchSpecSchema.safeParse(launch).success).toBe(true);
    const plain = codexLaunch({}, ctx());
    expect(plain.argv.slice(3, 5)).toEqual(['/w/boot/cli/node_modules/.bin/codex', 'app-server']);
    expect(plain.argv[2]).toBe('mkdir -p "$CODEX_HOME" && exec "$0" "$@"');
  });

  it('launch survive is on by default (options.survive): valid (pipes), the same as asked for; false drops it and nothing else', () => {
    const byDefault = launchSpecSchema.parse(codexLaunch({}, ctx()));
    expect(byDefault.survive).toBe(true);
    expect(launchSpecSchema.parse(codexLaunch({ survive: true }, ctx()))).toEqual(byDefault);
    const off = launchSpecSchema.parse(codexLaunch({ survive: false }, ctx()));
    expect(off.survive).toBeUndefined();
    expect({ ...off, survive: undefined }).toEqual({ ...byDefault, survive: undefined });
  });

  it('turnEnd matchers fire on turn/completed, our thread/start answer and refused starts — on no other captured line', () => {
    for (const name of fixtures) {
      for (const line of lines(name)) {
        const expected = line.startsWith('{"method":"turn/completed"') || line.startsWith('{"id":"hb-thread-start",') || /^\{"error":.*"id":"hb-(turn|compact)-start"\}$/.test(line);
        expect(matcher('stdout', line), `${name}: ${line.slice(0, 80)}`).toBe(expected);
      }
    }
  });

  it('unknown and non-JSON lines become raw parts, never a crash', () => {
    const records = journal(['not json', '{"method":"some/new/notification","params":{"x":1}}', '{"id":"hb-initialize","error":{"code":-1}}', '{"method":"item/started","params":{"item":{"type":"newKind","id":"i1"}}}']);
    const { parts } = translate(records);
    expect(ofType(parts, 'raw')).toHaveLength(4);
    expectWellFormed(parts, 'unknown lines');
  });
});

describe('translator snapshots', () => {
  const records = journal(turnsOf('multi').filter((t) => !isSetup(t))[0]!, { input: promptInput('multi', 0) });
  const mid = () => {
    let state = adapter.translator.init({ turnId: 'turn-1', rerun: false });
    for (const record of records.slice(0, 12)) state = adapter.translator.step(state, record).state;
    return JSON.parse(JSON.stringify(adapter.translator.snapshot!(state))) as Record<string, any>;
  };

  it('small plain JSON: the state but the model id, tagged cli codex v2', () => {
    const snapshot = mid();
    expect(Object.keys(snapshot)).toEqual(['cli', 'v', 'state']);
    expect(snapshot).toMatchObject({ cli: 'codex', v: 2 });
    expect(snapshot.state.modelId, 'configuration, not state').toBeUndefined();
    expect(JSON.stringify(snapshot).length).toBeLessThan(1024);
    const restored = codexAdapter({ modelId: 'other-model' }).translator.restore!(snapshot);
    expect(restored.modelId, 'restore takes the adapter\'s own model id').toBe('other-model');
  });

  it('restore refuses foreign and corrupt snapshots with a clear error; the kit then replays the turn', () => {
    const restore = adapter.translator.restore!;
    const good = mid();
    expect(() => restore(null)).toThrow('codex: not a codex translator snapshot v2 (found cli none, v none)');
    expect(() => restore({ textId: null, finished: false }), 'the fixture adapter\'s').toThrow(/not a codex translator snapshot v2/);
    const pi = piAdapter().translator;
    expect(() => restore(pi.snapshot!(pi.init({ turnId: 't', rerun: false }))), 'pi\'s').toThrow('codex: not a codex translator snapshot v2 (found cli "pi", v 2)');
    expect(() => restore({ ...good, v: 1 }), 'an older version').toThrow(/found cli "codex", v 1/);
    expect(() => restore({ ...good, state: { ...good.state, approvals: { call: true } } })).toThrow(/codex: corrupt translator snapshot:[\s\S]*approvals/);
    expect(() => restore({ ...good, state: { ...good.state, surprise: true } }), 'an unknown field').toThrow(/codex: corrupt translator snapshot:[\s\S]*surprise/);
    const { compact: _compact, ...missing } = good.state;
    expect(() => restore({ ...good, state: missing })).toThrow(/codex: corrupt translator snapshot:[\s\S]*compact/);
    expect(() => restore({ ...good, state: { ...good.state, stream: { ...good.state.stream, block: { type: 'image', id: 'x' } } } })).toThrow(/corrupt/);
    const corrupt = { seq: 12, adapter: { ...good, state: { ...good.state, turnId: 7 } }, toolCalls: [], approvals: [], unansweredParts: [], openBlocks: [] };
    expect(TurnTranslation.restore(adapter, { turnId: 'turn-1', rerun: false }, corrupt, new Set()), 'no restore: the session replays').toBeNull();
    expect(TurnTranslation.restore(adapter, { turnId: 'turn-1', rerun: false }, { ...corrupt, adapter: good }, new Set())).not.toBeNull();
  });

  it('the snapshot shares nothing with the live state (the translator keeps mutating it)', () => {
    let state = adapter.translator.init({ turnId: 'turn-1', rerun: false });
    for (const record of records.slice(0, 12)) state = adapter.translator.step(state, record).state;
    const snapshot = adapter.translator.snapshot!(state);
    const before = JSON.stringify(snapshot);
    for (const record of records.slice(12)) state = adapter.translator.step(state, record).state;
    expect(JSON.stringify(snapshot)).toBe(before);
  });
});
