// The Claude Code adapter driven by the real captured stream-json fixtures
// (test/fixtures/claude-code): each fixture's stdout lines become the stdout
// records a bridge would journal, one turn per user message, and go through the
// translator — alone and through the kit's TurnTranslation (continue slices).
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completeLine, createLineBuffers, parseJsonObject, readJsonLine } from '../../../host/adapter-kit/json-lines.ts';
import { claudeCodeAdapter, hostMcpArgs, type ClaudeCodeState } from '../../../host/adapters/claude-code/claude-code.ts';
import { claudeCodeBuiltinTools, claudeToolName } from '../../../host/adapters/claude-code/tools.ts';
import { codexAdapter } from '../../../host/adapters/codex/codex.ts';
import { piAdapter } from '../../../host/adapters/pi/pi.ts';
import { TurnTranslation } from '../../../host/adapter-kit/turn-translation.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { compileInputAck } from '../../../bridge/supervisor/input-ack.ts';
import { launchSpecSchema } from '../../../protocol/v1/launch-spec.ts';
import { MCP_ENV_V1 } from '../../../protocol/v1/mcp-env.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import type { LaunchContext } from '../../../host/adapter-kit/adapter.ts';
import { HOST_SESSION_LIMITS } from '../../../host/limits.ts';
import { checkEveryCutFolds } from '../ui-replay.ts';
import { expectEveryCutResumes, expectSliceResumes, expectWellFormed, kitBySeq, normalizeIds, ofType, textOf } from './translator-checks.ts';

const fixtureDir = fileURLToPath(new URL('../../fixtures/claude-code/', import.meta.url));
const fixtures = readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.jsonl'))
  .map((f) => f.slice(0, -'.jsonl'.length))
  .sort();
const adapter = claudeCodeAdapter();

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

/**
 * The turns the bridge cuts a long-lived process's output into: a `type == "result"` line ends a turn, unless
 * the launch's inputAck holds it — a user message Claude announced (command_lifecycle `queued`, printed as it
 * reads the line) is not `started` yet. Lines after the last turn that only carry command_lifecycle
 * bookkeeping fall between turns. Fixtures captured without uuids: one turn per result.
 */
function turnsOf(name: string): string[][] {
  const turns: string[][] = [[]];
  const pending = new Set<string>();
  for (const line of lines(name)) {
    turns[turns.length - 1]!.push(line);
    const json = parseJsonObject(line) as { type?: string; state?: string; command_uuid?: string } | undefined;
    if (json?.type === 'command_lifecycle' && json.command_uuid) {
      if (json.state === 'queued') pending.add(json.command_uuid);
      else pending.delete(json.command_uuid);
    }
    if (json?.type === 'result' && pending.size === 0) turns.push([]);
  }
  return turns.filter((t) => t.some((l) => !l.startsWith('{"type":"command_lifecycle"')));
}

/** The records a bridge would journal for one turn; `piece` splits every line into `cont` pieces of that many chars. */
function journal(turnLines: string[], opts: { firstSeq?: number; end?: TurnEnd; piece?: number; stderr?: string[] } = {}): JournalRecord[] {
  let seq = opts.firstSeq ?? 1;
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

function translate(records: JournalRecord[], rerun = false): { parts: Part[]; bySeq: Map<number, Part[]>; state: ClaudeCodeState } {
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

const turnParts = (name: string, index = 0) => translate(journal(turnsOf(name)[index]!));
const text = textOf;

/** The UI-level every-cut check (test/host/ui-replay.ts): every cut folds to the uninterrupted message, approvals answered as an application answers them (docs/guarantees.md#ui). */
const ui = { cuts: 0, differing: 0, turns: [] as string[] };
afterAll(() => console.log(`[figures] ui-every-cut claude-code: cuts=${ui.cuts} fold-errors=0 message-differs=${ui.differing} in ${ui.turns.join(', ') || 'none'}`));

describe('every fixture, every turn', () => {
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
        const { checked, differing } = await checkEveryCutFolds(() => claudeCodeAdapter(), records, where);
        ui.cuts += checked;
        ui.differing += differing.length;
        if (differing.length > 0) ui.turns.push(`${where} (${differing.length})`);
      }, 120_000);

      it(`${where}: lines split into cont pieces translate the same (ids aside)`, () => {
        const whole = normalizeIds(translate(records).parts);
        expect(normalizeIds(translate(journal(turn, { piece: 97 })).parts), where).toEqual(whole);
      });

      it(`${where}: every cut point k — snapshot, restore in a fresh translator, the rest: exactly the uninterrupted parts`, () => {
        expectEveryCutResumes(() => claudeCodeAdapter(), records, where);
      });

      it(`${where}: every cut point k inside split lines (cont pieces) — the snapshot carries the partial line`, () => {
        expectEveryCutResumes(() => claudeCodeAdapter(), journal(turn, { piece: 97 }), `${where} (pieces)`);
      });
    });
  }

  it('the list covers every capture, the mid-turn ones included', () => {
    expect(fixtures).toEqual(expect.arrayContaining(['mid-turn-injected', 'mid-turn-queued', 'compact', 'interrupt', 'permission-allow', 'error']));
    expect(fixtures.length).toBe(readdirSync(fixtureDir).filter((f) => f.endsWith('.meta.json')).length);
  });
});

