// The pi adapter driven by the real captured `pi --mode rpc` fixtures (test/fixtures/pi): each
// turn's stdout lines become the stdout records a bridge would journal and go through the translator
// — alone and through the kit's TurnTranslation (every cut point, cont pieces). Also: the launch
// spec's turn-end matchers against the real lines, the encoders against the captured stdin, and the
// extension source (a string here; the fixtures ran it inside pi).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { compileTurnEnd } from '../../../bridge/supervisor/turn-end-matcher.ts';
import type { LaunchContext } from '../../../host/adapter-kit/adapter.ts';
import { piAdapter, type PiState } from '../../../host/adapters/pi/pi.ts';
import { piChatCompletionsProvider } from '../../../host/adapters/pi/provider.ts';
import { PI_EXTENSION_ENV, piExtensionFile, piExtensionSource } from '../../../host/adapters/pi/extension.ts';
import { piBuiltinTools } from '../../../host/adapters/pi/tools.ts';
import { TurnTranslation } from '../../../host/adapter-kit/turn-translation.ts';
import { HarnessCapabilityUnsupportedError } from '../../../protocol/harness-v1/errors.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { launchSpecSchema } from '../../../protocol/v1/launch-spec.ts';
import { MCP_ENV_V1 } from '../../../protocol/v1/mcp-env.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { codexAdapter } from '../../../host/adapters/codex/codex.ts';
import { checkEveryCutFolds } from '../ui-replay.ts';
import { expectEveryCutResumes, expectSliceResumes, expectWellFormed, kitBySeq, normalizeIds, ofType, textOf } from './translator-checks.ts';

const fixtureDir = fileURLToPath(new URL('../../fixtures/pi/', import.meta.url));
const fixtures = readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.jsonl'))
  .map((f) => f.slice(0, -'.jsonl'.length))
  .sort();
const adapter = piAdapter();

type Part = HarnessV1StreamPart;
type TurnEnd = Extract<JournalRecord, { kind: 'turn-end' }>['data'];

function lines(name: string): string[] {
  return readFileSync(`${fixtureDir}${name}.jsonl`, 'utf8').split('\n').filter((l) => l.length > 0);
}

function stdinOf(name: string): unknown[] {
  const meta: unknown = JSON.parse(readFileSync(`${fixtureDir}${name}.meta.json`, 'utf8'));
  if (typeof meta !== 'object' || meta === null || !('stdin' in meta) || !Array.isArray(meta.stdin)) throw new Error(`${name}.meta.json has no stdin list`);
  return meta.stdin;
}

/** The launch's turn-end test, compiled the way the bridge compiles it. */
const spec = launchSpecSchema.parse(adapter.launch(ctx()));
const compiled = compileTurnEnd(spec.turnEnd);
if (!compiled.ok || !compiled.test) throw new Error('the pi launch has no turn-end matchers');
const endsTurn = compiled.test;

/**
 * One turn per prompt, cut the way the bridge cuts a long-lived process's output: a turn's first line
 * is the get_state answer (the first thing its input asks for) and its last the line a turnEnd matcher
 * fires on. doCompact's internal turn (a compact command) starts at compaction_start. Lines in between
 * turns (the abort ack) belong to no turn.
 */
function turnsOf(name: string): string[][] {
  const turns: string[][] = [];
  let current: string[] | null = null;
  for (const line of lines(name)) {
    if (line.startsWith('{"id":"harness-state"') || (!current && line.startsWith('{"type":"compaction_start"'))) current = [];
    if (!current) continue;
    current.push(line);
    if (endsTurn('stdout', line)) {
      turns.push(current);
      current = null;
    }
  }
  return turns;
}

/** The records a bridge would journal for one turn; `piece` splits every line into `cont` pieces of that many chars. */
function journal(turnLines: string[], opts: { end?: TurnEnd; piece?: number; stderr?: string[]; extra?: (seq: number) => JournalRecord[] } = {}): JournalRecord[] {
  let seq = 1;
  const turnId = 'turn-1';
  const records: JournalRecord[] = [{ seq: seq++, turnId, ts: 0, kind: 'turn-start', data: { input: 'x' } }];
  for (const line of turnLines) {
    const pieces = opts.piece ? line.match(new RegExp(`[\\s\\S]{1,${opts.piece}}`, 'g'))! : [line];
    pieces.forEach((text, i) => {
      const cont = i < pieces.length - 1;
      records.push({ seq: seq++, turnId, ts: 0, kind: 'stdout', data: cont ? { text, cont } : { text } });
    });
  }
  for (const text of opts.stderr ?? []) records.push({ seq: seq++, turnId, ts: 0, kind: 'stderr', data: { text } });
  records.push({ seq: seq++, turnId, ts: 0, kind: 'turn-end', data: opts.end ?? { reason: 'matched' } });
  return records;
}

