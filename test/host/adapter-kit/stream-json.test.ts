// The kit's Claude-style stream-json module serves a CLI other than Claude Code: an adapter for a
// made-up `other-cli` (its own harnessId, tool names, host-tool server name, file-change rule) built
// from it in a few lines translates a hand-written stream-json turn — streamed text, a streamed
// builtin tool input, the call and its result, a host tool call left to the kit, a permission
// request — tags parts and snapshots with its own id, and resumes at every cut point.
import { describe, expect, it } from 'vitest';
import { defineCliAdapter } from '../../../host/adapter-kit/adapter.ts';
import { streamJsonApproval, streamJsonThreadId, streamJsonTranslator, type StreamJsonState } from '../../../host/adapter-kit/stream-json.ts';
import { claudeCodeAdapter } from '../../../host/adapters/claude-code/claude-code.ts';
import type { HarnessV1StreamPart as Part } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { expectEveryCutResumes, expectWellFormed } from '../adapters/translator-checks.ts';

const otherCli = () =>
  defineCliAdapter<StreamJsonState>({
    harnessId: 'other-cli',
    builtinTools: {},
    launch: () => ({ argv: ['other-cli'] }),
    threadId: streamJsonThreadId,
    encodeApproval: (answer, state) => streamJsonApproval('other-cli', answer, state),
    translator: streamJsonTranslator({
      harnessId: 'other-cli',
      cli: 'other',
      toolName: (name) => `other_${name.toLowerCase()}`,
      isHostTool: (name) => name.startsWith('mcp__bridge__'),
      onToolResult: ({ toolName, isError }, out) => {
        if (toolName === 'other_save' && !isError) out.push({ type: 'file-change', event: 'create', path: 'saved.txt' });
      },
    }),
  });

const event = (e: object) => ({ type: 'stream_event', event: e });
const lines = [
  { type: 'system', subtype: 'init', session_id: 'sess-9', model: 'other-model' },
  event({ type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 3 } } }),
  event({ type: 'content_block_start', content_block: { type: 'text', text: '' } }),
  event({ type: 'content_block_delta', delta: { type: 'text_delta', text: 'saving' } }),
  event({ type: 'content_block_stop' }),
  event({ type: 'content_block_start', content_block: { type: 'tool_use', id: 'tu_1', name: 'Save', input: {} } }),
  event({ type: 'content_block_delta', delta: { type: 'input_json_delta', partial_json: '{"name":"saved.txt"}' } }),
  { type: 'assistant', message: { id: 'msg_1', content: [{ type: 'text', text: 'saving' }, { type: 'tool_use', id: 'tu_1', name: 'Save', input: { name: 'saved.txt' } }] } },
  event({ type: 'content_block_stop' }),
  event({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 7 } }),
  { type: 'control_request', request_id: 'req-1', request: { subtype: 'can_use_tool', tool_use_id: 'tu_1', input: { name: 'saved.txt' } } },
  { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'saved' }] }, tool_use_result: { ok: true } },
  { type: 'assistant', message: { id: 'msg_2', content: [{ type: 'tool_use', id: 'tu_2', name: 'mcp__bridge__lookup', input: {} }] } },
  { type: 'assistant', message: { id: 'msg_3', content: [{ type: 'text', text: 'done' }] } },
  { type: 'result', subtype: 'success', is_error: false, stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 9 }, num_turns: 3, session_id: 'sess-9' },
].map((line) => JSON.stringify(line));

function journal(): JournalRecord[] {
  let seq = 1;
  const records: JournalRecord[] = [{ seq: seq++, turnId: 't', ts: 0, kind: 'turn-start', data: { input: 'x' } }];
  for (const text of lines) records.push({ seq: seq++, turnId: 't', ts: 0, kind: 'stdout', data: { text } });
  records.push({ seq: seq++, turnId: 't', ts: 0, kind: 'turn-end', data: { reason: 'matched' } });
  return records;
}

function translate(records: JournalRecord[]): { parts: Part[]; state: StreamJsonState } {
  const { translator } = otherCli();
  let state = translator.init({ turnId: 't', rerun: false });
  const parts: Part[] = [];
  for (const record of records) {
    const out = translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
  }
  return { parts, state };
}

describe('stream-json kit module, for a CLI that is not Claude Code', () => {
  it('translates a turn with its own tool names, host-tool server and file-change rule', () => {
    const { parts } = translate(journal());
    expectWellFormed(parts, 'other-cli');
    expect(parts.map((p) => p.type)).toEqual([
      ...['stream-start', 'text-start', 'text-delta', 'text-end'],
      ...['tool-input-start', 'tool-input-delta', 'tool-input-end', 'tool-call'],
      ...['tool-approval-request', 'tool-result', 'file-change'],
      // A step ends when the next message starts: msg_2 (only the host tool's call, which the kit emits from the
      // bridge's records) and msg_3 are steps of their own; the result line ends the last.
      ...['finish-step', 'finish-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish'],
    ]);
    expect(parts[0]).toEqual({ type: 'stream-start', modelId: 'other-model' });
    expect(parts.find((p) => p.type === 'tool-call')).toEqual({ type: 'tool-call', toolCallId: 'tu_1', toolName: 'other_save', input: '{"name":"saved.txt"}', providerExecuted: true, nativeName: 'Save' });
    expect(parts.find((p) => p.type === 'tool-result')).toMatchObject({ toolName: 'other_save', result: 'saved', providerMetadata: { 'other-cli': { toolUseResult: { ok: true } } } });
    const steps = parts.filter((p) => p.type === 'finish-step');
    expect(steps.map((p) => p.finishReason.unified)).toEqual(['tool-calls', 'tool-calls', 'stop']);
    expect(steps[0]!.usage.outputTokens.total, 'message_delta usage').toBe(7);
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' }, harnessMetadata: { 'other-cli': { numTurns: 3 } } });
  });

  it('snapshots under its own harnessId and resumes at every cut point; a Claude Code snapshot is refused', () => {
    const adapter = otherCli();
    const snapshot = adapter.translator.snapshot!(adapter.translator.init({ turnId: 't', rerun: false }));
    expect(snapshot).toMatchObject({ cli: 'other-cli', v: 1 });
    const claude = claudeCodeAdapter().translator;
    expect(() => adapter.translator.restore!(claude.snapshot!(claude.init({ turnId: 't', rerun: false })))).toThrow(/not a other-cli translator snapshot v1 \(found cli "claude-code"/);
    expectEveryCutResumes(otherCli, journal(), 'other-cli');
  });

  it('reads the thread from the init line and answers the permission request with its input', () => {
    const records = journal();
    expect(records.map((r) => otherCli().threadId(r)).filter(Boolean)).toEqual(['sess-9', 'sess-9']);
    const { state } = translate(records.slice(0, 12)); // up to the control_request
    expect(JSON.parse(otherCli().encodeApproval!({ approvalId: 'req-1', approved: true }, state))).toEqual({
      type: 'control_response',
      response: { subtype: 'success', request_id: 'req-1', response: { behavior: 'allow', updatedInput: { name: 'saved.txt' } } },
    });
    expect(() => otherCli().encodeApproval!({ approvalId: 'req-2', approved: true }, state)).toThrow('other-cli: no permission request req-2 in this turn');
  });
});
