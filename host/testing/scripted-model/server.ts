// The scripted model server: an HTTP listener on 127.0.0.1 that routes the four wire APIs
// (Anthropic Messages, OpenAI Responses, OpenAI Chat Completions, Google GenAI) to script.ts and records
// every request. Owns routing, body limits and recording; the flavours own their formats, the
// profiles (profiles.ts) what the model knows about each CLI. README.md here is its manual.
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicError, anthropicJson, anthropicStream, normalizeAnthropic } from './anthropic.ts';
import { chatError, chatJson, chatStream, normalizeChat } from './chat.ts';
import { geminiError, geminiJson, geminiRoute, geminiStream, normalizeGemini } from './gemini.ts';
import { isObj, type Json } from './normalize-util.ts';
import { normalizeResponses, responsesError, responsesJson, responsesStream } from './responses.ts';
import { referenceProfiles, type CliProfile } from './profiles.ts';
import { planReply, type Conversation, type Reply } from './script.ts';
import { SseSink } from './sse.ts';

// Claude Code request bodies are ~150 KB and grow with the thread; 64 MiB is far above any test.
const maxBodyBytes = 64 * 1024 * 1024;
// Headers that carry credentials are never recorded.
const SECRET_HEADERS = new Set(['x-api-key', 'authorization', 'cookie', 'proxy-authorization', 'api-key']);

export type Api = 'anthropic' | 'responses' | 'chat' | 'gemini' | 'count_tokens' | 'unknown';

export interface RecordedRequest {
  /** 1-based arrival order. */
  seq: number;
  method: string;
  /** Path without the query string. */
  path: string;
  query: string;
  api: Api;
  headers: Record<string, string>;
  /** Parsed JSON body, or the raw text if it was not JSON. */
  body: unknown;
  /** Scenario chosen for this request (model routes only). */
  scenario?: string;
  /** Set when the response ended: `completed`, or `client-closed` if the client hung up first. */
  outcome?: 'completed' | 'client-closed' | 'error';
  /** SSE events written (streamed replies only). */
  eventsSent?: number;
}

export interface ModelServerOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Append every request (as received) to this JSONL file. */
  logFile?: string;
  /**
   * What the model knows about the CLIs it serves, first match wins per tool role (README.md, "Profiles").
   * Default: referenceProfiles (Claude Code, Codex, pi). A CLI no profile names still gets every scenario
   * from guesses over its tools' names and schemas.
   */
  profiles?: ReadonlyArray<CliProfile>;
}

export interface ModelServer {
  url: string;
  port: number;
  requests(): RecordedRequest[];
  close(): Promise<void>;
}

interface Flavour {
  api: Api;
  normalize(body: Json, raw: string, profiles: ReadonlyArray<CliProfile>): Conversation;
  error(res: ServerResponse, status: number, message: string): void;
  json(res: ServerResponse, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): void;
  stream(sink: SseSink, reply: Extract<Reply, { kind: 'message' }>, model: string, raw: string): Promise<boolean>;
  /** Responses API clients (Codex) always stream; default when `stream` is absent. */
  streamByDefault: boolean;
}

const FLAVOURS: Record<string, Flavour> = {
  '/v1/messages': {
    api: 'anthropic',
    normalize: normalizeAnthropic,
    error: anthropicError,
    json: anthropicJson,
    stream: anthropicStream,
    streamByDefault: false,
  },
  '/v1/responses': {
    api: 'responses',
    normalize: normalizeResponses,
    error: responsesError,
    json: responsesJson,
    stream: responsesStream,
    streamByDefault: false,
  },
  '/v1/chat/completions': {
    api: 'chat',
    normalize: normalizeChat,
    error: chatError,
    json: chatJson,
    stream: chatStream,
    streamByDefault: false,
  },
};

/** Google GenAI: the method in the path says whether it streams. */
const geminiFlavour = (stream: boolean): Flavour => ({
  api: 'gemini',
  normalize: normalizeGemini,
  error: geminiError,
  json: geminiJson,
  stream: geminiStream,
  streamByDefault: stream,
});

/** The flavour serving a path, and the model a path names (Google GenAI's). */
function route(method: string | undefined, path: string): { flavour?: Flavour; model?: string; countTokens?: object } {
  if (method !== 'POST') return {};
  const exact = FLAVOURS[path];
  if (exact) return { flavour: exact };
  if (path === '/v1/messages/count_tokens') return { countTokens: { input_tokens: 10 } };
  const gemini = geminiRoute(path);
  if (!gemini) return {};
  if (gemini.method === 'countTokens') return { countTokens: { totalTokens: 10 } };
  return { flavour: geminiFlavour(gemini.method === 'streamGenerateContent'), model: gemini.model };
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBodyBytes) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function recordHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (SECRET_HEADERS.has(k) || v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export async function startModelServer(opts: ModelServerOptions = {}): Promise<ModelServer> {
  const recorded: RecordedRequest[] = [];
  const profiles = opts.profiles ?? referenceProfiles;
  let seq = 0;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const [path = '/', query = ''] = (req.url ?? '/').split('?', 2) as [string?, string?];
    const raw = await readBody(req);
    if (raw === null) {
      res.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'body too large' } }));
      return;
    }
    let body: unknown = raw;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : null;
    } catch {
      // Not JSON: keep the raw text in the record; the route answers 400 below.
    }
    const { flavour, model: pathModel, countTokens } = route(req.method, path);
    const api: Api = flavour?.api ?? (countTokens ? 'count_tokens' : 'unknown');
    const rec: RecordedRequest = { seq: ++seq, method: req.method ?? 'GET', path, query, api, headers: recordHeaders(req), body };
    recorded.push(rec);

    if (api === 'count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(countTokens));
      rec.outcome = 'completed';
      log(rec);
      return;
    }
    if (!flavour) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } }));
      rec.outcome = 'error';
      log(rec);
      return;
    }
    if (!isObj(body)) {
      flavour.error(res, 400, 'request body is not a JSON object');
      rec.outcome = 'error';
      log(rec);
      return;
    }
    const planned = planReply(flavour.normalize(body, raw, profiles), profiles);
    rec.scenario = planned.markers.scenario;
    log(rec);
    const reply = planned.reply;
    if (reply.kind === 'error') {
      flavour.error(res, reply.status, reply.message);
      rec.outcome = 'completed';
      return;
    }
    const model = pathModel ?? (typeof body.model === 'string' ? body.model : 'scripted-model');
    const stream = typeof body.stream === 'boolean' ? body.stream : flavour.streamByDefault;
    if (!stream) {
      flavour.json(res, reply, model, raw);
      rec.outcome = 'completed';
      return;
    }
    const sink = new SseSink(res);
    const ok = await flavour.stream(sink, reply, model, raw);
    rec.eventsSent = sink.sent;
    rec.outcome = ok ? 'completed' : 'client-closed';
    if (!ok) res.destroy();
  };

  const log = (rec: RecordedRequest): void => {
    if (opts.logFile === undefined) return;
    // Sync append keeps lines whole and in order; this is a test server, not a hot path.
    appendFileSync(opts.logFile, `${JSON.stringify(rec)}\n`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message } }));
      else res.destroy();
    });
  });
  // Idle keep-alive sockets would hold close() open; tests want close() to be prompt.
  server.keepAliveTimeout = 1_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: () => recorded.slice(),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