function translate(records: JournalRecord[], rerun = false): { parts: Part[]; bySeq: Map<number, Part[]>; state: PiState } {
  let state = adapter.translator.init({ turnId: 'turn-1', rerun });
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

const turnParts = (name: string, index = 0, end?: TurnEnd) => translate(journal(turnsOf(name)[index]!, end ? { end } : {}));
const text = textOf;
const types = (parts: Part[]) => parts.map((p) => p.type);

function ctx(over: Partial<LaunchContext> = {}): LaunchContext {
  return {
    mode: 'fresh',
    threadId: undefined,
    prompt: 'hi',
    sessionWorkDir: '/w/session',
    bootstrapDir: '/w/.harness-bridge/pi',
    stateDir: '/w/.harness-bridge/sessions/pi-s1',
    permissionMode: 'allow-reads',
    tools: [],
    mcp: undefined,
    modelId: undefined,
    ...over,
  };
}

/** The UI-level every-cut check (test/host/ui-replay.ts): every cut folds to the uninterrupted message, approvals answered as an application answers them (docs/guarantees.md#ui). */
const ui = { cuts: 0, differing: 0, turns: [] as string[] };
afterAll(() => console.log(`[figures] ui-every-cut pi: cuts=${ui.cuts} fold-errors=0 message-differs=${ui.differing} in ${ui.turns.join(', ') || 'none'}`));

describe('every fixture, every turn', () => {
  it('the fixtures are all there and cut into the expected turns', () => {
    expect(fixtures).toEqual(['abort', 'approve', 'bash-write', 'compact', 'compact-fail', 'compact-mid-turn', 'deny', 'edit', 'fail', 'mcp', 'resume', 'resume-first', 'steer', 'text', 'thinking', 'two-prompts']);
    expect(fixtures.map((f) => turnsOf(f).length)).toEqual([2, 1, 1, 4, 3, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2]);
  });

  for (const name of fixtures) {
    turnsOf(name).forEach((turn, index) => {
      const where = `${name} turn ${index + 1}`;
      const records = journal(turn);

      it(`${where}: well-formed parts that validate against streamPartSchema`, () => {
        expectWellFormed(translate(records).parts, where);
      });

      it(`${where}: deterministic (translating twice gives identical parts)`, () => {
        expect(translate(records).parts, where).toEqual(translate(records).parts);
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
        const { checked, differing } = await checkEveryCutFolds(() => piAdapter(), records, where);
        ui.cuts += checked;
        ui.differing += differing.length;
        if (differing.length > 0) ui.turns.push(`${where} (${differing.length})`);
      }, 120_000);

      it(`${where}: lines split into cont pieces translate the same (ids aside)`, () => {
        const whole = normalizeIds(translate(records).parts);
        expect(normalizeIds(translate(journal(turn, { piece: 97 })).parts), where).toEqual(whole);
      });

      it(`${where}: every cut point k — snapshot, restore in a fresh translator, the rest: exactly the uninterrupted parts`, () => {
        expectEveryCutResumes(() => piAdapter(), records, where);
      });

      it(`${where}: every cut point k inside split lines (cont pieces) — the snapshot carries the partial line`, () => {
        expectEveryCutResumes(() => piAdapter(), journal(turn, { piece: 509 }), where);
      });
    });
  }
});

describe('fixture by fixture', () => {
  it('text: exact part sequence — stream-start with the model, one text block from the deltas, finish-step and finish with usage', () => {
    const { parts } = turnParts('text');
    expect(types(parts)).toEqual(['stream-start', 'text-start', 'text-delta', 'text-delta', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(parts[0]).toEqual({ type: 'stream-start', modelId: 'fake-model' });
    expect(text(parts)).toBe('Scripted reply 1 (text): you said "say hi".');
    const [step] = ofType(parts, 'finish-step');
    expect(step!.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(step!.usage.inputTokens).toEqual({ total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 });
    expect(step!.usage.raw).toMatchObject({ input: 10, output: 5, totalTokens: 15 });
    const [finish] = ofType(parts, 'finish');
    expect(finish!.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(finish!.totalUsage.inputTokens.total).toBe(10);
    expect(finish!.totalUsage.outputTokens.total).toBe(5);
  });

  it('thinking: reasoning then text; pi ends the thinking block after the text started, and no text is lost', () => {
    const { parts } = turnParts('thinking');
    expect(types(parts)).toEqual([
      'stream-start',
      'reasoning-start',
      'reasoning-delta',
      'reasoning-end',
      'text-start',
      ...Array(5).fill('text-delta'),
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(ofType(parts, 'reasoning-delta')[0]!.delta).toBe('Thinking about request 1: the user wants a scripted answer.');
    expect(text(parts)).toBe('Scripted reply 1 (think): you said "think first".');
  });

  it('bash-write: exact sequence — builtin calls (providerExecuted, nativeName) at tool_execution_start, results, a file change, two steps, summed usage', () => {
    const { parts } = turnParts('bash-write');
    expect(types(parts).filter((t) => t !== 'text-delta')).toEqual([
      'stream-start',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-end',
      'tool-input-end',
      'tool-call',
      'tool-call',
      'tool-result',
      'tool-result',
      'file-change',
      'finish-step',
      'text-start',
      'text-end',
      'finish-step',
      'finish',
    ]);
    const calls = ofType(parts, 'tool-call');
    expect(calls.map((c) => [c.toolName, c.nativeName, c.providerExecuted])).toEqual([
      ['bash', 'bash', true],
      ['write', 'write', true],
    ]);
    expect(JSON.parse(calls[0]!.input)).toEqual({ command: 'echo hi > f.txt && cat f.txt' });
    // The arguments as pi streamed them: tool-input parts under the call's id, whose deltas join to its input.
    for (const call of calls) {
      const input = parts.filter((p) => (p.type === 'tool-input-start' || p.type === 'tool-input-delta' || p.type === 'tool-input-end') && p.id === call.toolCallId);
      expect(input[0]).toMatchObject({ type: 'tool-input-start', toolName: call.toolName, providerExecuted: true });
      expect(input.at(-1)?.type).toBe('tool-input-end');
      expect(JSON.parse(ofType(input, 'tool-input-delta').map((p) => p.delta).join(''))).toEqual(JSON.parse(call.input));
    }
    expect(ofType(parts, 'tool-result').map((r) => [r.toolCallId, r.toolName, r.result, r.isError])).toEqual([
      [calls[0]!.toolCallId, 'bash', 'hi\n', false],
      [calls[1]!.toolCallId, 'write', 'Successfully wrote 30 bytes to written.txt', false],
    ]);
    expect(ofType(parts, 'file-change')).toEqual([{ type: 'file-change', event: 'create', path: 'written.txt' }]);
    expect(ofType(parts, 'finish-step').map((p) => p.finishReason)).toEqual([
      { unified: 'tool-calls', raw: 'toolUse' },
      { unified: 'stop', raw: 'stop' },
    ]);
    const [finish] = ofType(parts, 'finish');
    expect(finish!.totalUsage.inputTokens.total, 'two steps of 10').toBe(20);
    expect(finish!.totalUsage.outputTokens.total).toBe(10);
    expect(Object.keys(piBuiltinTools)).toEqual(expect.arrayContaining(calls.map((c) => c.toolName)));
  });

  it('edit: an edit call, its details as provider metadata, and a modify file change', () => {
    const { parts } = turnParts('edit');
    expect(ofType(parts, 'tool-call').map((c) => c.toolName)).toEqual(['edit']);
    const [result] = ofType(parts, 'tool-result');
    expect(result!.providerMetadata?.pi?.details).toMatchObject({ diff: expect.stringContaining('this is new text') });
    expect(ofType(parts, 'file-change')).toEqual([{ type: 'file-change', event: 'modify', path: 'edit-me.txt' }]);
  });

  it('two-prompts: each prompt is its own turn; the second sees the first', () => {
    expect(text(turnParts('two-prompts', 0).parts)).toBe('Scripted reply 1 (text): you said "first prompt".');
    expect(text(turnParts('two-prompts', 1).parts)).toBe('Scripted reply 2 (text): you said "second prompt".');
  });

  it('abort: the streamed text once, step and finish interrupted (the bridge ends an aborted turn "aborted"), no error part; the next prompt works', () => {
    const { parts } = turnParts('abort', 0, { reason: 'aborted' });
    expectWellFormed(parts, 'abort');
    expect(types(parts)).toEqual(['stream-start', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(text(parts)).toBe('slow 1 ');
    expect(ofType(parts, 'finish-step')[0]!.finishReason).toEqual({ unified: 'other', raw: 'aborted' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'other', raw: 'aborted' });
    expect(ofType(parts, 'error')).toEqual([]);
    expect(lines('abort').some((l) => l.startsWith('{"type":"response","command":"abort"')), 'the abort ack comes after agent_end, between turns').toBe(true);
    expect(text(turnParts('abort', 1).parts)).toBe('Scripted reply 2 (text): you said "after the abort".');
  });

  it('fail: stopReason error with exit 0 → error part with the message and finish error; the next prompt works', () => {
    const { parts } = turnParts('fail', 0);
    expect(types(parts)).toEqual(['stream-start', 'error', 'finish-step', 'finish']);
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: '400 scripted failure' });
    expect(ofType(parts, 'finish-step')[0]!.finishReason).toEqual({ unified: 'error', raw: 'error' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'error' });
    const meta: unknown = JSON.parse(readFileSync(`${fixtureDir}fail.meta.json`, 'utf8'));
    expect(meta).toMatchObject({ exitCode: 0 });
    expect(text(turnParts('fail', 1).parts)).toBe('Scripted reply 2 (text): you said "after the error".');
  });

  it('mcp: the extension-registered host tool (mcp__host__*) yields no tool-call or tool-result of its own', () => {
    const { parts } = turnParts('mcp');
    expect(ofType(parts, 'tool-call')).toEqual([]);
    expect(ofType(parts, 'tool-result')).toEqual([]);
    expect(text(parts)).toBe('Done (1 tool result). Last tool result was: ECHO_UPPER: HELLO MCP');
    expect(ofType(parts, 'finish-step').map((p) => p.finishReason.unified)).toEqual(['tool-calls', 'stop']);
  });

  it('mcp through the kit: with the bridge records interleaved, exactly one tool-call — the kit\'s', () => {
    const turn = turnsOf('mcp')[0]!;
    const at = turn.findIndex((l) => l.startsWith('{"type":"tool_execution_start"'));
    const base = journal(turn);
    const records: JournalRecord[] = [];
    for (const record of base) {
      records.push({ ...record, seq: records.length + 1 });
      if (record.seq === at + 2) {
        records.push({ seq: records.length + 1, turnId: 'turn-1', ts: 0, kind: 'tool-call', data: { callId: 'mcp-9', name: 'echo_upper', input: { text: 'hello mcp' } } });
        records.push({ seq: records.length + 1, turnId: 'turn-1', ts: 0, kind: 'tool-result', data: { callId: 'mcp-9', output: 'ECHO_UPPER: HELLO MCP', isError: false } });
      }
    }
    const translation = new TurnTranslation(adapter, { turnId: 'turn-1', rerun: false }, 0, new Set());
    const parts = records.flatMap((r) => translation.push(r));
    expectWellFormed(parts, 'mcp via kit');
    expect(ofType(parts, 'tool-call')).toEqual([{ type: 'tool-call', toolCallId: 'mcp-9', toolName: 'echo_upper', input: '{"text":"hello mcp"}' }]);
    expect(translation.unanswered()).toEqual([]);
  });

  for (const [name, approved] of [['approve', true], ['deny', false]] as const) {
    it(`${name}: confirm request → tool-approval-request after its call; encodeApproval writes the captured answer`, () => {
      const { parts, state } = turnParts(name);
      const [call] = ofType(parts, 'tool-call');
      const [request] = ofType(parts, 'tool-approval-request');
      expect(request).toEqual({ type: 'tool-approval-request', approvalId: expect.stringMatching(/^[0-9a-f-]{36}$/), toolCallId: call!.toolCallId });
      expect(parts.indexOf(request!)).toBeGreaterThan(parts.indexOf(call!));
      const line = adapter.encodeApproval!({ approvalId: request!.approvalId, approved, ...(approved ? {} : { reason: 'host said no' }) }, state);
      expect(line.endsWith('\n')).toBe(true);
      expect(JSON.parse(line)).toEqual(stdinOf(name)[2]);
      const [result] = ofType(parts, 'tool-result');
      expect(result).toMatchObject({ toolCallId: call!.toolCallId, isError: !approved, result: approved ? 'hi\n' : 'The host denied this tool use.' });
    });
  }

  it('an approval request is a cli approval for the kit: submitToolApproval answers it through encodeApproval', () => {
    const records = journal(turnsOf('approve')[0]!);
    const translation = new TurnTranslation(adapter, { turnId: 'turn-1', rerun: false }, 0, new Set());
    records.forEach((r) => translation.push(r));
    expect([...translation.approvals.values()]).toEqual([{ source: 'cli', answered: false }]);
  });

  it('steer: the mid-turn message reaches the model in the same turn; a plain prompt while streaming is refused (raw, not ours)', () => {
    const { parts } = turnParts('steer');
    expect(text(parts)).toContain('MIDTURN-MARKER also do this');
    expect(ofType(parts, 'error')).toEqual([]);
    expect(ofType(parts, 'raw').map((p) => p.rawValue)).toEqual([expect.objectContaining({ id: 'probe-plain', success: false })]);
    expect(JSON.parse(adapter.encodeUserMessage!('MIDTURN-MARKER also do this', adapter.translator.init({ turnId: 't', rerun: false })))).toEqual(stdinOf('steer')[3]);
  });

  it('a rejected prompt (harness-prompt, success false) ends the turn by the launch matcher: error part and finish error', () => {
    const refused = lines('steer').find((l) => l.includes('"probe-plain"'))!.replace('"probe-plain"', '"harness-prompt"');
    expect(endsTurn('stdout', refused)).toBe(true);
    const state = lines('text')[0]!;
    const { parts } = translate(journal([state, refused]));
    expect(types(parts)).toEqual(['stream-start', 'error', 'finish']);
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: expect.stringContaining('Agent is already processing') });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'rejected' });
  });

  it('compact: doCompact\'s command with its custom instructions; the internal turn is compaction_start, compaction_end, the answer → a manual compaction part with the summary, finish stop', () => {
    const threadId = journal(lines('compact')).flatMap((r) => adapter.threadId(r) ?? [])[0];
    const written = adapter.encodeCompact!('COMPACT-FOCUS keep the file names', { threadId, duringTurn: false });
    expect(written.endsWith('\n')).toBe(true);
    expect(JSON.parse(written)).toEqual(stdinOf('compact')[2]);
    expect(stdinOf('compact')[2]).toEqual({ id: 'harness-compact', type: 'compact', customInstructions: 'COMPACT-FOCUS keep the file names' });
    const turn = turnsOf('compact')[1]!;
    expect(turn.map((l) => JSON.parse(l).type)).toEqual(['compaction_start', 'compaction_end', 'response']);
    const { parts, bySeq } = translate(journal(turn));
    expect(types(parts)).toEqual(['stream-start', 'compaction', 'finish-step', 'finish']);
    // The scripted model echoes the focus it was given: pi put the instructions into its summarisation request.
    const summary = 'Scripted summary of a conversation with 0 earlier user message(s), focus "COMPACT-FOCUS keep the file names".';
    expect(ofType(parts, 'compaction')).toEqual([{ type: 'compaction', trigger: 'manual', summary, tokensBefore: 15 }]);
    expect(bySeq.get(3), 'the compaction part comes with compaction_end').toEqual([{ type: 'stream-start' }, ofType(parts, 'compaction')[0]]);
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'stop', raw: 'compacted' });
    expect(ofType(parts, 'error')).toEqual([]);
  });

  it('compact: pi keeps its newest messages after the summary (keepRecentTokens), and the next prompt\'s model request starts with the summary', () => {
    const meta = JSON.parse(readFileSync(`${fixtureDir}compact.meta.json`, 'utf8')) as { modelRequests: Array<{ scenario: string; messages: string[] }> };
    expect(meta.modelRequests.map((r) => r.scenario)).toEqual(['text', 'compact', 'text']);
    expect(meta.modelRequests[1]!.messages[1], 'nothing old enough to summarise in a small session').toMatch(/^user \| <conversation>\n\n<\/conversation>/);
    expect(meta.modelRequests[2]!.messages.slice(1)).toEqual([
      expect.stringMatching(/^user \| The conversation history before this point was compacted into the following summary:\n\n<summary>\nScri/),
      'user | SCENARIO:text a turn to compact',
      'assistant | Scripted reply 1 (text): you said "a turn to compact".',
      'user | SCENARIO:text after compact',
    ]);
    expect(text(turnParts('compact', 3).parts), 'the summary is not a user prompt').toBe('Scripted reply 2 (text): you said "after compact".');
  });

  it('compact: a compact without instructions sends none; pi refusing it ("Already compacted", no model call) → error part and finish error (doCompact rejects compact-failed)', () => {
    const threadId = '/w/t.jsonl';
    expect(JSON.parse(adapter.encodeCompact!(undefined, { threadId, duringTurn: false }))).toEqual(stdinOf('compact')[3]);
    expect(JSON.parse(adapter.encodeCompact!('', { threadId, duringTurn: false }))).toEqual({ id: 'harness-compact', type: 'compact' });
    const { parts } = turnParts('compact', 2);
    expect(types(parts)).toEqual(['stream-start', 'error', 'finish']);
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: 'pi did not compact: Already compacted' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'compact failed' });
  });

  it('compact-fail: the summarisation request fails (HTTP 400) → no compaction part, error with pi\'s reason, finish error; the next prompt works', () => {
    const { parts } = turnParts('compact-fail', 1);
    expect(types(parts)).toEqual(['stream-start', 'error', 'finish']);
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: 'pi did not compact: Summarization failed: 400 scripted failure' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'compact failed' });
    expect(text(turnParts('compact-fail', 2).parts)).toBe('Scripted reply 2 (text): you said "after the failed compact".');
  });

  it('compact-mid-turn: a compact command during a turn cuts the run off (no message_end, turn_end or agent_end; the partial reply is dropped), so encodeCompact refuses mid-turn', () => {
    const cut = turnsOf('compact-mid-turn')[0]!;
    const typesOf = cut.map((l) => JSON.parse(l).type);
    expect(typesOf.slice(-3)).toEqual(['compaction_start', 'compaction_end', 'response']);
    expect(typesOf.filter((t) => ['message_end', 'turn_end', 'agent_end'].includes(t)), 'only the user message ended').toEqual(['message_end']);
    const meta = JSON.parse(readFileSync(`${fixtureDir}compact-mid-turn.meta.json`, 'utf8')) as { modelRequests: Array<{ outcome: string; messages: string[] }> };
    expect(meta.modelRequests[0]!.outcome, 'pi hung up on the streaming model call').toBe('client-closed');
    expect(meta.modelRequests[2]!.messages.some((m) => m.startsWith('assistant')), 'the cut reply is not in the history').toBe(false);
    expect(() => adapter.encodeCompact!(undefined, { threadId: '/w/t.jsonl', duringTurn: true })).toThrow(HarnessCapabilityUnsupportedError);
    expect(() => adapter.encodeCompact!('x', { threadId: undefined, duringTurn: false }), 'no session yet').toThrow(/no session to compact yet/);
    expect(text(turnParts('compact-mid-turn', 1).parts)).toBe('Scripted reply 2 (text): you said "after the mid-turn compact".');
  });

  it('threadId: the session file from get_state; the resumed process (other cwd, --session <file>) reports the same file', () => {
    const ids = (name: string) => journal(lines(name)).map((r) => adapter.threadId(r)).filter((t): t is string => t !== undefined);
    expect(ids('resume-first')).toEqual(['/tmp/hb-pi-fixtures/resume/state/pi/sessions/thread.jsonl']);
    expect(ids('resume')).toEqual(ids('resume-first'));
    expect(ids('two-prompts')).toHaveLength(2);
    expect(text(turnParts('resume').parts)).toBe('Scripted reply 2 (text): you said "what was the word".');
  });

  it('the turn-end matchers fire on agent_end lines and on the answers to our compact commands (and on a rejected prompt), never on anything else pi printed', () => {
    for (const name of fixtures) {
      for (const line of lines(name)) {
        const ends = line.startsWith('{"type":"agent_end"') || line.startsWith('{"id":"harness-compact","type":"response","command":"compact",');
        expect(endsTurn('stdout', line), `${name}: ${line.slice(0, 60)}`).toBe(ends);
      }
    }
    expect(lines('compact').filter((l) => endsTurn('stdout', l)).map((l) => JSON.parse(l).type), 'the prompt, both compacts, the prompt').toEqual(['agent_end', 'response', 'response', 'agent_end']);
    const agentEnd = lines('text').find((l) => l.startsWith('{"type":"agent_end"'))!;
    expect(endsTurn('stdout', agentEnd.slice(0, 40), false), 'on the first piece of an over-long agent_end').toBe(true);
  });
});

