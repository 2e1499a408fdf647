// The ACP adapter's pure parts over hand-written ACP lines shaped like claude-code-acp 0.16.2's
// (test/e2e/claude-code-acp.e2e.test.ts runs the real agents): the translator (deterministic,
// every part valid; session/load's history replay dropped; host MCP calls left to the kit; a
// call emitted once its input is known; file-change from edit diffs; permissions as approvals
// unless allow-all), its snapshots at every cut point, the encoders and the launch's handshake, and
// the responder's answers.
import type { JSONValue } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { acpAdapter, type AcpState } from '../../../host/adapters/acp/acp.ts';
import { FileNotFoundError, type ResponderIo } from '../../../host/adapter-kit/responder.ts';
import { checkEveryCutResumes } from '../../../host/testing/every-cut.ts';
import { checkEveryCutFolds } from '../ui-replay.ts';
import { launchSpecSchema } from '../../../protocol/v1/launch-spec.ts';
import { streamPartSchema } from '../../../protocol/harness-v1/stream-part-schema.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';

const adapter = acpAdapter({ id: 'my-agent', command: ['my-agent', '--acp'], modelId: 'm-1' });
const sid = 'sess-1';
const upd = (update: object) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: sid, update } });

function journal(permissionMode: string, lines: Array<['stdout' | 'stdin' | 'stderr', string]>): JournalRecord[] {
  const prompt = adapter.encodePrompt!({ text: 'hi', instructions: undefined, skills: [], threadId: sid, permissionMode: permissionMode as 'allow-all' })!;
  const records: JournalRecord[] = [{ seq: 1, turnId: 't', ts: 0, kind: 'turn-start', data: { argv: ['my-agent'], input: prompt } } as JournalRecord];
  for (const [kind, text] of lines) records.push({ seq: records.length + 1, turnId: 't', ts: 0, kind, data: { text } } as JournalRecord);
  records.push({ seq: records.length + 1, turnId: 't', ts: 0, kind: 'turn-end', data: { reason: 'matched' } } as JournalRecord);
  return records;
}

function translate(records: JournalRecord[]): HarnessV1StreamPart[] {
  let state: AcpState = adapter.translator.init({ turnId: 't', rerun: false });
  const parts: HarnessV1StreamPart[] = [];
  for (const record of records) {
    const out = adapter.translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
  }
  return parts;
}

const turn = (permissionMode: string) =>
  journal(permissionMode, [
    ['stdin', '{"jsonrpc":"2.0","id":"hb-session-load","method":"session/load","params":{}}\n'],
    ['stdout', upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'OLD HISTORY' } })],
    ['stdout', '{"jsonrpc":"2.0","id":"hb-session-load","result":{}}'],
    ['stdout', upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hello ' } })],
    ['stdout', upd({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Write', kind: 'edit', status: 'pending', rawInput: {} })],
    ['stdout', upd({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Write /w/a.txt', kind: 'edit', status: 'pending', rawInput: { file_path: '/w/a.txt', content: 'x' }, content: [{ type: 'diff', path: '/w/a.txt', oldText: null, newText: 'x' }] })],
    ['stdout', '{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"c1"},"options":[{"kind":"allow_always","optionId":"always"},{"kind":"allow_once","optionId":"allow"},{"kind":"reject_once","optionId":"reject"}]}}'],
    ['stdout', '{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"sess-1","path":"/w/a.txt","content":"x"}}'],
    ['stdout', upd({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'ok' } }] })],
    ['stdout', upd({ sessionUpdate: 'tool_call', toolCallId: 'h1', title: 'mcp__host__echo_upper', kind: 'other', status: 'pending', rawInput: { text: 'a' } })],
    ['stdout', upd({ sessionUpdate: 'tool_call_update', toolCallId: 'h1', status: 'completed' })],
    ['stdout', upd({ sessionUpdate: 'available_commands_update', availableCommands: [] })],
    ['stdout', upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'done.' } })],
    ['stdout', '{"jsonrpc":"2.0","id":"hb-prompt","result":{"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15}}}'],
  ]);

