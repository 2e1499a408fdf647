// Drives the scripted model server with plain fetch for each wire API: scenarios, stepping,
// recording, errors and client hang-up. No CLI involved (see claude-smoke.test.ts for that).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EDIT_NEW, EDIT_OLD, startModelServer, type ModelServer } from './index.ts';

type Json = Record<string, any>;
interface SseEvent {
  event: string | null;
  data: any;
}

let server: ModelServer;
let logDir: string;

beforeAll(async () => {
  logDir = mkdtempSync(join(tmpdir(), 'model-server-test-'));
  server = await startModelServer({ logFile: join(logDir, 'requests.jsonl') });
});
afterAll(async () => {
  await server.close();
  rmSync(logDir, { recursive: true, force: true });
});

function post(path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  const init: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
  if (signal) init.signal = signal;
  return fetch(`${server.url}${path}`, init);
}

function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const frame of text.split('\n\n')) {
    if (!frame.trim()) continue;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    const raw = data.join('\n');
    out.push({ event, data: raw === '[DONE]' ? raw : JSON.parse(raw) });
  }
  return out;
}

async function sse(path: string, body: Json): Promise<SseEvent[]> {
  const res = await post(path, body);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  return parseSse(await res.text());
}

// ---- Anthropic Messages ---------------------------------------------------------------------

const bashTool = {
  name: 'Bash',
  input_schema: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'number' }, description: { type: 'string' } }, required: ['command'] },
};
const writeTool = {
  name: 'Write',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] },
};
const editTool = {
  name: 'Edit',
  input_schema: {
    type: 'object',
    properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean' } },
    required: ['file_path', 'old_string', 'new_string'],
  },
};
const mcpTool = {
  name: 'mcp__host__echo_upper',
  input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};
const claudeTools = [bashTool, writeTool, editTool];

/** A first request shaped like Claude Code's: reminder block, the prompt, and a role:"system" env message. */
function claudeBody(prompt: string, extra: Json = {}): Json {
  return {
    model: 'claude-test',
    stream: true,
    max_tokens: 1000,
    tools: claudeTools,
    messages: [
      { role: 'user', content: [{ type: 'text', text: '<system-reminder>\nSCENARIO:fail is not real\n</system-reminder>\n' }, { type: 'text', text: prompt }] },
      { role: 'system', content: [{ type: 'text', text: '# Environment\n - Primary working directory: /w/proj\n' }] },
    ],
    ...extra,
  };
}

interface AnthropicMessage {
  content: Json[];
  stop_reason: string;
}

/** Rebuild the assistant message from Anthropic SSE events, checking the framing on the way. */
function assembleAnthropic(events: SseEvent[]): AnthropicMessage {
  expect(events[0]!.event).toBe('message_start');
  expect(events[events.length - 1]!.event).toBe('message_stop');
  const content: Json[] = [];
  const partial: string[] = [];
  let stop = '';
  for (const { event, data } of events) {
    expect(data.type).toBe(event);
    if (event === 'content_block_start') {
      content[data.index] = { ...data.content_block };
      partial[data.index] = '';
    } else if (event === 'content_block_delta') {
      const b = content[data.index]!;
      if (data.delta.type === 'text_delta') b.text += data.delta.text;
      else if (data.delta.type === 'thinking_delta') b.thinking += data.delta.thinking;
      else if (data.delta.type === 'signature_delta') b.signature = data.delta.signature;
      else if (data.delta.type === 'input_json_delta') partial[data.index] += data.delta.partial_json;
    } else if (event === 'content_block_stop') {
      const b = content[data.index]!;
      if (b.type === 'tool_use') b.input = JSON.parse(partial[data.index]!);
    } else if (event === 'message_delta') {
      stop = data.delta.stop_reason;
    }
  }
  return { content, stop_reason: stop };
}