describe('turns that end without agent_end', () => {
  const partial = turnsOf('abort')[0]!.slice(0, 10); // get_state … the first text delta
  const endWith = (end: TurnEnd) => translate(journal(partial, { end })).parts;

  it('aborted or stopped → blocks closed, finish interrupted', () => {
    for (const reason of ['aborted', 'stopped'] as const) {
      const parts = endWith({ reason });
      expectWellFormed(parts, reason);
      expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'other', raw: reason });
    }
  });

  it('exit (pi died) → error part naming the code, finish error', () => {
    const parts = endWith({ reason: 'exit', code: 1 });
    expectWellFormed(parts, 'exit');
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: 'pi ended the turn without a result (exit, code 1)' });
  });

  it('spawn-failed → error with the bridge message', () => {
    const parts = translate(journal([], { end: { reason: 'spawn-failed', message: 'ENOENT pi' } })).parts;
    expect(types(parts)).toEqual(['stream-start', 'error', 'finish']);
  });

  it('interrupted (the bridge died) → blocks closed, no finish: the kit reruns and that turn finishes', () => {
    const parts = endWith({ reason: 'interrupted' });
    expect(parts.at(-1)?.type).toBe('text-end');
    expect(ofType(parts, 'finish')).toEqual([]);
  });

  it('a rerun turn opens with stream-start on its turn-start record (where the kit marks it recomputed)', () => {
    const { bySeq, parts } = translate(journal(turnsOf('text')[0]!), true);
    expect(bySeq.get(1)).toEqual([{ type: 'stream-start' }]);
    expectWellFormed(parts, 'rerun');
  });
});