describe('fixture by fixture', () => {
  it('text: stream-start with the model, one text block, finish-step and finish with usage', () => {
    const { parts } = turnParts('text');
    expect(parts.map((p) => p.type)).toEqual(['stream-start', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(parts[0]).toEqual({ type: 'stream-start', modelId: 'claude-opus-5-5' });
    expect(text(parts)).toBe('Scripted reply 1 (text): you said "say hi".');
    const [stepPart] = ofType(parts, 'finish-step');
    expect(stepPart!.finishReason, 'a non-streamed step takes the result stop_reason').toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(stepPart!.usage.inputTokens.total).toBe(10);
    const [finish] = ofType(parts, 'finish');
    expect(finish!.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(finish!.totalUsage.inputTokens).toEqual({ total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 });
    expect(finish!.totalUsage.outputTokens.total).toBe(5);
    expect(finish!.harnessMetadata?.['claude-code']).toMatchObject({ numTurns: 1 });
  });

  it('text-partial: real deltas from stream_events, the repeated assistant line adds nothing, step usage from message_delta', () => {
    const { parts } = turnParts('text-partial');
    expect(ofType(parts, 'text-start'), 'one text block, not two').toHaveLength(1);
    expect(ofType(parts, 'text-delta').length, 'several deltas').toBe(5);
    expect(text(parts)).toBe('Scripted reply 1 (text): you said "say hi with deltas".');
    const [stepPart] = ofType(parts, 'finish-step');
    expect(stepPart!.usage.outputTokens.total, 'message_delta output_tokens, not the message_start snapshot').toBe(5);
    expect(stepPart!.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(ofType(parts, 'raw').map((p) => p.rawValue), 'system/status is raw').toEqual([expect.objectContaining({ subtype: 'status' })]);
  });

  it('thinking: reasoning block, then text, in one step (one message id)', () => {
    const { parts } = turnParts('thinking');
    const types = parts.map((p) => p.type).filter((t) => t !== 'raw');
    expect(types).toEqual(['stream-start', 'reasoning-start', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(ofType(parts, 'reasoning-delta')[0]!.delta).toBe('Thinking about request 1: the user wants a scripted answer.');
  });

  it('bash-write: builtin calls with providerExecuted and common names, their results, a file change, two steps', () => {
    const { parts } = turnParts('bash-write');
    const calls = ofType(parts, 'tool-call');
    expect(calls.map((c) => [c.toolName, c.nativeName, c.providerExecuted])).toEqual([
      ['bash', 'Bash', true],
      ['write', 'Write', true],
    ]);
    expect(JSON.parse(calls[0]!.input)).toEqual({ command: 'echo hi > f.txt && cat f.txt', description: 'scripted shell step' });
    const results = ofType(parts, 'tool-result');
    expect(results.map((r) => [r.toolCallId, r.toolName, r.isError])).toEqual([
      [calls[0]!.toolCallId, 'bash', false],
      [calls[1]!.toolCallId, 'write', false],
    ]);
    expect(results[0]!.result).toBe('hi');
    expect(results[0]!.providerMetadata?.['claude-code']?.toolUseResult).toMatchObject({ stdout: 'hi' });
    expect(ofType(parts, 'file-change')).toEqual([{ type: 'file-change', event: 'create', path: '/tmp/hb-claude-fixtures/bash-write/proj/written.txt' }]);
    expect(ofType(parts, 'finish-step').map((p) => p.finishReason.unified)).toEqual(['tool-calls', 'stop']);
    const order = parts.map((p) => p.type);
    expect(order.indexOf('finish-step'), 'the first step closes after its tool results').toBeGreaterThan(order.lastIndexOf('tool-result'));
  });

  it('mid-turn-injected: streamed tool input becomes tool-input-start/delta/end under the call id; the deltas join to the call input', () => {
    const parts = turnsOf('mid-turn-injected').flatMap((turn) => translate(journal(turn)).parts);
    const calls = ofType(parts, 'tool-call');
    const streamed = calls.filter((call) => parts.some((p) => p.type === 'tool-input-start' && p.id === call.toolCallId));
    expect(streamed.map((call) => call.toolName)).toEqual(['bash', 'write', 'edit']);
    for (const call of streamed) {
      const input = parts.filter((p) => (p.type === 'tool-input-start' || p.type === 'tool-input-delta' || p.type === 'tool-input-end') && p.id === call.toolCallId);
      expect(input[0]).toMatchObject({ type: 'tool-input-start', toolName: call.toolName, providerExecuted: true });
      expect(input.at(-1)?.type).toBe('tool-input-end');
      expect(parts.indexOf(input.at(-1)!), 'the input ends before the call').toBeLessThan(parts.indexOf(call));
      // Claude completes the input it received (Edit's replace_all: false): the streamed JSON is the call's input, or within it.
      expect(JSON.parse(call.input)).toMatchObject(JSON.parse(ofType(input, 'tool-input-delta').map((p) => p.delta).join('')));
    }
  });

  it('edit: edit call and a modify file change', () => {
    const { parts } = turnParts('edit');
    expect(ofType(parts, 'tool-call').map((c) => c.toolName)).toEqual(['edit']);
    expect(ofType(parts, 'file-change')).toEqual([{ type: 'file-change', event: 'modify', path: '/tmp/hb-claude-fixtures/edit/proj/edit-me.txt' }]);
  });

  it('mcp: a host (mcp__host__*) tool produces neither a tool-call nor a tool-result part (the kit emits the call from the bridge)', () => {
    const { parts } = turnParts('mcp');
    expect(ofType(parts, 'tool-call')).toEqual([]);
    expect(ofType(parts, 'tool-result')).toEqual([]);
    expect(text(parts)).toBe('Done (1 tool result). Last tool result was: ECHO_UPPER: HELLO MCP');
    expect(ofType(parts, 'finish-step').map((p) => p.finishReason.unified)).toEqual(['tool-calls', 'stop']);
  });

  it('mcp-toolsearch: ToolSearch is a builtin call with its result; the host tool still is not', () => {
    const { parts } = turnParts('mcp-toolsearch');
    expect(ofType(parts, 'tool-call').map((c) => c.toolName)).toEqual(['ToolSearch']);
    expect(ofType(parts, 'tool-result')[0]!.result).toEqual([{ type: 'tool_reference', tool_name: 'mcp__host__echo_upper' }]);
  });

  for (const [name, approved] of [['permission-allow', true], ['permission-deny', false]] as const) {
    it(`${name}: can_use_tool → tool-approval-request after its call; encodeApproval writes the captured answer`, () => {
      const { parts, state } = turnParts(name);
      const [call] = ofType(parts, 'tool-call');
      const [request] = ofType(parts, 'tool-approval-request');
      expect(request, 'one approval request').toBeDefined();
      expect(request!.toolCallId).toBe(call!.toolCallId);
      expect(parts.indexOf(request!)).toBeGreaterThan(parts.indexOf(call!));
      const captured = stdinOf(name)[1];
      const line = adapter.encodeApproval!({ approvalId: request!.approvalId, approved, ...(approved ? {} : { reason: 'host said no' }) }, state);
      expect(line.endsWith('\n')).toBe(true);
      expect(JSON.parse(line)).toEqual(captured);
      const [result] = ofType(parts, 'tool-result');
      expect(result!.isError).toBe(!approved);
      expect(result!.result).toBe(approved ? 'hi' : 'host said no');
    });
  }

  it('encodeApproval refuses to allow a request the turn never saw (no input to echo)', () => {
    const { state } = turnParts('text');
    expect(() => adapter.encodeApproval!({ approvalId: 'nope', approved: true }, state)).toThrow(/no permission request/);
    expect(JSON.parse(adapter.encodeApproval!({ approvalId: 'nope', approved: false }, state)).response.response.behavior).toBe('deny');
  });

  it('error: success subtype with is_error → error part and finish error; the synthetic assistant line is not model text', () => {
    const [failed, next] = [turnParts('error', 0).parts, turnParts('error', 1).parts];
    expect(ofType(failed, 'text-delta'), 'no text part for the synthetic API-error message').toEqual([]);
    expect(ofType(failed, 'error')).toEqual([
      { type: 'error', error: { message: 'API Error: 400 scripted failure', subtype: 'success', terminalReason: 'api_error' } },
    ]);
    expect(ofType(failed, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'api_error' });
    expect(ofType(failed, 'finish-step'), 'no model step happened').toEqual([]);
    expect(ofType(next, 'finish')[0]!.finishReason.unified, 'the next prompt works').toBe('stop');
    expect(text(next)).toBe('Scripted reply 2 (text): you said "after the error".');
  });

  it('interrupt: streamed text once (the aborted assistant line is not repeated), finish interrupted, no error part', () => {
    const { parts } = turnParts('interrupt', 0);
    expect(text(parts)).toBe('slow 1 ');
    expect(ofType(parts, 'text-start')).toHaveLength(1);
    expect(ofType(parts, 'error')).toEqual([]);
    expect(ofType(parts, 'finish-step')[0]!.finishReason).toEqual({ unified: 'other', raw: 'aborted' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'other', raw: 'aborted_streaming' });
    const raws = ofType(parts, 'raw').map((p) => JSON.stringify(p.rawValue));
    expect(raws.some((r) => r.includes('[Request interrupted by user]')), 'the interruption notice is raw').toBe(true);
    expect(raws.some((r) => r.includes('"control_response"')), 'the interrupt ack is raw').toBe(true);
    const after = turnParts('interrupt', 1).parts;
    expect(text(after)).toBe('Scripted reply 2 (text): you said "after the interrupt".');
  });

  it('compact: the /compact turn yields one compaction part with the summary and token counts', () => {
    const turns = turnsOf('compact');
    expect(turns).toHaveLength(3);
    const { parts } = translate(journal(turns[1]!));
    const compactions = ofType(parts, 'compaction');
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({ trigger: 'manual', tokensBefore: 15, tokensAfter: 2462 });
    expect(compactions[0]!.summary).toMatch(/^This session is being continued from a previous conversation/);
    expect(ofType(parts, 'finish')[0]!.finishReason.unified).toBe('stop');
    expect(ofType(parts, 'text-delta')).toEqual([]);
  });

  it('mid-turn-queued: a message queued behind a text-only turn is answered inside the turn (the inputAck holds the first result)', () => {
    const turns = turnsOf('mid-turn-queued');
    expect(turns, 'one turn: the first result is held until the queued message started').toHaveLength(1);
    expect(turns[0]!.filter((l) => l.includes('"type":"result"') && !l.startsWith('{"type":"stream_event"'))).toHaveLength(2);
    const { parts, bySeq } = translate(journal(turns[0]!));
    expectWellFormed(parts, 'mid-turn-queued');
    expect(text(parts)).toBe('slow 1 slow 2 slow 3 slow 4 slow 5 slow 6 Scripted reply 2 (text): you said "MIDTURN-MARKER answer this too".');
    expect(ofType(parts, 'stream-start'), 'one stream for both runs').toHaveLength(1);
    expect(ofType(parts, 'finish-step').map((p) => p.finishReason.unified)).toEqual(['stop', 'stop']);
    expect(ofType(parts, 'raw').map((p) => (p.rawValue as { type: string; subtype?: string }).subtype), 'command_lifecycle lines add nothing').toEqual(['status', 'status']);
    const [finish] = ofType(parts, 'finish');
    expect(parts.at(-1)).toBe(finish);
    expect([...bySeq].find(([, p]) => p.includes(finish!))![0], 'the finish comes with the turn-end record').toBe(turns[0]!.length + 2);
    expect(finish!.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(finish!.totalUsage.inputTokens.total, 'usage summed over both results').toBe(20);
    expect(finish!.totalUsage.outputTokens.total).toBe(10);
    expect(finish!.harnessMetadata?.['claude-code']).toMatchObject({ numTurns: 2 });
  });

  it('mid-turn-queued, cut at the first result as the bridge did without the gate: the answer is in no turn', () => {
    const all = lines('mid-turn-queued');
    const firstResult = all.findIndex((l) => l.includes('"type":"result"') && !l.startsWith('{"type":"stream_event"'));
    const { parts } = translate(journal(all.slice(0, firstResult + 1)));
    expectWellFormed(parts, 'cut');
    expect(text(parts)).not.toContain('MIDTURN-MARKER');
  });

  it('mid-turn-injected: a message sent during a tool-using turn is started within the run; one result ends the turn', () => {
    const turns = turnsOf('mid-turn-injected');
    expect(turns).toHaveLength(1);
    const { parts } = translate(journal(turns[0]!));
    expectWellFormed(parts, 'mid-turn-injected');
    expect(ofType(parts, 'tool-call').map((c) => c.toolName)).toEqual(['bash', 'write', 'edit']);
    expect(ofType(parts, 'finish')[0]!.harnessMetadata?.['claude-code']).toMatchObject({ numTurns: 4 });
    expect(ofType(parts, 'finish')[0]!.totalUsage.inputTokens.total).toBe(40);
  });

  it('a result then an abort before the turn ended: the result finishes it; an abort with no result after a new run: interrupted', () => {
    const [turn] = turnsOf('mid-turn-queued');
    const firstResult = turn!.findIndex((l) => l.includes('"type":"result"') && !l.startsWith('{"type":"stream_event"'));
    const afterResult = translate(journal(turn!.slice(0, firstResult + 1), { end: { reason: 'aborted' } })).parts;
    expect(ofType(afterResult, 'finish')[0]!.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    // The queued message's run began (a second init) and was cut off: that run has no result, so the turn was interrupted.
    const midSecondRun = translate(journal(turn!.slice(0, firstResult + 8), { end: { reason: 'aborted' } })).parts;
    expectWellFormed(midSecondRun, 'aborted in the second run');
    expect(ofType(midSecondRun, 'finish')[0]!.finishReason).toEqual({ unified: 'other', raw: 'aborted' });
    const died = translate(journal(turn!.slice(0, firstResult + 1), { end: { reason: 'interrupted' } })).parts;
    expect(ofType(died, 'finish'), 'the bridge died: no finish, the kit reruns the turn').toEqual([]);
  });

  it('initialize: the control_response before init is raw and comes after stream-start, which still names the model', () => {
    const { parts } = turnParts('initialize');
    expect(parts[0]).toEqual({ type: 'stream-start', modelId: 'claude-opus-5-5' });
    expect(parts[1]).toMatchObject({ type: 'raw', rawValue: { type: 'control_response' } });
  });

  it('threadId: read from init and result lines; stable across prompts and across --resume', () => {
    const ids = (name: string) => journal(lines(name)).map((r) => adapter.threadId(r)).filter((t): t is string => t !== undefined);
    for (const name of ['text', 'two-prompts', 'compact']) {
      const found = new Set(ids(name));
      expect(found.size, `${name}: one thread id`).toBe(1);
    }
    expect(ids('resume')[0], '--resume keeps the id').toBe(ids('resume-first')[0]);
    expect(ids('two-prompts').length, 'two init + two result lines').toBe(4);
  });
});

describe('turns that end without a result line', () => {
  const partial = turnsOf('text-partial')[0]!.slice(0, 6); // init, status, message_start, block start, two deltas
  const endWith = (end: TurnEnd) => translate(journal(partial, { end })).parts;

  it('aborted or stopped → blocks closed, finish interrupted', () => {
    for (const reason of ['aborted', 'stopped'] as const) {
      const parts = endWith({ reason });
      expectWellFormed(parts, reason);
      expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'other', raw: reason });
      expect(ofType(parts, 'error')).toEqual([]);
    }
  });

  it('exit (the CLI died) → error part naming the code, finish error', () => {
    const parts = endWith({ reason: 'exit', code: 1 });
    expectWellFormed(parts, 'exit');
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: 'claude ended the turn without a result (exit, code 1)' });
    expect(ofType(parts, 'finish')[0]!.finishReason).toEqual({ unified: 'error', raw: 'exit' });
  });

  it('spawn-failed → error with the bridge message', () => {
    const parts = translate(journal([], { end: { reason: 'spawn-failed', message: 'ENOENT claude' } })).parts;
    expect(parts.map((p) => p.type)).toEqual(['stream-start', 'error', 'finish']);
    expect(ofType(parts, 'error')[0]!.error).toEqual({ message: 'ENOENT claude' });
  });

  it('interrupted (the bridge died) → blocks and step closed but no finish: the kit reruns and that turn finishes', () => {
    const parts = endWith({ reason: 'interrupted' });
    expect(parts.slice(-2).map((p) => p.type)).toEqual(['text-end', 'finish-step']);
    expect(ofType(parts, 'finish')).toEqual([]);
  });

  it('a rerun turn opens with stream-start on its turn-start record (where the kit marks it recomputed)', () => {
    const { bySeq, parts } = translate(journal(turnsOf('text')[0]!), true);
    expect(bySeq.get(1)).toEqual([{ type: 'stream-start' }]);
    expectWellFormed(parts, 'rerun');
  });
});

describe('odd input never crashes the translator', () => {
  it('non-JSON stdout, unknown line types, bad shapes and stderr become raw parts', () => {
    const turn = turnsOf('text')[0]!;
    const odd = ['not json at all', '{"type":"rate_limit_event","x":1}', '{"type":"assistant","message":"oops"}', '{broken'];
    const { parts } = translate(journal([turn[0]!, ...odd, ...turn.slice(1)], { stderr: ['[claude-code:unrecognized_model] m'] }));
    expect(ofType(parts, 'raw').map((p) => p.rawValue)).toEqual([
      'not json at all',
      { type: 'rate_limit_event', x: 1 },
      { type: 'assistant', message: 'oops' },
      '{broken',
      { stderr: '[claude-code:unrecognized_model] m' }, // after the result, before turn-end: the turn still runs (finish comes at turn-end)
    ]);
    expect(text(parts)).toBe('Scripted reply 1 (text): you said "say hi".');
    expect(ofType(parts, 'finish')).toHaveLength(1);
  });

  it('stderr lines are raw { stderr } when the turn is still running', () => {
    const turn = turnsOf('text')[0]!;
    const { parts } = translate(journal(turn.slice(0, 2), { stderr: ['warning: x'], end: { reason: 'aborted' } }));
    expect(ofType(parts, 'raw').map((p) => p.rawValue)).toEqual([{ stderr: 'warning: x' }]);
  });

  it('subagent lines (parent_tool_use_id set) are raw, not top-level text', () => {
    const turn = turnsOf('text')[0]!;
    const sub = turn[1]!.replace('"parent_tool_use_id":null', '"parent_tool_use_id":"toolu_parent"');
    const { parts } = translate(journal([turn[0]!, sub, turn[2]!]));
    expect(ofType(parts, 'text-delta')).toEqual([]);
    expect(ofType(parts, 'raw')).toHaveLength(1);
  });
});

describe('launch and encoders', () => {
  const ctx = (over: Partial<LaunchContext> = {}): LaunchContext => ({
    mode: 'fresh',
    threadId: undefined,
    prompt: 'hi',
    sessionWorkDir: '/w/session',
    bootstrapDir: '/w/.harness-bridge/claude-code',
    stateDir: '/w/.harness-bridge/sessions/s1',
    permissionMode: 'allow-reads',
    tools: [],
    mcp: undefined,
    modelId: undefined,
    ...over,
  });

  it('one long-lived stream-json process per session with a result turnEnd and the interrupt control request', () => {
    const spec = launchSpecSchema.parse(adapter.launch(ctx()));
    expect(spec.argv[0]).toBe('/w/.harness-bridge/claude-code/cli/node_modules/.bin/claude');
    expect(spec.argv).toEqual(expect.arrayContaining(['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages']));
    expect(spec).toMatchObject({ lifetime: 'session', stdin: 'pipe', cwd: '/w/session', turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }] });
    expect(JSON.parse((spec.interrupt as { input: string }).input)).toMatchObject({ type: 'control_request', request: { subtype: 'interrupt' } });
    expect(spec.env).toMatchObject({ HOME: '/w/.harness-bridge/sessions/s1/claude-home', CLAUDE_CONFIG_DIR: '/w/.harness-bridge/sessions/s1/claude-home/.claude', ENABLE_TOOL_SEARCH: 'false', DISABLE_TELEMETRY: '1' });
  });

  it('launch survive is on by default (options.survive): valid (pipes), the same as asked for; false drops it and nothing else', () => {
    const byDefault = launchSpecSchema.parse(adapter.launch(ctx()));
    expect(byDefault.survive).toBe(true);
    expect(launchSpecSchema.parse(claudeCodeAdapter({ survive: true }).launch(ctx()))).toEqual(byDefault);
    const off = launchSpecSchema.parse(claudeCodeAdapter({ survive: false }).launch(ctx()));
    expect(off.survive).toBeUndefined();
    expect({ ...off, survive: undefined }).toEqual({ ...byDefault, survive: undefined });
  });

  it('argv and env do not change between fresh, resume and rerun (the bridge reuses the live process only then)', () => {
    const fresh = adapter.launch(ctx());
    for (const mode of ['resume', 'rerun'] as const) expect(adapter.launch(ctx({ mode, threadId: 'abc' })), mode).toEqual(fresh);
    expect(fresh.argv).toContain('--continue');
  });

  it('permission modes', () => {
    const argv = (permissionMode: LaunchContext['permissionMode']) => adapter.launch(ctx({ permissionMode })).argv.join(' ');
    expect(argv('allow-all')).toContain('--permission-mode bypassPermissions');
    expect(argv('allow-all')).not.toContain('--permission-prompt-tool');
    expect(adapter.launch(ctx({ permissionMode: 'allow-all' })).env).toMatchObject({ IS_SANDBOX: '1' });
    expect(argv('allow-edits')).toContain('--permission-mode acceptEdits --permission-prompt-tool stdio');
    expect(argv('allow-reads')).toContain('--permission-mode default --permission-prompt-tool stdio');
    expect(adapter.launch(ctx()).env).not.toHaveProperty('IS_SANDBOX');
  });

  it('options: binPath, model, extraEnv win', () => {
    const custom = claudeCodeAdapter({ binPath: '/opt/claude', modelId: 'm-1', extraEnv: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', HOME: '/h' } });
    const spec = custom.launch(ctx());
    expect(spec.argv[0]).toBe('/opt/claude');
    expect(spec.argv.join(' ')).toContain('--model m-1');
    expect(spec.env).toMatchObject({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', HOME: '/h' });
    expect(custom.modelId).toBe('m-1');
  });

  it('host MCP: the config names the env vars the bridge sets; no URL or token ever enters argv or env', () => {
    const spec = adapter.launch(ctx({ mcp: MCP_ENV_V1 }));
    const config = JSON.parse(spec.argv[spec.argv.indexOf('--mcp-config') + 1]!);
    expect(config).toEqual({ mcpServers: { host: { type: 'http', url: '${HARNESS_BRIDGE_MCP_URL}', headers: { Authorization: 'Bearer ${HARNESS_BRIDGE_MCP_TOKEN}' } } } });
    expect(spec.argv).toEqual(expect.arrayContaining(['--strict-mcp-config', '--allowedTools', 'mcp__host']));
    expect(Object.keys(spec.env ?? {}).filter((k) => k.startsWith('HARNESS_BRIDGE_MCP'))).toEqual([]);
    expect(hostMcpArgs(undefined)).toEqual([]);
  });

  it('stdin encoders match the captured stdin shapes, plus a fresh uuid per user line (what the inputAck waits for)', () => {
    const uuids: string[] = [];
    /** The line's uuid (checked and collected), and the line without it. */
    const parsed = (line: string | undefined) => {
      expect(line?.endsWith('\n')).toBe(true);
      const { uuid, ...rest } = JSON.parse(line!) as { uuid: string };
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      uuids.push(uuid);
      return rest;
    };
    expect(parsed(adapter.encodePrompt!({ text: 'SCENARIO:text say hi', instructions: undefined, skills: [], threadId: undefined }))).toEqual(stdinOf('text')[0]);
    const withInstructions = parsed(adapter.encodePrompt!({ text: 'do it', instructions: 'Be brief.', skills: [], threadId: undefined })) as { message: { content: string } };
    expect(withInstructions.message.content).toBe('Be brief.\n\ndo it');
    const state = adapter.translator.init({ turnId: 't', rerun: false });
    expect(parsed(adapter.encodeUserMessage!('SCENARIO:text second prompt', state))).toEqual(stdinOf('two-prompts')[1]);
    expect(parsed(adapter.encodeCompact!(undefined))).toEqual(stdinOf('compact')[1]);
    expect((parsed(adapter.encodeCompact!('keep the plan')) as { message: { content: string } }).message.content).toBe('/compact keep the plan');
    expect(new Set(uuids).size, 'never the same uuid twice').toBe(uuids.length);
  });

  it('inputAck: a user line is pending under its uuid until command_lifecycle "started" names it; other lines name nothing', () => {
    const spec = launchSpecSchema.parse(adapter.launch(ctx()));
    expect(spec.inputAck).toBeDefined();
    const ack = compileInputAck(spec.inputAck!);
    const state = adapter.translator.init({ turnId: 't', rerun: false });
    const line = adapter.encodeUserMessage!('hello', state);
    const [id] = ack.inputIds(line);
    expect(id).toBe((JSON.parse(line) as { uuid: string }).uuid);
    expect(ack.inputIds(adapter.encodeApproval!({ approvalId: 'a', approved: false }, state)), 'an approval answer is not waited for').toEqual([]);
    expect(ack.inputIds((spec.interrupt as { input: string }).input), 'nor the interrupt').toEqual([]);
    // Real lines (mid-turn-queued capture): queued and completed do not acknowledge, started does.
    const lifecycle = lines('mid-turn-queued').filter((l) => l.startsWith('{"type":"command_lifecycle"'));
    const acked = lifecycle.map((l) => [JSON.parse(l).state, ack.ackedId('stdout', l)]);
    expect(acked.filter(([, got]) => got !== undefined).map(([state]) => state)).toEqual(['started', 'started']);
    expect(acked.every(([state, got]) => (state === 'started') === (got !== undefined))).toBe(true);
    expect(ack.ackedId('stderr', lifecycle.find((l) => l.includes('"started"'))!), 'stdout only').toBeUndefined();
  });

  it('skills land in .claude/skills/<name>/SKILL.md with front matter', () => {
    const files = adapter.skillFiles!([{ name: 'Deploy Helper', description: 'Deploys: "prod"', content: '# Steps' }], '/w/session');
    expect(files).toEqual([
      { path: '/w/session/.claude/skills/deploy-helper/SKILL.md', content: '---\nname: deploy-helper\ndescription: "Deploys: \\"prod\\""\n---\n\n# Steps\n' },
    ]);
  });

  it('install and builtin tools', () => {
    expect(adapter.install?.commands).toHaveLength(1);
    expect(adapter.install?.commands?.[0]?.command).toMatch(/ \|\| npm install --prefix cli --no-audit --no-fund --prefer-offline @anthropic-ai\/claude-code@2\.1\.328$/);
    // A binPath means the CLI is there: no install command (offline it would wait on the network).
    expect(claudeCodeAdapter({ binPath: '/opt/claude' }).install).toBeUndefined();
    expect(adapter.supportsBuiltinToolApprovals).toBe(true);
    expect(claudeCodeBuiltinTools.bash).toMatchObject({ nativeName: 'Bash', commonName: 'bash', toolUseKind: 'bash' });
    expect(['Bash', 'Write', 'Edit', 'Read', 'Glob', 'Grep', 'WebSearch', 'WebFetch', 'Monitor'].map(claudeToolName)).toEqual([
      'bash', 'write', 'edit', 'read', 'glob', 'grep', 'webSearch', 'WebFetch', 'Monitor',
    ]);
  });
});

describe('translator snapshots', () => {
  const queued = turnsOf('mid-turn-queued')[0]!;
  const records = journal(queued);
  const isResult = (r: JournalRecord) => r.kind === 'stdout' && /^\{"duration_api_ms"|"type":"result"/.test(r.data.text) && !r.data.text.startsWith('{"type":"stream_event"');
  const firstResult = records.findIndex(isResult);
  const stateAfter = (recs: JournalRecord[], k: number, rerun = false) => {
    let state = adapter.translator.init({ turnId: 'turn-1', rerun });
    for (const record of recs.slice(0, k)) state = adapter.translator.step(state, record).state;
    return state;
  };
  const snapshotAfter = (k: number, rerun = false) => JSON.parse(JSON.stringify(adapter.translator.snapshot!(stateAfter(records, k, rerun)))) as Record<string, any>;

  it('small plain JSON tagged cli claude-code v1, carrying the results so far (summed at turn-end) between the two runs', () => {
    expect(firstResult).toBeGreaterThan(0);
    const afterFirst = snapshotAfter(firstResult + 1);
    expect(Object.keys(afterFirst)).toEqual(['cli', 'v', 'state']);
    expect(afterFirst).toMatchObject({ cli: 'claude-code', v: 1, state: { rerun: false, results: { numTurns: 1, usage: { input_tokens: 10, output_tokens: 5 }, last: { unified: 'stop', raw: 'end_turn' } } } });
    expect(JSON.stringify(afterFirst).length).toBeLessThan(2048);
    // The queued message's run has begun (its init): the first result no longer finishes the turn, but its counts stay.
    const secondInit = records.findIndex((r, i) => i > firstResult && r.kind === 'stdout' && r.data.text.includes('"subtype":"init"'));
    expect(snapshotAfter(secondInit + 1).state.results).toMatchObject({ numTurns: 1, last: null });
    const restored = claudeCodeAdapter().translator.restore!(snapshotAfter(secondInit + 1));
    let state = restored;
    const tail = records.slice(secondInit + 1).flatMap((r) => {
      const out = adapter.translator.step(state, r);
      state = out.state;
      return out.parts;
    });
    const [finish] = ofType(tail, 'finish');
    expect(finish!.totalUsage.inputTokens.total, 'usage of both results').toBe(20);
    expect(finish!.harnessMetadata?.['claude-code']).toMatchObject({ numTurns: 2 });
  });

  it('a line still being joined is carried: cut between the pieces of the first result line', () => {
    const split = journal(queued, { piece: 97 });
    const at = split.findIndex((r) => r.kind === 'stdout' && r.data.cont === true && r.data.text.startsWith('{"duration_api_ms"'));
    expect(at).toBeGreaterThan(0);
    const snapshot = JSON.parse(JSON.stringify(adapter.translator.snapshot!(stateAfter(split, at + 1))));
    expect(snapshot.state.lines.stdout.text).toMatch(/^\{"duration_api_ms"/);
  });

  it('a rerun turn keeps its rerun flag (restore gets no turn) and resumes at every cut point', () => {
    expect(claudeCodeAdapter().translator.restore!(snapshotAfter(5, true)).rerun).toBe(true);
    expectEveryCutResumes(() => claudeCodeAdapter(), journal(turnsOf('bash-write')[0]!), 'bash-write rerun', true);
  });

  it('turns the bridge ended early resume at every cut point too (aborted after a result, aborted in the next run, interrupted)', () => {
    const cut = (n: number, end: TurnEnd) => journal(queued.slice(0, n), { end });
    const resultLine = queued.findIndex((l) => l.startsWith('{"duration_api_ms"'));
    expectEveryCutResumes(() => claudeCodeAdapter(), cut(resultLine + 1, { reason: 'aborted' }), 'aborted after the result');
    expectEveryCutResumes(() => claudeCodeAdapter(), cut(resultLine + 8, { reason: 'aborted' }), 'aborted in the second run');
    expectEveryCutResumes(() => claudeCodeAdapter(), cut(resultLine + 1, { reason: 'interrupted' }), 'interrupted after the result');
    expectEveryCutResumes(() => claudeCodeAdapter(), journal(turnsOf('text-partial')[0]!.slice(0, 6), { end: { reason: 'exit', code: 1 } }), 'exit mid-stream');
  });

  it('a permission request asked before the cut: the restored state still answers it (encodeApproval needs its input)', () => {
    const approve = journal(turnsOf('permission-allow')[0]!);
    const at = approve.findIndex((r) => r.kind === 'stdout' && r.data.text.startsWith('{"type":"control_request"'));
    const snapshot = JSON.parse(JSON.stringify(adapter.translator.snapshot!(stateAfter(approve, at + 1))));
    const restored = claudeCodeAdapter().translator.restore!(snapshot);
    const [request] = ofType(translate(approve).parts, 'tool-approval-request');
    expect(JSON.parse(adapter.encodeApproval!({ approvalId: request!.approvalId, approved: true }, restored))).toEqual(stdinOf('permission-allow')[1]);
  });

  describe('a turn with many large permission requests', () => {
    // permission-allow's tool round trip repeated: each request's input is ~8 KiB, 40 of them ~320 KiB of
    // inputs, past HOST_SESSION_LIMITS.maxSnapshotChars were they all kept. The host answers each through
    // encodeApproval (its stdin record follows the request), alternating allow and deny.
    const [init, toolUse, request, toolResult, ...rest] = turnsOf('permission-allow')[0]!;
    const command = 'echo hi > f.txt && cat f.txt';
    const ids = { message: 'msg_7453ae43d2897902', tool: 'toolu_fc2226faf149113000', request: 'f7b71216-8c93-4ce0-8020-7f6c467c8338' };
    const n = 40;
    const round = (line: string, i: number) =>
      line.replaceAll(ids.message, `${ids.message}-${i}`).replaceAll(ids.tool, `${ids.tool}-${i}`).replaceAll(ids.request, `req-${i}`).replaceAll(command, `echo ${i} ${'x'.repeat(8000)}`);
    /** The turn's records; `answered(i)` false leaves request i without its stdin answer. */
    const build = (answered: (i: number) => boolean) => {
      const out: JournalRecord[] = [];
      let state = adapter.translator.init({ turnId: 'turn-1', rerun: false });
      const add = (kind: 'stdout' | 'stdin', text: string) => {
        const record = { seq: out.length + 1, turnId: 'turn-1', ts: 0, kind, data: { text } } as JournalRecord;
        out.push(record);
        state = adapter.translator.step(state, record).state;
      };
      out.push({ seq: 1, turnId: 'turn-1', ts: 0, kind: 'turn-start', data: { input: 'x' } });
      add('stdout', init!);
      for (let i = 0; i < n; i++) {
        add('stdout', round(toolUse!, i));
        add('stdout', round(request!, i));
        if (answered(i)) add('stdin', adapter.encodeApproval!({ approvalId: `req-${i}`, approved: i % 2 === 0, reason: 'no' }, state));
        add('stdout', round(toolResult!, i));
      }
      for (const line of rest) add('stdout', line);
      out.push({ seq: out.length + 1, turnId: 'turn-1', ts: 0, kind: 'turn-end', data: { reason: 'matched' } });
      return out;
    };
    const sizeAfter = (recs: JournalRecord[], k: number) => JSON.stringify(adapter.translator.snapshot!(stateAfter(recs, k))).length;

    it('an answered request leaves the snapshot: it stays small all turn (kept, the inputs would not fit)', () => {
      const all = build(() => true);
      expect(ofType(translate(all).parts, 'tool-approval-request')).toHaveLength(n);
      const sizes = all.map((_, k) => sizeAfter(all, k + 1));
      expect(Math.max(...sizes), 'at most one ~8 KiB input pending at a time').toBeLessThan(20_000);
      expect(JSON.parse(JSON.stringify(adapter.translator.snapshot!(stateAfter(all, all.length)))).state.approvals).toEqual({});
      const unanswered = build(() => false);
      expect(sizeAfter(unanswered, unanswered.length), 'the same turn with no answer journaled').toBeGreaterThan(HOST_SESSION_LIMITS.maxSnapshotChars);
    });

    it('every cut point resumes, and every snapshot is under maxSnapshotChars (expectEveryCutResumes)', () => {
      expectEveryCutResumes(() => claudeCodeAdapter(), build(() => true), 'many approvals');
    });

    it('an unanswered request keeps its input, also after a restore, while answered ones around it are gone', () => {
      const recs = build((i) => i !== 7);
      const at = recs.findIndex((r) => r.kind === 'stdout' && r.data.text.startsWith('{"type":"control_request","request_id":"req-9"'));
      const restored = claudeCodeAdapter().translator.restore!(JSON.parse(JSON.stringify(adapter.translator.snapshot!(stateAfter(recs, at + 1)))));
      expect(Object.keys(restored.approvals).sort()).toEqual(['req-7', 'req-9']);
      const allow = (approvalId: string, state: ClaudeCodeState) => JSON.parse(adapter.encodeApproval!({ approvalId, approved: true }, state));
      const input = (i: number) => (JSON.parse(round(request!, i)) as { request: { input: unknown } }).request.input;
      for (const i of [7, 9]) {
        expect(allow(`req-${i}`, restored).response, `req-${i} after a restore`).toEqual({ subtype: 'success', request_id: `req-${i}`, response: { behavior: 'allow', updatedInput: input(i) } });
        expect(allow(`req-${i}`, stateAfter(recs, at + 1)), `req-${i} live`).toEqual(allow(`req-${i}`, restored));
      }
      expect(() => adapter.encodeApproval!({ approvalId: 'req-8', approved: true }, restored), 'answered already').toThrow(/no permission request/);
      // Other stdin (a user message, an approval for a request the turn never saw) prunes nothing.
      let state = restored;
      for (const text of [adapter.encodeUserMessage!('more', state), adapter.encodeApproval!({ approvalId: 'elsewhere', approved: false }, state), 'not json\n']) {
        state = adapter.translator.step(state, { seq: 999, turnId: 'turn-1', ts: 0, kind: 'stdin', data: { text } }).state;
      }
      expect(Object.keys(state.approvals).sort()).toEqual(['req-7', 'req-9']);
    });
  });

  it('restore refuses foreign and corrupt snapshots with a clear error; the kit then replays the turn', () => {
    const restore = adapter.translator.restore!;
    const good = snapshotAfter(firstResult + 1);
    expect(() => restore(null)).toThrow('claude-code: not a claude-code translator snapshot v1 (found cli none, v none)');
    expect(() => restore({ textId: null, finished: false }), "the fixture adapter's").toThrow(/not a claude-code translator snapshot v1/);
    const pi = piAdapter().translator;
    expect(() => restore(pi.snapshot!(pi.init({ turnId: 't', rerun: false }))), "pi's").toThrow(/^claude-code: not a claude-code translator snapshot v1 \(found cli "pi", v \d+\)$/);
    const codex = codexAdapter().translator;
    expect(() => restore(codex.snapshot!(codex.init({ turnId: 't', rerun: false }))), "codex's").toThrow(/found cli "codex", v \d+/);
    expect(() => restore({ ...good, v: 2 }), 'a newer version').toThrow(/found cli "claude-code", v 2/);
    expect(() => restore({ ...good, state: { ...good.state, surprise: true } }), 'an unknown field').toThrow(/claude-code: corrupt translator snapshot:[\s\S]*surprise/);
    const { results: _results, ...missing } = good.state;
    expect(() => restore({ ...good, state: missing }), 'a missing field').toThrow(/claude-code: corrupt translator snapshot:[\s\S]*results/);
    expect(() => restore({ ...good, state: { ...good.state, results: { ...good.state.results, numTurns: '1' } } })).toThrow(/corrupt translator snapshot:[\s\S]*numTurns/);
    expect(() => restore({ ...good, state: { ...good.state, results: { ...good.state.results, usage: { input_tokens: 'ten' } } } })).toThrow(/corrupt translator snapshot:[\s\S]*usage/);
    expect(() => restore({ ...good, state: { ...good.state, results: { ...good.state.results, last: { unified: 'done' } } } })).toThrow(/corrupt translator snapshot:[\s\S]*unified/);
    expect(() => restore({ ...good, state: { ...good.state, tools: { toolu_1: 7 } } })).toThrow(/corrupt translator snapshot:[\s\S]*tools/);
    expect(() => restore({ ...good, state: { ...good.state, step: { id: 'm', stop: null, tools: false, extra: 1 } } })).toThrow(/corrupt translator snapshot:[\s\S]*step/);
    expect(() => restore({ ...good, state: { ...good.state, compaction: { trigger: 'sometimes' } } })).toThrow(/corrupt translator snapshot:[\s\S]*compaction/);
    expect(() => restore({ ...good, state: { ...good.state, lines: { stdout: { text: 'x' }, stderr: null } } })).toThrow(/corrupt translator snapshot:[\s\S]*lines/);

    // Through the kit: a refused snapshot gives no restored slice, and the session replays the turn from its first record.
    const turn = { turnId: 'turn-1', rerun: false };
    const cursor = records[firstResult]!.seq;
    const corrupt = { seq: cursor, adapter: { ...good, state: { ...good.state, streamed: 5 } }, toolCalls: [], approvals: [], unansweredParts: [], openBlocks: [] };
    expect(TurnTranslation.restore(adapter, turn, corrupt, new Set()), 'no restore: the session replays').toBeNull();
    const foreign = { ...corrupt, adapter: pi.snapshot!(pi.init(turn)) };
    expect(TurnTranslation.restore(adapter, turn, foreign, new Set())).toBeNull();
    const replay = new TurnTranslation(claudeCodeAdapter(), turn, cursor, new Set());
    const want = translate(records).bySeq;
    expect(records.flatMap((r) => replay.push(r)), 'the replay emits exactly the tail').toEqual(records.filter((r) => r.seq > cursor).flatMap((r) => want.get(r.seq)!));
    expect(TurnTranslation.restore(adapter, turn, { ...corrupt, adapter: good }, new Set())).not.toBeNull();
  });

  it('the snapshot shares nothing with the live state (the translator keeps mutating it)', () => {
    let state = stateAfter(records, firstResult + 1);
    const snapshot = adapter.translator.snapshot!(state);
    const before = JSON.stringify(snapshot);
    for (const record of records.slice(firstResult + 1)) state = adapter.translator.step(state, record).state;
    expect(JSON.stringify(snapshot)).toBe(before);
  });

  it('a restored state translates the rest to the same JSON text as the live one (usage keys keep their order)', () => {
    // The second result's usage without cache_read_input_tokens: the sum gains that key last, where a re-parse would move it.
    const lastResult = queued.map((l) => l.startsWith('{"duration_api_ms"')).lastIndexOf(true);
    const sparse = queued.map((l, i) => (i === lastResult ? l.replace('"cache_read_input_tokens":0,', '') : l));
    expect(sparse[lastResult]).not.toBe(queued[lastResult]);
    const turns: Array<[string, string[]]> = [...['mid-turn-injected', 'mid-turn-queued', 'bash-write'].map((name): [string, string[]] => [name, turnsOf(name)[0]!]), ['sparse usage', sparse]];
    for (const [name, turn] of turns) {
      const recs = journal(turn);
      const whole = JSON.stringify(translate(recs).parts);
      for (let k = 0; k <= recs.length; k++) {
        const head = translate(recs.slice(0, k));
        let state = claudeCodeAdapter().translator.restore!(JSON.parse(JSON.stringify(adapter.translator.snapshot!(head.state))));
        const tail = recs.slice(k).flatMap((r) => {
          const out = adapter.translator.step(state, r);
          state = out.state;
          return out.parts;
        });
        expect(JSON.stringify([...head.parts, ...tail]), `${name} cut after ${k}`).toBe(whole);
      }
    }
  });
});

describe('host/translate/json-lines (the reader the adapter uses)', () => {
  it('joins cont pieces per stream and caps what it reassembles', () => {
    const buffers = createLineBuffers();
    const rec = (seq: number, kind: 'stdout' | 'stderr', text: string, cont?: boolean): JournalRecord =>
      kind === 'stdout'
        ? { seq, turnId: 't', ts: 0, kind, data: cont ? { text, cont } : { text } }
        : { seq, turnId: 't', ts: 0, kind, data: cont ? { text, cont } : { text } };
    expect(completeLine(buffers, rec(1, 'stdout', 'ab', true))).toBeUndefined();
    expect(completeLine(buffers, rec(2, 'stderr', 'x'))).toEqual({ stream: 'stderr', text: 'x', truncated: false });
    expect(completeLine(buffers, rec(3, 'stdout', 'cd'))).toEqual({ stream: 'stdout', text: 'abcd', truncated: false });
    expect(completeLine(buffers, rec(4, 'stdout', 'abcdef', true), 4)).toBeUndefined();
    expect(completeLine(buffers, rec(5, 'stdout', 'gh'), 4)).toEqual({ stream: 'stdout', text: 'abcd', truncated: true });
    expect(readJsonLine(createLineBuffers(), rec(6, 'stdout', '{"type":"x"'), z.object({ type: z.string() }))).toEqual({ ok: false, stream: 'stdout', json: '{"type":"x"' });
  });
});