describe('Anthropic Messages', () => {
  it('streams a plain text reply, ignoring the query string and system-reminder blocks', async () => {
    const msg = assembleAnthropic(await sse('/v1/messages?beta=true', claudeBody('SCENARIO:text say hi')));
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.content).toHaveLength(1);
    expect(msg.content[0]).toEqual({ type: 'text', text: 'Scripted reply 1 (text): you said "say hi".' });
  });

  it('is deterministic: the same request gives byte-identical output', async () => {
    const body = claudeBody('SCENARIO:text again');
    const a = await (await post('/v1/messages', body)).text();
    const b = await (await post('/v1/messages', body)).text();
    expect(a).toBe(b);
  });

  it('answers non-streaming requests with a JSON message', async () => {
    const res = await post('/v1/messages', claudeBody('SCENARIO:shell', { stream: false }));
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const msg = (await res.json()) as Json;
    expect(msg.type).toBe('message');
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content[0]).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'echo hi > f.txt && cat f.txt' } });
  });

  it('emits a thinking block before the text for SCENARIO:think', async () => {
    const msg = assembleAnthropic(await sse('/v1/messages', claudeBody('SCENARIO:think ponder')));
    expect(msg.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(msg.content[0]!.thinking).toMatch(/Thinking about request 1/);
    expect(msg.content[0]!.signature).toMatch(/^sig_/);
  });

  it('steps through a tool scenario: tool call first, final text after the tool result', async () => {
    const first = assembleAnthropic(await sse('/v1/messages', claudeBody('SCENARIO:shell')));
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content[0]!;
    expect(call).toMatchObject({ type: 'tool_use', name: 'Bash', input: { command: 'echo hi > f.txt && cat f.txt', description: 'scripted shell step' } });
    expect(call.id).toMatch(/^toolu_/);

    const body = claudeBody('SCENARIO:shell');
    body.messages.push(
      { role: 'assistant', content: [call] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'hi' }, { type: 'text', text: 'SCENARIO:fail ignored next to a tool result' }] },
    );
    const second = assembleAnthropic(await sse('/v1/messages', body));
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]!.text).toBe('Done (1 tool result). Last tool result was: hi');
  });

  it('builds Write/Edit arguments from the schemas, with absolute paths from the announced cwd', async () => {
    const write = assembleAnthropic(await sse('/v1/messages', claudeBody('SCENARIO:write PATH:out.txt')));
    expect(write.content[0]).toMatchObject({ name: 'Write', input: { file_path: '/w/proj/out.txt', content: 'hello from the scripted model\n' } });
    const edit = assembleAnthropic(await sse('/v1/messages', claudeBody('SCENARIO:edit PATH:/abs/e.txt')));
    expect(edit.content[0]!.input).toEqual({ file_path: '/abs/e.txt', old_string: EDIT_OLD, new_string: EDIT_NEW });
  });

  it('SCENARIO:multi calls Bash and Write in one assistant turn', async () => {
    const msg = assembleAnthropic(await sse('/v1/messages', claudeBody('SCENARIO:multi')));
    expect(msg.content.map((b) => b.name)).toEqual(['Bash', 'Write']);
    expect(new Set(msg.content.map((b) => b.id)).size).toBe(2);
  });

  it('calls an MCP tool offered in tools', async () => {
    const msg = assembleAnthropic(await sse('/v1/messages', claudeBody('SCENARIO:mcp', { tools: [...claudeTools, mcpTool] })));
    expect(msg.content[0]).toMatchObject({ type: 'tool_use', name: 'mcp__host__echo_upper', input: { text: 'hello mcp' } });
  });

  it('TOOL: picks the MCP tool by its full name, its bare name or its server', async () => {
    const other = { ...mcpTool, name: 'mcp__host__other_tool' };
    for (const marker of ['TOOL:mcp__host__echo_upper', 'TOOL:echo_upper']) {
      const msg = assembleAnthropic(await sse('/v1/messages', claudeBody(`SCENARIO:mcp ${marker}`, { tools: [...claudeTools, other, mcpTool] })));
      expect(msg.content[0], marker).toMatchObject({ type: 'tool_use', name: 'mcp__host__echo_upper' });
    }
  });

  it('goes through ToolSearch when the MCP tool is deferred', async () => {
    const toolSearch = {
      name: 'ToolSearch',
      input_schema: { type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'number' } }, required: ['query'] },
    };
    const body = claudeBody('SCENARIO:mcp', { tools: [...claudeTools, toolSearch] });
    body.messages[0].content.push({ type: 'text', text: '<system-reminder>deferred tools: mcp__host__echo_upper</system-reminder>' });
    const first = assembleAnthropic(await sse('/v1/messages', body));
    expect(first.content[0]).toMatchObject({ name: 'ToolSearch', input: { query: 'select:mcp__host__echo_upper', max_results: 5 } });

    body.tools.push({ ...mcpTool, defer_loading: true });
    body.messages.push(
      { role: 'assistant', content: [first.content[0]] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: first.content[0]!.id, content: [{ type: 'tool_reference', tool_name: mcpTool.name }] }, { type: 'text', text: 'Tool loaded.' }] },
    );
    const second = assembleAnthropic(await sse('/v1/messages', body));
    expect(second.content[0]).toMatchObject({ name: 'mcp__host__echo_upper', input: { text: 'hello mcp' } });
  });

  it('takes the last marker among the trailing user texts (interrupted prompt + new prompt)', async () => {
    const body = claudeBody('SCENARIO:slow INTERVAL:10');
    body.messages.push(
      { role: 'assistant', content: [{ type: 'text', text: 'slow 1 ' }] },
      { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user]' }, { type: 'text', text: 'SCENARIO:text next' }] },
    );
    const msg = assembleAnthropic(await sse('/v1/messages', body));
    expect(msg.content[0]!.text).toBe('Scripted reply 2 (text): you said "next".');
  });

  it('SCENARIO:fail answers 400 with the Anthropic error shape', async () => {
    const res = await post('/v1/messages', claudeBody('SCENARIO:fail'));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'scripted failure' } });
  });

  it('answers count_tokens', async () => {
    const res = await post('/v1/messages/count_tokens?beta=true', { messages: [] });
    expect(await res.json()).toEqual({ input_tokens: 10 });
  });

  it('SCENARIO:long streams LINES:n lines', async () => {
    const events = await sse('/v1/messages', claudeBody('SCENARIO:long LINES:500'));
    const msg = assembleAnthropic(events);
    const lines = (msg.content[0]!.text as string).split('\n').filter(Boolean);
    expect(lines).toHaveLength(500);
    expect(lines[499]).toBe('line 500 of 500');
    expect(events.filter((e) => e.event === 'content_block_delta')).toHaveLength(500);
  });
});