describe('odd input never crashes the translator', () => {
  it('non-JSON stdout, unknown event types, bad shapes and stderr become raw parts', () => {
    const turn = turnsOf('text')[0]!;
    const odd = ['not json at all', '{"type":"auto_retry_start","attempt":1}', '{"type":"tool_execution_start","toolCallId":3}', '{broken', '{"type":"extension_ui_request","id":"u1","method":"notify","message":"hi"}'];
    const { parts } = translate(journal([turn[0]!, ...odd, ...turn.slice(1)], { stderr: ['a warning'] }));
    expect(ofType(parts, 'raw').map((p) => p.rawValue)).toEqual([
      'not json at all',
      { type: 'auto_retry_start', attempt: 1 },
      { type: 'tool_execution_start', toolCallId: 3 },
      '{broken',
      { type: 'extension_ui_request', id: 'u1', method: 'notify', message: 'hi' },
      { stderr: 'a warning' },
    ]);
    expect(text(parts)).toBe('Scripted reply 1 (text): you said "say hi".');
    expect(ofType(parts, 'finish')).toHaveLength(1);
  });

  it('a confirm that is not ours (another title, or a message without a toolCallId) is raw, not an approval', () => {
    const turn = turnsOf('text')[0]!;
    const foreign = ['{"type":"extension_ui_request","id":"u2","method":"confirm","title":"Delete?","message":"x"}', '{"type":"extension_ui_request","id":"u3","method":"confirm","title":"harness-bridge: approve tool use","message":"not json"}'];
    const { parts } = translate(journal([turn[0]!, ...foreign, ...turn.slice(1)]));
    expect(ofType(parts, 'tool-approval-request')).toEqual([]);
    expect(ofType(parts, 'raw')).toHaveLength(2);
  });
});