describe('acp translator', () => {
  it('allow-all: text, one write call with its result and file-change, no approval, no host call, no load history; deterministic and valid', () => {
    const parts = translate(turn('allow-all'));
    expect(translate(turn('allow-all'))).toEqual(parts);
    for (const part of parts) expect(streamPartSchema.safeParse(part).success, part.type).toBe(true);
    expect(parts.map((p) => p.type)).toEqual([
      'stream-start', 'text-start', 'text-delta', 'text-end', 'tool-call', 'tool-result', 'file-change', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish',
    ]);
    expect(parts[0]).toEqual({ type: 'stream-start', modelId: 'm-1' });
    expect(parts.find((p) => p.type === 'tool-call')).toMatchObject({ toolCallId: 'c1', toolName: 'write', input: '{"file_path":"/w/a.txt","content":"x"}', providerExecuted: true });
    expect(parts.find((p) => p.type === 'file-change')).toEqual({ type: 'file-change', event: 'create', path: '/w/a.txt' });
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' }, totalUsage: { inputTokens: { total: 10 }, outputTokens: { total: 5 } } });
  });

  it('allow-reads: the permission request is an approval on the call, answered with the agent\'s allow_once / reject_once option', () => {
    const records = turn('allow-reads');
    const parts = translate(records);
    expect(parts.filter((p) => p.type === 'tool-approval-request')).toEqual([{ type: 'tool-approval-request', approvalId: 'acp-approval-0', toolCallId: 'c1' }]);
    let state = adapter.translator.init({ turnId: 't', rerun: false });
    for (const r of records.slice(0, 8)) state = adapter.translator.step(state, r).state;
    expect(adapter.encodeApproval!({ approvalId: 'acp-approval-0', approved: true }, state)).toBe('{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}\n');
    expect(adapter.encodeApproval!({ approvalId: 'acp-approval-0', approved: false }, state)).toBe('{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}\n');
    expect(adapter.encodeInterrupt!(state)).toBe('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"sess-1"}}\n');
  });

  it('historyEndsWith: a history replayed after the load\'s answer (Gemini CLI) is dropped up to that update; a refused load ends it at once', () => {
    const replaying = acpAdapter({ id: 'my-agent', command: ['my-agent', '--acp'], modelId: 'm-1', historyEndsWith: 'available_commands_update' });
    const run = (records: JournalRecord[], which = replaying) => {
      let state = which.translator.init({ turnId: 't', rerun: false });
      return records.flatMap((record) => {
        const out = which.translator.step(state, record);
        state = out.state;
        return out.parts;
      });
    };
    const load = ['stdin', '{"jsonrpc":"2.0","id":"hb-session-load","method":"session/load","params":{}}\n'] as const;
    const said = (text: string) => ['stdout', upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } })] as const;
    const afterAnswer = journal('allow-all', [
      [...load],
      ['stdout', upd({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'OLD PROMPT' } })],
      ['stdout', '{"jsonrpc":"2.0","id":"hb-session-load","result":{}}'],
      [...said('OLD REPLY')],
      ['stdout', upd({ sessionUpdate: 'available_commands_update', availableCommands: [] })],
      [...said('new reply')],
      ['stdout', '{"jsonrpc":"2.0","id":"hb-prompt","result":{"stopReason":"end_turn"}}'],
    ]);
    const text = (parts: HarnessV1StreamPart[]) => parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');
    expect(text(run(afterAnswer))).toBe('new reply');
    // Without the option the answer ends the history, as the ACP spec has it: the late replay would be the turn's.
    expect(text(run(afterAnswer, adapter))).toBe('OLD REPLYnew reply');
    const refused = journal('allow-all', [[...load], ['stdout', '{"jsonrpc":"2.0","id":"hb-session-load","error":{"code":-32603,"message":"Internal error"}}'], [...said('new reply')]]);
    expect(text(run(refused))).toBe('new reply');
  });

  it('historyEndsWith: every cut point of a late replay resumes exactly, and folds through the real HarnessAgent + readUIMessageStream', async () => {
    const replaying = acpAdapter({ id: 'my-agent', command: ['my-agent', '--acp'], modelId: 'm-1', historyEndsWith: 'available_commands_update' });
    const records = journal('allow-all', [
      ['stdin', '{"jsonrpc":"2.0","id":"hb-session-load","method":"session/load","params":{}}\n'],
      ['stdout', '{"jsonrpc":"2.0","id":"hb-session-load","result":{}}'],
      ['stdout', upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'OLD REPLY' } })],
      ['stdout', upd({ sessionUpdate: 'available_commands_update', availableCommands: [] })],
      ['stdout', upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'new ' } })],
      ['stdout', upd({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'reply' } })],
      ['stdout', '{"jsonrpc":"2.0","id":"hb-prompt","result":{"stopReason":"end_turn"}}'],
    ]);
    expect(checkEveryCutResumes(() => replaying, records, 'late replay')).toBe(records.length + 1);
    const { checked, differing } = await checkEveryCutFolds(() => replaying, records, 'acp late replay');
    expect(checked).toBeGreaterThan(0);
    expect(differing).toEqual([]);
  });

  it('usage: ACP\'s `usage` in the prompt answer, else the counts Gemini CLI puts in its `_meta` (quota.token_count)', () => {
    const finish = (result: object) => translate(journal('allow-all', [['stdout', JSON.stringify({ jsonrpc: '2.0', id: 'hb-prompt', result: { stopReason: 'end_turn', ...result } })]])).at(-1);
    expect(finish({ _meta: { quota: { token_count: { input_tokens: 12, output_tokens: 7 }, model_usage: [] } } })).toMatchObject({ totalUsage: { inputTokens: { total: 12 }, outputTokens: { total: 7 } } });
    expect(finish({ usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 }, _meta: { quota: { token_count: { input_tokens: 12, output_tokens: 7 } } } })).toMatchObject({ totalUsage: { inputTokens: { total: 3 }, outputTokens: { total: 2 } } });
    expect(finish({ _meta: { quota: 'none' } })).toMatchObject({ totalUsage: { inputTokens: { total: undefined } } });
  });

  it('a refused prompt finishes error with the agent\'s message', () => {
    const parts = translate(journal('allow-all', [['stdout', '{"jsonrpc":"2.0","id":"hb-prompt","error":{"code":-32603,"message":"Session not found"}}']]));
    expect(parts.slice(-2)).toEqual([
      { type: 'error', error: { message: 'the agent refused session/prompt: Session not found' } },
      { type: 'finish', finishReason: { unified: 'error', raw: 'session/prompt refused' }, totalUsage: expect.any(Object) },
    ]);
  });
});

