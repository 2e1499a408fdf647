// Google GenAI flavour (gemini-cli through GOOGLE_GEMINI_BASE_URL): `POST /v1beta/models/<model>:generateContent`
// and `:streamGenerateContent?alt=sse` → Conversation; Reply → `GenerateContentResponse` JSON or its SSE chunks.
// The model is named in the path, not the body. A function call carries an id the client echoes in its
// functionResponse; a client that drops it is paired by the function's name.
import type { ServerResponse } from 'node:http';
import type { Block, Conversation, Item, Reply, ToolDef } from './script.ts';
import { wireId } from './script.ts';
import { asArray, isObj, str, type Json } from './normalize-util.ts';
import { findCwd, realUserText } from './phrasing.ts';
import { referenceProfiles, type CliProfile } from './profiles.ts';
import { streamChunks, type SseSink } from './sse.ts';

/** `/v1beta/models/<model>:<method>` (any API version) → the model and the method; null for other paths. */
export function geminiRoute(path: string): { model: string; method: 'generateContent' | 'streamGenerateContent' | 'countTokens' } | null {
  const match = /^\/v1[a-z0-9]*\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
  return match ? { model: decodeURIComponent(match[1]!), method: match[2] as 'generateContent' } : null;
}

export function normalizeGemini(body: Json, raw: string, profiles: ReadonlyArray<CliProfile> = referenceProfiles): Conversation {
  const items: Item[] = [];
  for (const content of asArray(body.contents)) {
    if (!isObj(content)) continue;
    const role = content.role === 'model' ? 'assistant' : 'user';
    for (const part of asArray(content.parts)) {
      if (!isObj(part)) continue;
      if (typeof part.text === 'string' && part.thought !== true) {
        const real = role === 'user' ? realUserText(part.text, profiles) : '';
        items.push({ kind: 'text', role, text: real || part.text, real: real.length > 0 });
      } else if (isObj(part.functionCall)) {
        const name = str(part.functionCall.name);
        items.push({ kind: 'tool_call', name, id: str(part.functionCall.id) || name });
      } else if (isObj(part.functionResponse)) {
        const response = part.functionResponse.response;
        const isError = isObj(response) && response.error !== undefined;
        const text = isObj(response) ? resultText(isError ? response.error : (response.output ?? response)) : resultText(response);
        items.push({ kind: 'tool_result', id: str(part.functionResponse.id) || str(part.functionResponse.name), text, isError });
      }
    }
  }
  const tools: ToolDef[] = [];
  for (const tool of asArray(body.tools)) {
    if (!isObj(tool)) continue;
    for (const declaration of asArray(tool.functionDeclarations)) {
      if (!isObj(declaration) || typeof declaration.name !== 'string') continue;
      const schema = isObj(declaration.parametersJsonSchema) ? declaration.parametersJsonSchema : isObj(declaration.parameters) ? declaration.parameters : {};
      tools.push({ name: declaration.name, schema, variant: 'function' });
    }
  }
  const conv: Conversation = { items, tools, rawText: raw };
  const cwd = findCwd(raw, profiles);
  if (cwd !== undefined) conv.cwd = cwd;
  return conv;
}

function resultText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? '');
}

export function geminiError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT' } }));
}

const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function callPart(b: Extract<Block, { type: 'tool_call' }>): Json {
  const args = typeof b.call.input === 'string' ? { input: b.call.input } : b.call.input;
  return { functionCall: { id: `call_${b.call.id}`, name: b.call.name, args } };
}

function response(parts: Json[], finishReason: string | null, model: string, id: string, usage = false): Json {
  const candidate: Json = { content: { role: 'model', parts }, index: 0 };
  if (finishReason) candidate.finishReason = finishReason;
  return { candidates: [candidate], ...(usage ? { usageMetadata } : {}), modelVersion: model, responseId: id };
}

export function geminiJson(res: ServerResponse, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): void {
  const parts: Json[] = reply.blocks.map((b) =>
    b.type === 'thinking' ? { text: b.text, thought: true } : b.type === 'text' ? { text: b.chunks.join('') } : callPart(b),
  );
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(response(parts, 'STOP', model, wireId('gemini', raw), true)));
}

export async function geminiStream(sink: SseSink, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): Promise<boolean> {
  const id = wireId('gemini', raw);
  sink.start();
  for (const b of reply.blocks) {
    if (b.type === 'thinking') sink.send(null, response([{ text: b.text, thought: true }], null, model, id));
    else if (b.type === 'text') {
      if (!(await streamChunks(sink, b.chunks, b.intervalMs, (text) => sink.send(null, response([{ text }], null, model, id))))) return false;
    } else sink.send(null, response([callPart(b)], null, model, id));
  }
  // Gemini says STOP after function calls too (the calls are what ask the client to act), on a chunk of its own.
  sink.send(null, response([], 'STOP', model, id, true));
  const ok = !sink.closed;
  sink.end();
  return ok;
}