describe('launch, encoders and the extension', () => {
  it('one long-lived rpc process, the extension, this session\'s own session file, and no secrets in argv or env', () => {
    expect(spec.argv).toEqual(['/w/.harness-bridge/pi/cli/node_modules/.bin/pi', '--mode', 'rpc', '-e', '/w/.harness-bridge/pi/pi-host-tools.ts', '--session', '/w/.harness-bridge/sessions/pi-s1/pi/sessions/thread.jsonl']);
    expect(spec).toMatchObject({ lifetime: 'session', stdin: 'pipe', cwd: '/w/session', interrupt: { input: '{"type":"abort"}\n' } });
    expect(spec.env).toMatchObject({ HOME: '/w/.harness-bridge/sessions/pi-s1/pi/home', PI_CODING_AGENT_DIR: '/w/.harness-bridge/sessions/pi-s1/pi/agent', PI_OFFLINE: '1', PI_TELEMETRY: '0' });
    expect(spec.env?.[PI_EXTENSION_ENV.permissionMode]).toBe('allow-reads');
    const withMcp = launchSpecSchema.parse(adapter.launch(ctx({ mcp: MCP_ENV_V1 })));
    expect(withMcp.env).toMatchObject({ [PI_EXTENSION_ENV.mcpUrlVar]: 'HARNESS_BRIDGE_MCP_URL', [PI_EXTENSION_ENV.mcpTokenVar]: 'HARNESS_BRIDGE_MCP_TOKEN' });
  });

  it('launch survive is on by default (options.survive): valid (pipes), the same as asked for; false drops it and nothing else', () => {
    const byDefault = launchSpecSchema.parse(piAdapter().launch(ctx()));
    expect(byDefault.survive).toBe(true);
    expect(launchSpecSchema.parse(piAdapter({ survive: true }).launch(ctx()))).toEqual(byDefault);
    const off = launchSpecSchema.parse(piAdapter({ survive: false }).launch(ctx()));
    expect(off.survive).toBeUndefined();
    expect({ ...off, survive: undefined }).toEqual({ ...byDefault, survive: undefined });
  });

  it('argv is the same for the fresh turn and every resumed turn of the session (the bridge keeps the live process)', () => {
    const fresh = launchSpecSchema.parse(adapter.launch(ctx()));
    const [threadId] = journal(lines('text')).flatMap((r) => adapter.threadId(r) ?? []);
    expect(threadId).toBeDefined();
    const file = fresh.argv[fresh.argv.indexOf('--session') + 1]!;
    const resumed = launchSpecSchema.parse(adapter.launch(ctx({ mode: 'resume', threadId: file })));
    expect(resumed.argv).toEqual(fresh.argv);
    const rerun = launchSpecSchema.parse(adapter.launch(ctx({ mode: 'rerun', threadId: '/elsewhere/t.jsonl' })));
    expect(rerun.argv.slice(-1)).toEqual(['/elsewhere/t.jsonl']);
  });

  it('a provider goes to the extension through env; its first model is the default --model; extraEnv wins', () => {
    const provider = piChatCompletionsProvider({ id: 'fake', baseUrl: '${URL}/v1', apiKey: 'sk-test', models: ['m1', 'm2'] });
    const launched = launchSpecSchema.parse(piAdapter({ provider, binPath: '/bin/pi', extraEnv: { PI_OFFLINE: '0' } }).launch(ctx()));
    expect(launched.argv.slice(-4)).toEqual(['--provider', 'fake', '--model', 'm1']);
    expect(launched.argv[0]).toBe('/bin/pi');
    expect(JSON.parse(launched.env![PI_EXTENSION_ENV.provider]!)).toMatchObject({ id: 'fake', baseUrl: '${URL}/v1', api: 'openai-completions', models: [{ id: 'm1' }, { id: 'm2' }] });
    expect(launched.env?.PI_OFFLINE).toBe('0');
    const explicit = launchSpecSchema.parse(piAdapter({ provider, modelId: 'm2' }).launch(ctx()));
    expect(explicit.argv.slice(-2)).toEqual(['--model', 'm2']);
  });

  it('encodePrompt asks get_state, then prompts; instructions go before the first prompt text', () => {
    const written = adapter.encodePrompt!({ text: 'SCENARIO:text say hi', instructions: undefined, skills: [], threadId: undefined })!;
    expect(written.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)).toEqual(stdinOf('text'));
    const first = adapter.encodePrompt!({ text: 'go', instructions: 'be brief', skills: [], threadId: undefined })!;
    expect(JSON.parse(first.split('\n')[1]!)).toMatchObject({ type: 'prompt', message: 'be brief\n\ngo' });
  });

  it('the recipe installs the pinned CLI and the extension file; skills land in .pi/skills', () => {
    expect(adapter.install?.files).toEqual([{ path: piExtensionFile, content: piExtensionSource }]);
    expect(adapter.install?.commands?.[0]?.command).toContain('@mariozechner/pi-coding-agent@0.73.1');
    expect(adapter.skillFiles!([{ name: 'My Skill', description: 'does x', content: 'body' }], '/w/s')).toEqual([
      { path: '/w/s/.pi/skills/my-skill/SKILL.md', content: '---\nname: my-skill\ndescription: "does x"\n---\n\nbody\n' },
    ]);
  });

  it('the extension source is valid TypeScript that reads only env var NAMES for the MCP endpoint', () => {
    const out = ts.transpileModule(piExtensionSource, { reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    expect(out.diagnostics ?? []).toEqual([]);
    expect(piExtensionSource).toContain('export default async function');
    expect(piExtensionSource).not.toContain('HARNESS_BRIDGE_MCP_TOKEN');
  });
});

describe('translator snapshots', () => {
  const records = journal(turnsOf('bash-write')[0]!);
  const mid = (rerun = false) => {
    let state = adapter.translator.init({ turnId: 'turn-1', rerun });
    for (const record of records.slice(0, 20)) state = adapter.translator.step(state, record).state;
    return JSON.parse(JSON.stringify(adapter.translator.snapshot!(state))) as Record<string, any>;
  };

  it('small plain JSON tagged cli pi v2; a rerun turn keeps its rerun flag (restore gets no turn)', () => {
    const snapshot = mid();
    expect(Object.keys(snapshot)).toEqual(['cli', 'v', 'state']);
    expect(snapshot).toMatchObject({ cli: 'pi', v: 2, state: { rerun: false, ran: true } });
    expect(JSON.stringify(snapshot).length).toBeLessThan(1024);
    expect(piAdapter().translator.restore!(mid(true)).rerun).toBe(true);
  });

  it('a rerun turn resumes at every cut point too (its stream-start sits on the turn-start record)', () => {
    expectEveryCutResumes(() => piAdapter(), records, 'bash-write rerun', true);
  });

  it('restore refuses foreign and corrupt snapshots with a clear error; the kit then replays the turn', () => {
    const restore = adapter.translator.restore!;
    const good = mid();
    expect(() => restore('{"cli":"pi"}')).toThrow('pi: not a pi translator snapshot v2 (found cli none, v none)');
    const codex = codexAdapter().translator;
    expect(() => restore(codex.snapshot!(codex.init({ turnId: 't', rerun: false }))), 'codex\'s').toThrow('pi: not a pi translator snapshot v2 (found cli "codex", v 2)');
    expect(() => restore({ ...good, v: 1 }), 'an older version').toThrow(/found cli "pi", v 1/);
    expect(() => restore({ ...good, state: { ...good.state, stop: 1 } })).toThrow(/pi: corrupt translator snapshot:[\s\S]*stop/);
    expect(() => restore({ ...good, state: { ...good.state, stream: { ...good.state.stream, calls: { c1: { toolName: 'bash', extra: 1 } } } } })).toThrow(/pi: corrupt translator snapshot/);
    expect(() => restore({ ...good, state: { ...good.state, lines: { stdout: { text: 'x' }, stderr: null } } })).toThrow(/pi: corrupt translator snapshot:[\s\S]*lines/);
    const corrupt = { seq: 20, adapter: { ...good, state: { ...good.state, total: { input: 5 } } }, toolCalls: [], approvals: [], unansweredParts: [], openBlocks: [] };
    expect(TurnTranslation.restore(adapter, { turnId: 'turn-1', rerun: false }, corrupt, new Set()), 'no restore: the session replays').toBeNull();
    expect(TurnTranslation.restore(adapter, { turnId: 'turn-1', rerun: false }, { ...corrupt, adapter: good }, new Set())).not.toBeNull();
  });

  it('an approval asked before the cut is delivered once more by the restored slice when it was not answered, with the call it names', () => {
    const approve = journal(turnsOf('approve')[0]!);
    const at = approve.findIndex((r) => r.kind === 'stdout' && r.data.text.startsWith('{"type":"extension_ui_request"'));
    const live = new TurnTranslation(adapter, { turnId: 'turn-1', rerun: false }, 0, new Set());
    const delivered = approve.slice(0, at + 1).flatMap((r) => live.push(r));
    const [request] = ofType(delivered, 'tool-approval-request');
    const [call] = ofType(delivered, 'tool-call').filter((part) => part.toolCallId === request!.toolCallId);
    const [input] = ofType(delivered, 'tool-input-start').filter((part) => part.id === request!.toolCallId);
    expect(live.unanswered()).toEqual([request!.approvalId]);
    const snapshot = JSON.parse(JSON.stringify(live.snapshot(approve[at]!.seq)));
    const next = TurnTranslation.restore(piAdapter(), { turnId: 'turn-1', rerun: false }, snapshot, new Set([request!.approvalId]))!;
    // The agent takes an approval request only for a call of the same stream: the call comes first, its input
    // block announced before it (the UI part keeps its type, tool-bash).
    expect(next.takeOwed()).toEqual([input, { type: 'tool-input-end', id: input!.id }, call, request]);
    const rest = approve.slice(at + 1).flatMap((r) => next.push(r));
    expect(ofType(rest, 'tool-approval-request'), 'not twice').toEqual([]);
    expect(ofType(rest, 'tool-call'), 'not twice').toEqual([]);
    expect(ofType(rest, 'tool-result')[0]).toMatchObject({ isError: false, result: 'hi\n' });
  });
});