describe('acp translator snapshots', () => {
  for (const mode of ['allow-all', 'allow-reads'] as const) {
    it(`${mode}: every cut point k — snapshot, restore in a fresh translator, the rest: exactly the uninterrupted parts`, () => {
      expect(checkEveryCutResumes(() => adapter, turn(mode), mode)).toBe(turn(mode).length + 1);
    });

    it(`${mode}: every cut point, folded by the real HarnessAgent + readUIMessageStream onto the message before it: no fold error, no refused chunk (docs/guarantees.md#ui)`, async () => {
      const { checked, differing } = await checkEveryCutFolds(() => adapter, turn(mode), `acp ${mode}`);
      console.log(`[figures] ui-every-cut acp ${mode}: cuts=${checked} fold-errors=0 message-differs=${differing.length}${differing.length ? ` (${differing.join(', ')})` : ''}`);
      expect(checked).toBeGreaterThan(0);
    });
  }

  it('the snapshot is plain JSON without the model id (restore takes the adapter\'s own); foreign and corrupt ones are refused', () => {
    const records = turn('allow-reads');
    let state = adapter.translator.init({ turnId: 't', rerun: false });
    for (const r of records.slice(0, 8)) state = adapter.translator.step(state, r).state;
    const snapshot = JSON.parse(JSON.stringify(adapter.translator.snapshot!(state))) as { cli: string; v: number; state: Record<string, JSONValue> };
    expect(snapshot).toMatchObject({ cli: 'my-agent', v: 1, state: { sessionId: sid, allowAll: false, approvals: { 'acp-approval-0': { id: 0, allow: 'allow', reject: 'reject' } } } });
    expect(snapshot.state.modelId).toBeUndefined();
    const other = acpAdapter({ id: 'my-agent', command: ['my-agent'], modelId: 'm-2' });
    const restored = other.translator.restore!(snapshot);
    expect(restored.modelId).toBe('m-2');
    expect(other.encodeApproval!({ approvalId: 'acp-approval-0', approved: true }, restored)).toBe(adapter.encodeApproval!({ approvalId: 'acp-approval-0', approved: true }, state));
    expect(() => acpAdapter({ id: 'their-agent', command: ['x'] }).translator.restore!(snapshot)).toThrow(/not a their-agent translator snapshot v1 \(found cli "my-agent", v 1\)/);
    expect(() => adapter.translator.restore!({ ...snapshot, state: { ...snapshot.state, hostCalls: { h1: false } } })).toThrow(/my-agent: corrupt translator snapshot:[\s\S]*hostCalls/);
  });
});

