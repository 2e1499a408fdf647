// Anthropic Messages API flavour (Claude Code, pi `anthropic-messages`): request → Conversation,
// Reply → SSE events or a JSON message, and the API's error shape. Scenario logic lives in script.ts;
// what is the user's text and where the working directory is come from the profiles (phrasing.ts).
import type { ServerResponse } from 'node:http';
import type { Block, Conversation, Item, Reply, ToolDef } from './script.ts';
import { wireId } from './script.ts';
import { asArray, contentText, isObj, str, type Json } from './normalize-util.ts';
import { findCwd, realUserText } from './phrasing.ts';
import { referenceProfiles, type CliProfile } from './profiles.ts';
import { streamChunks, type SseSink } from './sse.ts';

export function normalizeAnthropic(body: Json, raw: string, profiles: ReadonlyArray<CliProfile> = referenceProfiles): Conversation {
  const items: Item[] = [];
  for (const msg of asArray(body.messages)) {
    if (!isObj(msg)) continue;
    const role = msg.role;
    if (role !== 'user' && role !== 'assistant') continue; // Claude puts a role:"system" message in messages
    const blocks = typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : asArray(msg.content);
    const hasToolResult = blocks.some((b) => isObj(b) && b.type === 'tool_result');
    for (const b of blocks) {
      if (!isObj(b)) continue;
      if (b.type === 'text') {
        const text = str(b.text);
        const real = role === 'user' && !hasToolResult ? realUserText(text, profiles) : '';
        items.push({ kind: 'text', role, text: real || text, real: real.length > 0 });
      } else if (b.type === 'tool_use') {
        items.push({ kind: 'tool_call', name: str(b.name), id: str(b.id) });
      } else if (b.type === 'tool_result') {
        items.push({ kind: 'tool_result', id: str(b.tool_use_id), text: contentText(b.content), isError: b.is_error === true });
      }
    }
  }
  const tools: ToolDef[] = [];
  for (const t of asArray(body.tools)) {
    if (!isObj(t) || typeof t.name !== 'string') continue;
    tools.push({ name: t.name, schema: isObj(t.input_schema) ? t.input_schema : {}, variant: 'function' });
  }
  const conv: Conversation = { items, tools, rawText: raw };
  const cwd = findCwd(raw, profiles);
  if (cwd !== undefined) conv.cwd = cwd;
  return conv;
}

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

export function anthropicError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_scripted' });
  res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }));
}

function toolId(b: Extract<Block, { type: 'tool_call' }>): string {
  return `toolu_${b.call.id}`;
}

function toolInput(b: Extract<Block, { type: 'tool_call' }>): Json {
  return typeof b.call.input === 'string' ? { input: b.call.input } : b.call.input;
}

function signature(text: string): string {
  return wireId('sig', text);
}

export function anthropicJson(res: ServerResponse, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): void {
  const content = reply.blocks.map((b) => {
    if (b.type === 'thinking') return { type: 'thinking', thinking: b.text, signature: signature(b.text) };
    if (b.type === 'text') return { type: 'text', text: b.chunks.join('') };
    return { type: 'tool_use', id: toolId(b), name: b.call.name, input: toolInput(b) };
  });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      id: wireId('msg', raw),
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: reply.stop,
      stop_sequence: null,
      usage,
    }),
  );
}

/** Stream the reply as Anthropic SSE events; false if the client hung up midway. */
export async function anthropicStream(sink: SseSink, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): Promise<boolean> {
  const ev = (type: string, data: Json) => sink.send(type, { type, ...data });
  sink.start();
  ev('message_start', {
    message: {
      id: wireId('msg', raw),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  for (let index = 0; index < reply.blocks.length; index++) {
    const b = reply.blocks[index]!;
    if (b.type === 'thinking') {
      ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: b.text } });
      ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: signature(b.text) } });
    } else if (b.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      const ok = await streamChunks(sink, b.chunks, b.intervalMs, (text) =>
        ev('content_block_delta', { index, delta: { type: 'text_delta', text } }),
      );
      if (!ok) return false;
    } else {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: toolId(b), name: b.call.name, input: {} } });
      const json = JSON.stringify(toolInput(b));
      const half = Math.floor(json.length / 2);
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } });
    }
    ev('content_block_stop', { index });
  }
  ev('message_delta', { delta: { stop_reason: reply.stop, stop_sequence: null }, usage: { output_tokens: 5 } });
  ev('message_stop', {});
  const ok = !sink.closed;
  sink.end();
  return ok;
}
