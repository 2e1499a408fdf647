// The demo's model: the scripted model's Anthropic flavour (./scripted-model,
// which test/model-server's server builds on too) on 127.0.0.1, in this
// process, with one extra scenario for the demo turn — `SCENARIO:demo
// PATH:<file>`: Edit the file (a CLI builtin), then call the first host tool
// (over the bridge's MCP endpoint), then answer in text. Every other prompt
// gets the standard script.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicError, anthropicJson, anthropicStream, normalizeAnthropic } from '../testing/scripted-model/anthropic.ts';
import { isObj } from '../testing/scripted-model/normalize-util.ts';
import { planReply, type Conversation, type Item, type Planned } from '../testing/scripted-model/script.ts';
import { SseSink } from '../testing/scripted-model/sse.ts';

// Claude Code request bodies are ~150 KB; 64 MiB is far above any demo turn.
const maxBodyBytes = 64 * 1024 * 1024;

export type DemoModel = { readonly url: string; readonly requests: () => number; close(): Promise<void> };

/** The demo scenario on top of the standard script; pure, like planReply. */
export function planDemoReply(conv: Conversation): Planned {
  const userIndex = lastRealUserText(conv.items);
  const user = userIndex < 0 ? undefined : conv.items[userIndex];
  if (!user || user.kind !== 'text' || !/\bSCENARIO:demo\b/i.test(user.text)) return planReply(conv);
  const history = conv.items.slice(userIndex + 1);
  const calls = history.filter((item) => item.kind === 'tool_call').length;
  const as = (scenario: string, items: Item[]): Conversation => ({
    ...conv,
    items: items.map((item, i) => (i === userIndex && item.kind === 'text' ? { ...item, text: item.text.replace(/\bSCENARIO:demo\b/i, `SCENARIO:${scenario}`) } : item)),
  });
  // 0 calls: the edit. 1 call: the host tool, planned as if nothing had happened since the prompt. 2: the closing text.
  if (calls === 1) return planReply(as('mcp', conv.items.slice(0, userIndex + 1)));
  return planReply(as('edit', conv.items));
}

function lastRealUserText(items: ReadonlyArray<Item>): number {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === 'text' && item.role === 'user' && item.real) return i;
  }
  return -1;
}

export async function startDemoModel(): Promise<DemoModel> {
  let count = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const raw = await readBody(req);
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 10 }));
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } }));
      return;
    }
    let body: unknown;
    try {
      body = raw === null ? null : JSON.parse(raw);
    } catch {
      body = null; // answered as a 400 below
    }
    if (raw === null || !isObj(body)) {
      anthropicError(res, 400, raw === null ? 'body too large' : 'request body is not a JSON object');
      return;
    }
    count++;
    const { reply } = planDemoReply(normalizeAnthropic(body, raw));
    if (reply.kind === 'error') {
      anthropicError(res, reply.status, reply.message);
      return;
    }
    const model = typeof body.model === 'string' ? body.model : 'scripted-model';
    if (body.stream !== true) {
      anthropicJson(res, reply, model, raw);
      return;
    }
    const sink = new SseSink(res);
    if (!(await anthropicStream(sink, reply, model, raw))) res.destroy();
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: String(error) } }));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 1_000; // idle keep-alive sockets would hold close() open
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
