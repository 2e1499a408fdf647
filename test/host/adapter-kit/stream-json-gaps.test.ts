// What the stream-json translator makes of a CLI that prints less than Claude Code: usage only on its
// `assistant` lines (no stream events), a result line without usage, and its own write and edit tools
// with no onToolResult hook. Steps carry the assistant lines' counts, the finish sums the steps when the
// result has none, and a write or edit is a file-change.
import { describe, expect, it } from 'vitest';
import { defineCliAdapter } from '../../../host/adapter-kit/adapter.ts';
import { streamJsonThreadId, streamJsonTranslator, type StreamJsonState } from '../../../host/adapter-kit/stream-json.ts';
import type { HarnessV1StreamPart as Part } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { expectEveryCutResumes, expectWellFormed } from '../adapters/translator-checks.ts';

const plainCli = () =>
  defineCliAdapter<StreamJsonState>({
    harnessId: 'plain-cli',
    builtinTools: {},
    launch: () => ({ argv: ['plain-cli'] }),
    threadId: streamJsonThreadId,
    translator: streamJsonTranslator({ harnessId: 'plain-cli', cli: 'plain', toolName: (name) => name.toLowerCase(), isHostTool: (name) => name.startsWith('mcp__host__') }),
  });

const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output });
const lines = (resultUsage: object | undefined) =>
  [
    { type: 'system', subtype: 'init', session_id: 's-1', model: 'plain-model' },
    // One message in two assistant lines (one per block), its counts growing.
    { type: 'assistant', message: { id: 'm1', content: [{ type: 'text', text: 'writing' }], usage: usage(10, 2) } },
    { type: 'assistant', message: { id: 'm1', content: [{ type: 'tool_use', id: 'w1', name: 'Write', input: { file_path: '/w/new.txt', content: 'x' } }], usage: usage(10, 6) } },
    { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'w1', content: 'wrote' }] } },
    { type: 'assistant', message: { id: 'm2', content: [{ type: 'tool_use', id: 'e1', name: 'Edit', input: { path: '/w/new.txt', old: 'x', new: 'y' } }], usage: usage(20, 4) } },
    { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'e1', content: 'edited' }] } },
    { type: 'assistant', message: { id: 'm3', content: [{ type: 'tool_use', id: 'w2', name: 'Write', input: { file_path: '/w/denied.txt' } }], usage: usage(30, 3) } },
    { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'w2', content: 'no', is_error: true }] } },
    { type: 'assistant', message: { id: 'm4', content: [{ type: 'text', text: 'done' }], usage: usage(40, 1) } },
    { type: 'result', subtype: 'success', is_error: false, stop_reason: 'end_turn', session_id: 's-1', ...(resultUsage ? { usage: resultUsage } : {}) },
  ].map((line) => JSON.stringify(line));

function journal(resultUsage?: object): JournalRecord[] {
  let seq = 1;
  const records: JournalRecord[] = [{ seq: seq++, turnId: 't', ts: 0, kind: 'turn-start', data: { input: 'x' } }];
  for (const text of lines(resultUsage)) records.push({ seq: seq++, turnId: 't', ts: 0, kind: 'stdout', data: { text } });
  records.push({ seq: seq++, turnId: 't', ts: 0, kind: 'turn-end', data: { reason: 'matched' } });
  return records;
}

function translate(records: JournalRecord[]): Part[] {
  const { translator } = plainCli();
  let state = translator.init({ turnId: 't', rerun: false });
  const parts: Part[] = [];
  for (const record of records) {
    const out = translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
  }
  return parts;
}

const usageOf = (p: Part | undefined) => (p?.type === 'finish-step' ? p.usage : p?.type === 'finish' ? p.totalUsage : undefined);
const inputOf = (p: Part | undefined) => usageOf(p)?.inputTokens.total;
const outputOf = (p: Part | undefined) => usageOf(p)?.outputTokens.total;

describe('stream-json: usage and file changes from a CLI that prints only assistant lines', () => {
  it("each finish-step carries its message's counts from the assistant lines (the larger of a message's reports)", () => {
    const parts = translate(journal(usage(100, 14)));
    expectWellFormed(parts, 'plain-cli');
    const steps = parts.filter((p) => p.type === 'finish-step');
    expect(steps.map(inputOf)).toEqual([10, 20, 30, 40]);
    expect(steps.map(outputOf)).toEqual([6, 4, 3, 1]);
    // The result line's usage is the turn's.
    const finish = parts.find((p) => p.type === 'finish');
    expect([inputOf(finish), outputOf(finish)]).toEqual([100, 14]);
  });

  it('a result line without usage: the finish sums the steps', () => {
    const parts = translate(journal());
    const finish = parts.find((p) => p.type === 'finish');
    expect([inputOf(finish), outputOf(finish)]).toEqual([100, 14]);
  });

  it("the CLI's own write is a file-change create, its edit a modify; a failed call changes nothing", () => {
    const parts = translate(journal());
    expect(parts.filter((p) => p.type === 'file-change')).toEqual([
      { type: 'file-change', event: 'create', path: '/w/new.txt' },
      { type: 'file-change', event: 'modify', path: '/w/new.txt' },
    ]);
    // Each after its call's result.
    const order = parts.filter((p) => p.type === 'tool-result' || p.type === 'file-change').map((p) => p.type);
    expect(order).toEqual(['tool-result', 'file-change', 'tool-result', 'file-change', 'tool-result']);
  });

  it("a write whose tool_use_result says type 'update' is a modify", () => {
    const records = journal().map((r) =>
      r.kind === 'stdout' && r.data.text.includes('"wrote"') ? { ...r, data: { text: r.data.text.replace(/}$/, ',"tool_use_result":{"type":"update"}}') } } : r,
    );
    const parts = translate(records);
    expect(parts.filter((p) => p.type === 'file-change').map((p) => (p as { event: string }).event)).toEqual(['modify', 'modify']);
  });

  it('resumes at every cut point with the new state (files, stepsUsage)', () => {
    expectEveryCutResumes(plainCli, journal(), 'plain-cli');
  });
});