describe('acp launch and encoders', () => {
  const ctx = { mode: 'fresh' as const, threadId: undefined, prompt: '', sessionWorkDir: '/w', bootstrapDir: '/b', stateDir: '/s', permissionMode: 'allow-all' as const, tools: [], mcp: { urlEnvVar: 'HARNESS_BRIDGE_MCP_URL', tokenEnvVar: 'HARNESS_BRIDGE_MCP_TOKEN' } as const, modelId: undefined };
  it('every process starts with initialize; a process on a thread also loads it; MCP values are placeholders', () => {
    const fresh = launchSpecSchema.parse(adapter.launch(ctx));
    expect(fresh.start?.map((s) => JSON.parse(s.input).method)).toEqual(['initialize']);
    const resumed = launchSpecSchema.parse(adapter.launch({ ...ctx, mode: 'resume', threadId: sid }));
    expect(resumed.start?.map((s) => [JSON.parse(s.input).method, s.until])).toEqual([
      ['initialize', [{ path: ['id'], equals: 'hb-initialize' }]],
      ['session/load', [{ path: ['id'], equals: 'hb-session-load' }]],
    ]);
    expect(resumed.stdinSecrets).toEqual(['HARNESS_BRIDGE_MCP_URL', 'HARNESS_BRIDGE_MCP_TOKEN']);
    const created = adapter.encodeThreadStart!({ sessionWorkDir: '/w', mcp: ctx.mcp });
    expect(JSON.parse(created).params).toEqual({
      cwd: '/w',
      mcpServers: [{ type: 'http', name: 'host', url: '${HARNESS_BRIDGE_MCP_URL}', headers: [{ name: 'Authorization', value: 'Bearer ${HARNESS_BRIDGE_MCP_TOKEN}' }] }],
    });
    expect(adapter.threadId({ seq: 1, turnId: 't', ts: 0, kind: 'stdout', data: { text: '{"jsonrpc":"2.0","id":"hb-session-new","result":{"sessionId":"sess-9"}}' } } as JournalRecord)).toBe('sess-9');
  });
});

describe('acp responder', () => {
  const files = new Map<string, string>([['/w/a.txt', 'one\ntwo\nthree']]);
  const io = (permissionMode: 'allow-all' | 'allow-reads'): ResponderIo => ({
    permissionMode,
    projectDir: '/w',
    readTextFile: async (path) => {
      if (!path.startsWith('/w/')) throw new Error(`${path} is outside the project dir /w`);
      const content = files.get(path);
      if (content === undefined) throw new FileNotFoundError(path);
      return content;
    },
    writeTextFile: async (path, content) => {
      if (!path.startsWith('/w/')) throw new Error(`${path} is outside the project dir /w`);
      files.set(path, content);
    },
  });
  const r = adapter.responder!;
  const ask = (id: number, method: string, params: object) => r.request({ seq: 1, turnId: 't', ts: 0, kind: 'stdout', data: { text: JSON.stringify({ jsonrpc: '2.0', id, method, params }) } } as JournalRecord)!;

  it('fs inside the project dir, errors outside, permissions only under allow-all, unknown methods refused', async () => {
    expect(await r.answer(ask(1, 'fs/read_text_file', { path: '/w/a.txt', line: 2, limit: 1 }), io('allow-all'))).toBe('{"jsonrpc":"2.0","id":1,"result":{"content":"two"}}\n');
    expect(await r.answer(ask(2, 'fs/write_text_file', { path: '/w/b.txt', content: 'B' }), io('allow-all'))).toBe('{"jsonrpc":"2.0","id":2,"result":null}\n');
    expect(files.get('/w/b.txt')).toBe('B');
    expect(await r.answer(ask(3, 'fs/read_text_file', { path: '/etc/passwd' }), io('allow-all'))).toContain('"error":{"code":-32000,"message":"/etc/passwd is outside the project dir /w"}');
    const permission = ask(4, 'session/request_permission', { toolCall: { toolCallId: 'c1', title: 'Bash' }, options: [{ kind: 'allow_once', optionId: 'yes' }, { kind: 'reject_once', optionId: 'no' }] });
    expect(await r.answer(permission, io('allow-all'))).toBe('{"jsonrpc":"2.0","id":4,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}\n');
    expect(await r.answer(permission, io('allow-reads'))).toBeUndefined();
    const hostCall = ask(5, 'session/request_permission', { toolCall: { toolCallId: 'h1', title: 'mcp__host__echo_upper', kind: 'other' }, options: [{ kind: 'allow_once', optionId: 'yes' }] });
    expect(await r.answer(hostCall, io('allow-reads'))).toContain('"optionId":"yes"');
    expect(await r.answer(ask(6, 'terminal/create', {}), io('allow-all'))).toContain('"code":-32601');
    // A missing file is ACP's Resource not found, which agents tell from a failed read (Gemini CLI's write of a new file).
    expect(await r.answer(ask(7, 'fs/read_text_file', { path: '/w/new.txt' }), io('allow-all'))).toBe('{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"Resource not found: /w/new.txt"}}\n');
  });
});