// ---- OpenAI Responses (Codex) ----------------------------------------------------------------

const codexTools = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' }, workdir: { type: 'string' }, yield_time_ms: { type: 'number' } }, required: ['cmd'] } },
  { type: 'custom', name: 'apply_patch', format: { type: 'grammar' } },
];

function codexBody(prompt: string, extra: Json = {}): Json {
  return {
    model: 'gpt-test',
    stream: true,
    tools: codexTools,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex. SCENARIO:fail is not real.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/w/proj</cwd>\n</environment_context>' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: prompt }] },
    ],
    ...extra,
  };
}

function completed(events: SseEvent[]): Json {
  const last = events[events.length - 1]!;
  expect(last.event).toBe('response.completed');
  return last.data.response;
}

describe('OpenAI Responses', () => {
  it('streams a text message with deltas and a completed response', async () => {
    const events = await sse('/v1/responses', codexBody('SCENARIO:text hello codex'));
    expect(events[0]!.event).toBe('response.created');
    const deltas = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(deltas).toBe('Scripted reply 1 (text): you said "hello codex".');
    const resp = completed(events);
    expect(resp.output[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: deltas }] });
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it('shell: function_call exec_command, then final text after function_call_output', async () => {
    const first = completed(await sse('/v1/responses', codexBody('SCENARIO:shell')));
    const call = first.output[0];
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command' });
    expect(JSON.parse(call.arguments)).toEqual({ cmd: 'echo hi > f.txt && cat f.txt' });

    const body = codexBody('SCENARIO:shell');
    body.input.push(call, { type: 'function_call_output', call_id: call.call_id, output: 'Process exited with code 0\nOutput:\nhi\n' });
    const second = completed(await sse('/v1/responses', body));
    expect(second.output[0].content[0].text).toMatch(/^Done \(1 tool result\)\. Last tool result was: Process exited/);
  });

  it('write/edit use the freeform apply_patch tool with whole-line hunks', async () => {
    const write = completed(await sse('/v1/responses', codexBody('SCENARIO:write PATH:w.txt')));
    expect(write.output[0]).toMatchObject({
      type: 'custom_tool_call',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** Add File: w.txt\n+hello from the scripted model\n*** End Patch\n',
    });
    const edit = completed(await sse('/v1/responses', codexBody('SCENARIO:edit')));
    expect(edit.output[0].input).toBe(`*** Begin Patch\n*** Update File: edit-me.txt\n@@\n-${EDIT_OLD}\n+${EDIT_NEW}\n*** End Patch\n`);
  });

  it('calls a namespaced MCP tool, or tool_search first when it is deferred', async () => {
    const ns = { type: 'namespace', name: 'mcp__host', tools: [{ type: 'function', name: 'echo_upper', parameters: mcpTool.input_schema }] };
    const direct = completed(await sse('/v1/responses', codexBody('SCENARIO:mcp', { tools: [...codexTools, ns] })));
    expect(direct.output[0]).toMatchObject({ type: 'function_call', namespace: 'mcp__host', name: 'echo_upper' });
    expect(JSON.parse(direct.output[0].arguments)).toEqual({ text: 'hello mcp' });

    const body = codexBody('SCENARIO:mcp', { tools: [...codexTools, { type: 'tool_search', execution: 'client' }] });
    // Codex names only the namespace of deferred servers; the search query is the server name.
    body.input[0].content[0].text += ' Deferred MCP servers: mcp__host.';
    const search = completed(await sse('/v1/responses', body)).output[0];
    expect(search).toMatchObject({ type: 'tool_search_call', execution: 'client', arguments: { query: 'host', limit: 8 } });
    body.input.push(search, { type: 'tool_search_output', call_id: search.call_id, execution: 'client', tools: [ns] });
    const after = completed(await sse('/v1/responses', body)).output[0];
    expect(after).toMatchObject({ type: 'function_call', namespace: 'mcp__host', name: 'echo_upper' });
  });

  it("Codex's compaction prompt gets a scripted summary; the summary it sends back later is not a user text", async () => {
    const body = codexBody('SCENARIO:text first');
    body.input.push(
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Scripted reply 1 (text): you said "first".' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.\n' }] },
    );
    const summary = completed(await sse('/v1/responses', { ...body, tools: [] })).output[0].content[0].text;
    expect(summary).toBe('Scripted summary of a conversation with 1 earlier user message(s).');
    const after = codexBody('SCENARIO:text after compact');
    after.input.splice(2, 0, {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: `Another language model started to solve this problem and produced a summary of its thinking process. …\n${summary}` }],
    });
    const reply = completed(await sse('/v1/responses', after)).output[0].content[0].text;
    expect(reply, 'the summary message is not counted as a user prompt').toBe('Scripted reply 1 (text): you said "after compact".');
  });

  it('SCENARIO:think adds a reasoning item', async () => {
    const resp = completed(await sse('/v1/responses', codexBody('SCENARIO:think')));
    expect(resp.output.map((o: Json) => o.type)).toEqual(['reasoning', 'message']);
  });

  it('SCENARIO:fail answers 400 with the OpenAI error shape', async () => {
    const res = await post('/v1/responses', codexBody('SCENARIO:fail'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toMatchObject({ type: 'invalid_request_error', code: 'scripted_failure', message: 'scripted failure' });
  });
});

