// The scripted model's Google GenAI flavour, driven with plain fetch in Gemini CLI's request shape:
// routing by path (model and method in it), SSE chunks, function calls whose id comes back in the
// functionResponse, and the error shape. No CLI involved (test/e2e/gemini-cli-acp.e2e.test.ts runs one).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { geminiCliProfile, referenceProfiles } from '../../host/testing/scripted-model/profiles.ts';
import { startModelServer, type ModelServer } from './index.ts';

type Json = Record<string, any>;
let server: ModelServer;

beforeAll(async () => {
  server = await startModelServer({ profiles: [geminiCliProfile, ...referenceProfiles] });
});
afterAll(async () => {
  await server.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const tools = [
  {
    functionDeclarations: [
      { name: 'run_shell_command', parametersJsonSchema: { type: 'object', properties: { command: { type: 'string' }, description: { type: 'string' } }, required: ['command'] } },
      { name: 'write_file', parametersJsonSchema: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] } },
      { name: 'mcp_host_echo_upper', parametersJsonSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ],
  },
];

function geminiBody(prompt: string, history: Json[] = []): Json {
  return {
    contents: [{ role: 'user', parts: [{ text: '<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - /w/proj\n</session_context>' }, { text: prompt }] }, ...history],
    systemInstruction: { parts: [{ text: 'You are Gemini CLI.' }] },
    tools,
  };
}

/** The SSE chunks of a streamed reply, folded: text, function calls, the finish reason, and whether usage came. */
async function streamed(path: string, body: Json): Promise<{ text: string; calls: Json[]; finish: string[]; usage: boolean; models: Set<string> }> {
  const res = await post(path, body);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const out = { text: '', calls: [] as Json[], finish: [] as string[], usage: false, models: new Set<string>() };
  for (const frame of (await res.text()).split('\n\n')) {
    if (!frame.trim()) continue;
    expect(frame.startsWith('data: '), frame).toBe(true);
    const chunk = JSON.parse(frame.slice(6)) as Json;
    const candidate = chunk.candidates[0];
    out.models.add(chunk.modelVersion);
    for (const part of candidate.content.parts) {
      if (typeof part.text === 'string' && !part.thought) out.text += part.text;
      if (part.functionCall) out.calls.push(part.functionCall);
    }
    if (candidate.finishReason) out.finish.push(candidate.finishReason);
    if (chunk.usageMetadata) out.usage = true;
  }
  return out;
}

const streamPath = '/v1beta/models/gemini-scripted:streamGenerateContent';

describe('Google GenAI', () => {
  it('streams a text reply in chunks, one STOP with usage at the end, the model from the path', async () => {
    const r = await streamed(`${streamPath}?alt=sse`, geminiBody('SCENARIO:text hello gemini'));
    expect(r).toMatchObject({ text: 'Scripted reply 1 (text): you said "hello gemini".', calls: [], finish: ['STOP'], usage: true });
    expect([...r.models]).toEqual(['gemini-scripted']);
  });

  it('a shell call with an id, and the final answer once the functionResponse carries it back', async () => {
    const first = await streamed(streamPath, geminiBody('SCENARIO:shell'));
    expect(first.calls).toHaveLength(1);
    const call = first.calls[0]!;
    expect(call).toMatchObject({ name: 'run_shell_command', args: { command: 'echo hi > f.txt && cat f.txt' } });
    expect(call.id).toMatch(/^call_/);
    const done = await streamed(
      streamPath,
      geminiBody('SCENARIO:shell', [
        { role: 'model', parts: [{ functionCall: call }] },
        { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: 'hi' } } }] },
      ]),
    );
    expect(done).toMatchObject({ text: 'Done (1 tool result). Last tool result was: hi', calls: [], finish: ['STOP'] });
  });

  it('a functionResponse without an id pairs with its call by name', async () => {
    const first = await streamed(streamPath, geminiBody('SCENARIO:shell'));
    const { id: _id, ...call } = first.calls[0]!;
    const done = await streamed(
      streamPath,
      geminiBody('SCENARIO:shell', [
        { role: 'model', parts: [{ functionCall: call }] },
        { role: 'user', parts: [{ functionResponse: { name: call.name, response: { output: 'hi' } } }] },
      ]),
    );
    expect(done.text).toBe('Done (1 tool result). Last tool result was: hi');
  });

  it('the host tool Gemini CLI names mcp_host_<tool>, picked by the TOOL marker', async () => {
    const r = await streamed(streamPath, geminiBody('SCENARIO:mcp TOOL:echo_upper call the host tool'));
    expect(r.calls.map((c) => [c.name, c.args])).toEqual([['mcp_host_echo_upper', { text: 'hello mcp' }]]);
  });

  it(':generateContent answers one JSON response; :countTokens a count', async () => {
    const res = await post('/v1beta/models/gemini-scripted:generateContent', geminiBody('SCENARIO:text once'));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.candidates[0]).toMatchObject({ content: { role: 'model', parts: [{ text: 'Scripted reply 1 (text): you said "once".' }] }, finishReason: 'STOP' });
    const count = await post('/v1beta/models/gemini-scripted:countTokens', geminiBody('x'));
    expect(await count.json()).toEqual({ totalTokens: 10 });
  });

  it('SCENARIO:fail answers 400 in Google’s error shape; another method is no route', async () => {
    const res = await post(streamPath, geminiBody('SCENARIO:fail'));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 400, message: 'scripted failure', status: 'INVALID_ARGUMENT' } });
    expect((await post('/v1beta/models/gemini-scripted:embedContent', {})).status).toBe(404);
  });
});
