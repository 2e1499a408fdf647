// OpenAI Chat Completions flavour (pi `openai-completions`): request → Conversation,
// Reply → `chat.completion.chunk` SSE (ending `data: [DONE]`) or a JSON completion.
import type { ServerResponse } from 'node:http';
import type { Block, Conversation, Item, Reply, ToolDef } from './script.ts';
import { wireId } from './script.ts';
import { asArray, contentText, isObj, str, type Json } from './normalize-util.ts';
import { findCwd, realUserText } from './phrasing.ts';
import { referenceProfiles, type CliProfile } from './profiles.ts';
import { streamChunks, type SseSink } from './sse.ts';

export function normalizeChat(body: Json, raw: string, profiles: ReadonlyArray<CliProfile> = referenceProfiles): Conversation {
  const items: Item[] = [];
  for (const m of asArray(body.messages)) {
    if (!isObj(m)) continue;
    if (m.role === 'user' || (m.role === 'assistant' && m.content)) {
      const parts = typeof m.content === 'string' ? [{ text: m.content }] : asArray(m.content);
      for (const p of parts) {
        if (!isObj(p) || typeof p.text !== 'string') continue;
        const real = m.role === 'user' ? realUserText(p.text, profiles) : '';
        items.push({ kind: 'text', role: m.role, text: real || p.text, real: real.length > 0 });
      }
    }
    if (m.role === 'assistant') {
      for (const tc of asArray(m.tool_calls)) {
        if (!isObj(tc) || !isObj(tc.function)) continue;
        items.push({ kind: 'tool_call', name: str(tc.function.name), id: str(tc.id) });
      }
    } else if (m.role === 'tool') {
      items.push({ kind: 'tool_result', id: str(m.tool_call_id), text: contentText(m.content), isError: false });
    }
  }
  const tools: ToolDef[] = [];
  for (const t of asArray(body.tools)) {
    if (!isObj(t) || !isObj(t.function) || typeof t.function.name !== 'string') continue;
    tools.push({ name: t.function.name, schema: isObj(t.function.parameters) ? t.function.parameters : {}, variant: 'function' });
  }
  const conv: Conversation = { items, tools, rawText: raw };
  const cwd = findCwd(raw, profiles);
  if (cwd !== undefined) conv.cwd = cwd;
  return conv;
}

export function chatError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'scripted_failure', message, param: null } }));
}

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function toolCallJson(b: Extract<Block, { type: 'tool_call' }>, index: number): Json {
  const args = typeof b.call.input === 'string' ? JSON.stringify({ input: b.call.input }) : JSON.stringify(b.call.input);
  return { index, id: `call_${b.call.id}`, type: 'function', function: { name: b.call.name, arguments: args } };
}

export function chatJson(res: ServerResponse, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): void {
  const text = reply.blocks.flatMap((b) => (b.type === 'text' ? [b.chunks.join('')] : [])).join('');
  const thinking = reply.blocks.flatMap((b) => (b.type === 'thinking' ? [b.text] : [])).join('');
  const calls = reply.blocks.flatMap((b, i) => (b.type === 'tool_call' ? [toolCallJson(b, i)] : []));
  const message: Json = { role: 'assistant', content: text.length > 0 ? text : null };
  if (thinking) message.reasoning_content = thinking;
  if (calls.length > 0) message.tool_calls = calls.map(({ index: _i, ...c }) => c);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: wireId('chatcmpl', raw),
      object: 'chat.completion',
      created: 0,
      model,
      choices: [{ index: 0, message, finish_reason: reply.stop === 'tool_use' ? 'tool_calls' : 'stop' }],
      usage,
    }),
  );
}

export async function chatStream(sink: SseSink, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): Promise<boolean> {
  const id = wireId('chatcmpl', raw);
  const chunk = (delta: Json, finish_reason: string | null = null) =>
    sink.send(null, { id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason }] });
  sink.start();
  chunk({ role: 'assistant', content: '' });
  let toolIndex = 0;
  for (const b of reply.blocks) {
    if (b.type === 'thinking') {
      chunk({ reasoning_content: b.text });
    } else if (b.type === 'text') {
      if (!(await streamChunks(sink, b.chunks, b.intervalMs, (content) => chunk({ content })))) return false;
    } else {
      const full = toolCallJson(b, toolIndex++);
      const fn = full.function as { name: string; arguments: string };
      chunk({ tool_calls: [{ ...full, function: { name: fn.name, arguments: '' } }] });
      chunk({ tool_calls: [{ index: full.index, function: { arguments: fn.arguments } }] });
    }
  }
  chunk({}, reply.stop === 'tool_use' ? 'tool_calls' : 'stop');
  sink.send(null, { id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage });
  sink.send(null, '[DONE]');
  const ok = !sink.closed;
  sink.end();
  return ok;
}