// ---- OpenAI Chat Completions (pi) ------------------------------------------------------------

const piTools = [
  { type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'number' } }, required: ['command'] } } },
  {
    type: 'function',
    function: {
      name: 'edit',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          edits: { type: 'array', items: { type: 'object', properties: { oldText: { type: 'string' }, newText: { type: 'string' } }, required: ['oldText', 'newText'] } },
        },
        required: ['path', 'edits'],
      },
    },
  },
];

function chatBody(prompt: string): Json {
  return {
    model: 'fake-model',
    stream: true,
    tools: piTools,
    messages: [
      { role: 'system', content: 'You are pi. Current working directory: /w/proj' },
      { role: 'user', content: [{ type: 'text', text: prompt }] },
    ],
  };
}

function assembleChat(events: SseEvent[]): { content: string; calls: Json[]; finish: string } {
  expect(events[events.length - 1]!.data).toBe('[DONE]');
  let content = '';
  let finish = '';
  const calls: Json[] = [];
  for (const { event, data } of events) {
    expect(event).toBeNull();
    if (data === '[DONE]') continue;
    const choice = data.choices[0];
    if (!choice) continue;
    if (choice.delta.content) content += choice.delta.content;
    for (const tc of choice.delta.tool_calls ?? []) {
      const c = (calls[tc.index] ??= { id: tc.id, name: tc.function.name, arguments: '' });
      c.arguments += tc.function.arguments ?? '';
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  return { content, calls, finish };
}

describe('OpenAI Chat Completions', () => {
  it('streams text chunks ending with [DONE]', async () => {
    const r = assembleChat(await sse('/v1/chat/completions', chatBody('SCENARIO:text hello pi')));
    expect(r).toEqual({ content: 'Scripted reply 1 (text): you said "hello pi".', calls: [], finish: 'stop' });
  });

  it('shell and edit tool calls, and the final text after a tool message', async () => {
    const shell = assembleChat(await sse('/v1/chat/completions', chatBody('SCENARIO:shell')));
    expect(shell.finish).toBe('tool_calls');
    expect(shell.calls[0]!.name).toBe('bash');
    expect(JSON.parse(shell.calls[0]!.arguments)).toEqual({ command: 'echo hi > f.txt && cat f.txt' });

    const edit = assembleChat(await sse('/v1/chat/completions', chatBody('SCENARIO:edit PATH:e.txt')));
    expect(JSON.parse(edit.calls[0]!.arguments)).toEqual({ path: 'e.txt', edits: [{ oldText: EDIT_OLD, newText: EDIT_NEW }] });

    const body = chatBody('SCENARIO:shell');
    body.messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id: shell.calls[0]!.id, type: 'function', function: { name: 'bash', arguments: shell.calls[0]!.arguments } }] },
      { role: 'tool', tool_call_id: shell.calls[0]!.id, content: 'hi' },
    );
    const done = assembleChat(await sse('/v1/chat/completions', body));
    expect(done).toMatchObject({ content: 'Done (1 tool result). Last tool result was: hi', finish: 'stop' });
  });

  it('a deferred MCP tool (Qwen Code): tool_search first, then the declared tool through tool_call {name, arguments}', async () => {
    const qwenTools = [
      { type: 'function', function: { name: 'tool_search', parameters: { type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'number' } }, required: ['query'] } } },
      { type: 'function', function: { name: 'tool_call', parameters: { type: 'object', properties: { name: { type: 'string' }, arguments: { type: 'object' } }, required: ['name', 'arguments'] } } },
    ];
    const body = chatBody('SCENARIO:mcp TOOL:echo_upper call the host tool');
    body.tools = qwenTools;
    const search = assembleChat(await sse('/v1/chat/completions', body));
    expect(search.calls.map((c) => [c.name, JSON.parse(c.arguments).query])).toEqual([['tool_search', 'echo_upper']]);
    const declared = { name: 'mcp__host__echo_upper', description: 'Echo', parametersJsonSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } };
    body.messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id: search.calls[0]!.id, type: 'function', function: { name: 'tool_search', arguments: search.calls[0]!.arguments } }] },
      { role: 'tool', tool_call_id: search.calls[0]!.id, content: `<functions>\n<function>${JSON.stringify(declared)}</function>\n</functions>` },
    );
    const viaCall = assembleChat(await sse('/v1/chat/completions', body));
    expect(viaCall.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([['tool_call', { name: 'mcp__host__echo_upper', arguments: { text: 'hello mcp' } }]]);
  });

  it('SCENARIO:fail answers 400', async () => {
    const res = await post('/v1/chat/completions', chatBody('SCENARIO:fail'));
    expect(res.status).toBe(400);
  });

  /** pi's summarisation request (the real shape: test/fixtures/pi/compact*.meta.json): the messages serialised inside <conversation>, then its prompt. */
  const piCompactBody = (conversation: string, tail = '') => ({
    model: 'fake-model',
    stream: true,
    messages: [
      { role: 'system', content: 'You are a context summarization assistant. …' },
      { role: 'user', content: [{ type: 'text', text: `<conversation>\n${conversation}\n</conversation>\n\nThe messages above are a conversation to summarize. Create a structured context checkpoint summary …${tail}` }] },
    ],
  });

  it("pi's compaction request gets a scripted summary: earlier [User] lines counted, the markers inside the conversation ignored, the custom focus echoed", async () => {
    const before = server.requests().length;
    const conversation = '[User]: SCENARIO:shell first\n[Assistant tool calls]: bash(command="echo hi")\n[User]: SCENARIO:fail second\n[Assistant]: ok';
    const plain = assembleChat(await sse('/v1/chat/completions', piCompactBody(conversation)));
    expect(plain).toEqual({ content: 'Scripted summary of a conversation with 2 earlier user message(s).', calls: [], finish: 'stop' });
    const focused = assembleChat(await sse('/v1/chat/completions', piCompactBody('', '\n\nAdditional focus: COMPACT-FOCUS keep the file names')));
    expect(focused.content).toBe('Scripted summary of a conversation with 0 earlier user message(s), focus "COMPACT-FOCUS keep the file names".');
    expect(server.requests().slice(before).map((r) => r.scenario)).toEqual(['compact', 'compact']);
  });

  it("pi's compaction fails with HTTP 400 when its focus says SCENARIO:fail; the summary pi sends back later is not a user text", async () => {
    const res = await post('/v1/chat/completions', piCompactBody('[User]: hi', '\n\nAdditional focus: SCENARIO:fail'));
    expect(res.status).toBe(400);
    await res.text();
    const after = chatBody('SCENARIO:text after compact');
    after.messages.splice(1, 0, { role: 'user', content: [{ type: 'text', text: 'The conversation history before this point was compacted into the following summary:\n\n<summary>\nScripted summary …\n</summary>' }] });
    const reply = assembleChat(await sse('/v1/chat/completions', after));
    expect(reply.content, 'the summary message is not counted as a user prompt').toBe('Scripted reply 1 (text): you said "after compact".');
  });
});

