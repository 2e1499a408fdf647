// OpenAI Responses API flavour (Codex, pi `openai-responses`): request → Conversation,
// Reply → SSE events (Codex always streams) or a JSON response, and the API's error shape.
import type { ServerResponse } from 'node:http';
import type { Block, Conversation, Item, Reply, ToolDef } from './script.ts';
import { wireId } from './script.ts';
import { asArray, contentText, isObj, str, type Json } from './normalize-util.ts';
import { findCwd, realUserText } from './phrasing.ts';
import { referenceProfiles, type CliProfile } from './profiles.ts';
import { streamChunks, type SseSink } from './sse.ts';

function addTool(tools: ToolDef[], t: unknown, namespace?: string): void {
  if (!isObj(t)) return;
  if (t.type === 'namespace' && typeof t.name === 'string') {
    for (const inner of asArray(t.tools)) addTool(tools, inner, t.name);
    return;
  }
  if (t.type === 'tool_search') {
    tools.push({ name: 'tool_search', schema: {}, variant: 'tool_search' });
    return;
  }
  const fn = isObj(t.function) ? t.function : t; // tolerate Chat-style nesting
  if (typeof fn.name !== 'string') return;
  const def: ToolDef = {
    name: fn.name,
    schema: isObj(fn.parameters) ? fn.parameters : {},
    variant: t.type === 'custom' ? 'custom' : 'function',
  };
  if (namespace !== undefined) def.namespace = namespace;
  tools.push(def);
}

export function normalizeResponses(body: Json, raw: string, profiles: ReadonlyArray<CliProfile> = referenceProfiles): Conversation {
  const items: Item[] = [];
  const tools: ToolDef[] = [];
  for (const t of asArray(body.tools)) addTool(tools, t);
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : asArray(body.input);
  for (const it of input) {
    if (!isObj(it)) continue;
    const type = it.type ?? 'message';
    if (type === 'message') {
      if (it.role !== 'user' && it.role !== 'assistant') continue; // developer/system prompts
      const parts = typeof it.content === 'string' ? [{ text: it.content }] : asArray(it.content);
      for (const p of parts) {
        if (!isObj(p) || typeof p.text !== 'string') continue;
        const real = it.role === 'user' ? realUserText(p.text, profiles) : '';
        items.push({ kind: 'text', role: it.role, text: real || p.text, real: real.length > 0 });
      }
    } else if (type === 'function_call' || type === 'custom_tool_call' || type === 'tool_search_call') {
      const name = type === 'tool_search_call' ? 'tool_search' : str(it.name);
      items.push({ kind: 'tool_call', name, id: str(it.call_id) });
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      items.push({ kind: 'tool_result', id: str(it.call_id), text: contentText(it.output), isError: false });
    } else if (type === 'tool_search_output') {
      for (const t of asArray(it.tools)) addTool(tools, t);
      items.push({ kind: 'tool_result', id: str(it.call_id), text: '[tool search results]', isError: false });
    }
  }
  const conv: Conversation = { items, tools, rawText: raw };
  const cwd = findCwd(raw, profiles);
  if (cwd !== undefined) conv.cwd = cwd;
  return conv;
}

export function responsesError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'scripted_failure', message, param: null } }));
}

const usage = {
  input_tokens: 10,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 15,
};

function outputItem(b: Block, id: string): Json {
  if (b.type === 'thinking') {
    return { type: 'reasoning', id: `rs_${id}`, summary: [{ type: 'summary_text', text: b.text }] };
  }
  if (b.type === 'text') {
    return {
      type: 'message',
      id: `msg_${id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: b.chunks.join(''), annotations: [] }],
    };
  }
  const c = b.call;
  if (c.variant === 'custom') {
    return { type: 'custom_tool_call', id: `ctc_${c.id}`, call_id: `call_${c.id}`, status: 'completed', name: c.name, input: c.input };
  }
  if (c.variant === 'tool_search') {
    return { type: 'tool_search_call', id: `ts_${c.id}`, call_id: `call_${c.id}`, status: 'completed', execution: 'client', arguments: c.input };
  }
  const item: Json = {
    type: 'function_call',
    id: `fc_${c.id}`,
    call_id: `call_${c.id}`,
    status: 'completed',
    name: c.name,
    arguments: JSON.stringify(c.input),
  };
  if (c.namespace !== undefined) item.namespace = c.namespace;
  return item;
}

function response(raw: string, model: string, status: string, output: Json[]): Json {
  return { id: wireId('resp', raw), object: 'response', created_at: 0, status, model, output, usage };
}

export function responsesJson(res: ServerResponse, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): void {
  const base = wireId('o', raw);
  const output = reply.blocks.map((b, i) => outputItem(b, `${base}${i}`));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(response(raw, model, 'completed', output)));
}

export async function responsesStream(sink: SseSink, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): Promise<boolean> {
  let seq = 0;
  const ev = (type: string, data: Json) => sink.send(type, { type, sequence_number: seq++, ...data });
  const base = wireId('o', raw);
  const output: Json[] = [];
  sink.start();
  ev('response.created', { response: response(raw, model, 'in_progress', []) });
  for (let output_index = 0; output_index < reply.blocks.length; output_index++) {
    const b = reply.blocks[output_index]!;
    const done = outputItem(b, `${base}${output_index}`);
    const item_id = String(done.id);
    if (b.type === 'text') {
      ev('response.output_item.added', { output_index, item: { ...done, status: 'in_progress', content: [] } });
      ev('response.content_part.added', { item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      const ok = await streamChunks(sink, b.chunks, b.intervalMs, (delta) =>
        ev('response.output_text.delta', { item_id, output_index, content_index: 0, delta }),
      );
      if (!ok) return false;
      const text = b.chunks.join('');
      ev('response.output_text.done', { item_id, output_index, content_index: 0, text });
      ev('response.content_part.done', { item_id, output_index, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    } else if (b.type === 'thinking') {
      ev('response.output_item.added', { output_index, item: { ...done, summary: [] } });
      ev('response.reasoning_summary_part.added', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      ev('response.reasoning_summary_text.delta', { item_id, output_index, summary_index: 0, delta: b.text });
      ev('response.reasoning_summary_text.done', { item_id, output_index, summary_index: 0, text: b.text });
      ev('response.reasoning_summary_part.done', { item_id, output_index, summary_index: 0, part: { type: 'summary_text', text: b.text } });
    } else if (done.type === 'function_call') {
      ev('response.output_item.added', { output_index, item: { ...done, arguments: '', status: 'in_progress' } });
      ev('response.function_call_arguments.delta', { item_id, output_index, delta: done.arguments });
      ev('response.function_call_arguments.done', { item_id, output_index, arguments: done.arguments });
    } else {
      ev('response.output_item.added', { output_index, item: done });
    }
    ev('response.output_item.done', { output_index, item: done });
    output.push(done);
  }
  ev('response.completed', { response: response(raw, model, 'completed', output) });
  const ok = !sink.closed;
  sink.end();
  return ok;
}