// ---- recording, routing, hang-up -------------------------------------------------------------

describe('recording and routing', () => {
  it('records path, query, headers without credentials, body and scenario, in memory and in the JSONL log', async () => {
    const before = server.requests().length;
    await (await post('/v1/messages?beta=true', claudeBody('SCENARIO:text recorded'), { 'x-api-key': 'sk-secret', authorization: 'Bearer sk-secret', 'x-probe': 'yes' })).text();
    const rec = server.requests()[before]!;
    expect(rec).toMatchObject({ method: 'POST', path: '/v1/messages', query: 'beta=true', api: 'anthropic', scenario: 'text', outcome: 'completed' });
    expect(rec.headers['x-probe']).toBe('yes');
    expect(rec.headers['x-api-key']).toBeUndefined();
    expect(rec.headers.authorization).toBeUndefined();
    expect((rec.body as Json).messages[0].content[1].text).toBe('SCENARIO:text recorded');

    const logged = readFileSync(join(logDir, 'requests.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Json);
    const line = logged.find((l) => l.seq === rec.seq)!;
    expect(line.path).toBe('/v1/messages');
    expect(JSON.stringify(line)).not.toContain('sk-secret');
  });

  it('answers 404 for unknown routes and records them', async () => {
    const res = await fetch(`${server.url}/v1/models`);
    expect(res.status).toBe(404);
    expect(server.requests().at(-1)).toMatchObject({ method: 'GET', path: '/v1/models', api: 'unknown' });
  });

  it('stops streaming SCENARIO:slow when the client hangs up', async () => {
    const ctrl = new AbortController();
    const before = server.requests().length;
    const res = await post('/v1/messages', claudeBody('SCENARIO:slow INTERVAL:50'), {}, ctrl.signal);
    const reader = res.body!.getReader();
    let seen = '';
    const decoder = new TextDecoder();
    while (!seen.includes('slow 2 ')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended early');
      seen += decoder.decode(value, { stream: true });
    }
    ctrl.abort();
    await reader.cancel().catch(() => undefined);
    const rec = server.requests()[before]!;
    const deadline = Date.now() + 5_000;
    while (rec.outcome === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(rec.scenario).toBe('slow');
    expect(rec.outcome).toBe('client-closed');
    // 30 s at 50 ms would be 600 deltas; it stopped within a few of the hang-up.
    expect(rec.eventsSent).toBeLessThan(20);
  });

  it('SCENARIO:slow paces deltas by INTERVAL and stops after CHUNKS', async () => {
    const t0 = Date.now();
    const events = await sse('/v1/messages', claudeBody('SCENARIO:slow INTERVAL:30 CHUNKS:5'));
    const text = assembleAnthropic(events).content[0]!.text;
    expect(text).toBe('slow 1 slow 2 slow 3 slow 4 slow 5 ');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4 * 30 - 5);
  });
});
