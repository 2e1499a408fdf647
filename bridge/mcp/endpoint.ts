// The MCP endpoint (docs/design.md#d6): a small hand-written Streamable HTTP server
// (JSON-RPC 2.0 over POST, answered with application/json) on 127.0.0.1 only,
// with its own random bearer token, serving the host tools named in `start`
// frames. A tools/call becomes a journaled `tool-call` record and waits,
// durably, in the server's `pendingCalls` until the host's `tool-result` frame
// answers it; the answer is journaled and returned to the CLI. Seq and disk are
// the journal's (via the record path's `record`); routing host frames is server.ts's;
// JSON-RPC framing is json-rpc.ts's, the supervisor wrapper with-mcp.ts's.
//
// Guarantees: the token is never journaled, logged or put in hello (CLIs get
// it through env, see MCP_ENV_V1); every request is authenticated before its
// body is read; bodies and waiting calls are bounded (MCP_LIMITS); a bad
// message gets a JSON-RPC error and the endpoint carries on; a call whose HTTP
// request closes is dropped from pending with nothing recorded.
// A kept CLI's requests come through its keeper's relay (launch `survive`) with a
// relay id, journaled with the call: a relayed call outlives its HTTP request and
// this bridge, and the bridge that adopts the CLI answers the keeper's re-sent
// request from the journal or the host (relayed-calls.ts). A call of a CLI
// without a keeper is lost with its socket when the bridge dies (the host sees
// `unknown-call` if it answers the replayed record later). No sessions, no SSE
// streams, so no list_changed notifications.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { MCP_ENV_V1 } from '../../protocol/v1/mcp-env.ts';
import type { HostToolSpec, LaunchSpec, RecordDraft, ToolResultFrame } from '../../protocol/v1/index.ts';
import { createTokenCheck } from '../auth/token-check.ts';
import { resolveMcpLimits, type McpLimits } from '../limits.ts';
import type { Logger } from '../logger.ts';
import type { PendingCall } from '../server/server-seams.ts';
import { BRIDGE_VERSION } from '../version.ts';
import { RELAY_HEADER, RELAY_RETRY_STATUS } from '../survive/mcp-relay.ts';
import { readBoundedBody } from './bounded-body.ts';
import { bearer, listedTool, outputText, toolResult } from './mcp-shapes.ts';
import { RelayedCalls, type AdoptedCall } from './relayed-calls.ts';
import {
  callParamsSchema,
  idOf,
  initializeParamsSchema,
  messageSchema,
  rpcError,
  rpcErrors,
  rpcResult,
  sendJson,
  type RpcId,
} from './json-rpc.ts';

/** MCP revisions we answer in, newest first. A client asking for another one gets the newest (MCP version negotiation). */
export const MCP_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const mcpPath = '/mcp';

export type McpEndpointOptions = {
  /** Journals a draft (main's `record`); returns its seq, or null once the journal is closed. */
  record(draft: RecordDraft): number | null;
  /** The seq the next `record` will assign (callIds are derived from it). */
  nextSeq(): number;
  /** Resolves once everything recorded so far is on disk (write before send, docs/design.md#d2). */
  flush(): Promise<void>;
  /** The running turn, or null between turns. */
  turnId(): string | null;
  log: Logger;
  limits?: Partial<McpLimits>;
  /** Tests, and a bridge adopting a surviving CLI (its inherited token); a fresh random token otherwise. */
  token?: string;
  /** The port to listen on when free (a bridge adopting a surviving CLI: the port in its env); default any. */
  port?: number;
};

type Waiting = { callId: string; rpcId: RpcId; res: ServerResponse; keepalive: NodeJS.Timeout; entry: PendingCall };

export class McpEndpoint {
  readonly token: string;
  readonly limits: McpLimits;
  readonly #options: McpEndpointOptions;
  readonly #log: Logger;
  readonly #tokenMatches: (presented: string | undefined) => boolean;
  readonly #http: Server;
  /** The running turn's host tools by name (its start frame's): all tools/list shows and tools/call accepts. */
  readonly #tools = new Map<string, HostToolSpec>();
  /** Our calls still waiting, so close() can answer them. */
  readonly #waiting = new Map<string, Waiting>();
  #calls: Map<string, PendingCall> | null = null;
  #closed = false;
  /** Calls that came through a keeper's relay, by relay id: they outlive their HTTP request. */
  readonly #relayed: RelayedCalls;

  constructor(options: McpEndpointOptions) {
    this.#options = options;
    this.limits = resolveMcpLimits(options.limits);
    this.#log = options.log;
    this.token = options.token ?? randomBytes(32).toString('base64url');
    this.#tokenMatches = createTokenCheck(this.token);
    this.#http = createServer((req, res) => this.#request(req, res));
    this.#http.maxConnections = this.limits.maxMcpConnections;
    this.#relayed = new RelayedCalls({
      record: (draft) => options.record(draft),
      flush: () => options.flush(),
      log: this.#log,
      keepaliveIntervalMs: this.limits.keepaliveIntervalMs,
      reply: (res, body) => sendJson(res, 200, body),
      result: (id, output, isError) => rpcResult(id, toolResult(outputText(output), isError)),
      failed: (id, message) => rpcError(id, rpcErrors.internal, message),
    });
  }

  /** The bound port (after listen). */
  get port(): number {
    const address = this.#http.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}${mcpPath}`;
  }

  /** Variables merged into every spawned CLI's env (never into argv or records). */
  get env(): Record<string, string> {
    return { [MCP_ENV_V1.urlEnvVar]: this.url, [MCP_ENV_V1.tokenEnvVar]: this.token };
  }

  get pendingCount(): number {
    return this.#waiting.size + this.#relayed.waitingCount;
  }

  /** Loopback only, whatever host the bridge's ws listens on: the CLI runs beside us. */
  async listen(): Promise<void> {
    const wanted = this.#options.port;
    if (wanted !== undefined) {
      try {
        return await this.#listenOn(wanted);
      } catch (error) {
        this.#log.warn({ port: wanted, err: error }, 'mcp endpoint: the inherited port is taken; an adopted CLI cannot reach its host tools');
      }
    }
    return this.#listenOn(0);
  }

  #listenOn(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#http.once('error', reject);
      this.#http.listen(port, '127.0.0.1', () => {
        this.#http.off('error', reject);
        this.#http.on('error', (error) => this.#log.error({ err: error }, 'mcp http server error'));
        this.#log.info({ port: this.port }, 'mcp endpoint listening');
        resolve();
      });
    });
  }

  /** Where calls wait for the host (the server's `pendingCalls`, which routes tool-result frames). */
  bindCalls(calls: Map<string, PendingCall>): void {
    this.#calls = calls;
  }

  /**
   * The relayed calls of an adopted CLI's turn (adopt-survivor.ts read them from the journal): those
   * without a result wait in pendingCalls for the host; each is answered to the keeper's re-sent
   * request. Call after bindCalls.
   */
  adoptCalls(calls: readonly AdoptedCall[]): void {
    if (this.#calls === null) throw new Error('adoptCalls before bindCalls');
    for (const call of calls) this.#relayed.adopt(call, this.#calls);
  }

  /**
   * The tools of the turn about to start, replacing the previous turn's: the MCP credential is
   * least-privilege (docs/security.md#mcp), so a CLI may call only what the running turn's start
   * frame offered — never a tool of an earlier turn, never anything that answers, approves or
   * attaches. Same name twice: the later spec wins.
   */
  setTurnTools(tools: readonly HostToolSpec[] | undefined): void {
    this.#tools.clear();
    for (const tool of tools ?? []) {
      this.#tools.delete(tool.name);
      this.#tools.set(tool.name, tool);
    }
    for (const name of this.#tools.keys()) {
      if (this.#tools.size <= this.limits.maxListedTools) break;
      this.#tools.delete(name);
    }
  }

  /** The launch with our env merged in; ours wins, so a stale value in a launch spec cannot point elsewhere. */
  launchWithEnv(launch: LaunchSpec): LaunchSpec {
    return { ...launch, env: { ...launch.env, ...this.env } };
  }

  /** Stops listening; waiting calls get a JSON-RPC error and leave pendingCalls. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const waiting of [...this.#waiting.values()]) {
      this.#settle(waiting);
      if (this.#calls?.get(waiting.callId) === waiting.entry) this.#calls.delete(waiting.callId);
      sendJson(waiting.res, 200, rpcError(waiting.rpcId, rpcErrors.internal, 'the bridge is stopping'));
    }
    this.#relayed.close();
    const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
    this.#http.closeIdleConnections();
    // Let those answers go out; a client that keeps its socket open does not hold the stop.
    await Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, 200).unref())]);
    this.#http.closeAllConnections();
    await closed;
  }

  #request(req: IncomingMessage, res: ServerResponse): void {
    res.on('error', (error) => this.#log.debug({ err: error }, 'mcp response error'));
    req.on('error', (error) => this.#log.debug({ err: error }, 'mcp request error'));
    // Authenticate before anything else, body included (an unauthenticated peer learns nothing, costs nothing).
    if (!this.#tokenMatches(bearer(req))) {
      this.#log.warn({ remote: req.socket.remoteAddress }, 'mcp: refused a request: wrong or missing token');
      res.writeHead(401, { 'www-authenticate': 'Bearer', connection: 'close', 'content-length': 0 }).end();
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/.test(origin)) {
      res.writeHead(403, { connection: 'close', 'content-length': 0 }).end(); // DNS rebinding guard (MCP transport spec)
      return;
    }
    const path = (req.url ?? '').split('?')[0];
    if (path !== mcpPath) {
      res.writeHead(404, { 'content-length': 0 }).end();
      return;
    }
    if (req.method !== 'POST') {
      // No server-initiated SSE stream (GET) and no sessions to delete (DELETE): 405 is what the spec allows.
      res.writeHead(405, { allow: 'POST', 'content-length': 0 }).end();
      return;
    }
    const max = this.limits.maxMcpBodyBytes;
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      this.#tooLarge(req, res);
      return;
    }
    const relayHeader = req.headers[RELAY_HEADER];
    const relay = typeof relayHeader === 'string' && relayHeader.length > 0 && relayHeader.length <= 64 ? relayHeader : undefined;
    readBoundedBody(
      req,
      max,
      (body) => this.#message(body.toString('utf8'), res, relay),
      () => this.#tooLarge(req, res),
    );
  }

  #tooLarge(req: IncomingMessage, res: ServerResponse): void {
    this.#log.warn({ maxBytes: this.limits.maxMcpBodyBytes }, 'mcp: refused an oversized body');
    res.shouldKeepAlive = false;
    sendJson(res, 413, rpcError(null, rpcErrors.invalidRequest, `body over ${this.limits.maxMcpBodyBytes} bytes`));
    req.resume(); // read and discard the rest so the client sees the 413 rather than a reset
  }

  #message(text: string, res: ServerResponse, relay: string | undefined): void {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      sendJson(res, 400, rpcError(null, rpcErrors.parse, `not JSON: ${(error as Error).message}`));
      return;
    }
    if (Array.isArray(json)) {
      sendJson(res, 400, rpcError(null, rpcErrors.invalidRequest, 'JSON-RPC batches are not supported'));
      return;
    }
    const parsed = messageSchema.safeParse(json);
    if (!parsed.success) {
      sendJson(res, 400, rpcError(idOf(json), rpcErrors.invalidRequest, `not a JSON-RPC 2.0 message: ${parsed.error.issues[0]?.message ?? 'invalid'}`));
      return;
    }
    const message = parsed.data;
    if (message.method === undefined || message.id === undefined || message.id === null) {
      // A notification (notifications/initialized, cancelled, ...) or a response to a request we never send: accepted.
      if (message.method === undefined && message.result === undefined && message.error === undefined) {
        sendJson(res, 400, rpcError(message.id ?? null, rpcErrors.invalidRequest, 'neither a request, a notification nor a response'));
        return;
      }
      res.writeHead(202, { 'content-length': 0 }).end();
      return;
    }
    const { id, method, params } = message;
    switch (method) {
      case 'initialize': {
        const init = initializeParamsSchema.safeParse(params ?? {});
        if (!init.success) return sendJson(res, 200, rpcError(id, rpcErrors.invalidParams, 'initialize needs params.protocolVersion'));
        return sendJson(res, 200, rpcResult(id, this.#initialize(init.data.protocolVersion)));
      }
      case 'ping':
        return sendJson(res, 200, rpcResult(id, {}));
      case 'tools/list':
        return sendJson(res, 200, rpcResult(id, { tools: [...this.#tools.values()].map(listedTool) }));
      case 'tools/call':
        return this.#call(id, params, res, relay);
      default:
        // Also Claude's `server/discover` probe, which falls back to initialize on this answer.
        return sendJson(res, 200, rpcError(id, rpcErrors.methodNotFound, `method not found: ${method}`));
    }
  }

  #initialize(requested: string): unknown {
    const known: readonly string[] = MCP_PROTOCOL_VERSIONS;
    return {
      protocolVersion: known.includes(requested) ? requested : MCP_PROTOCOL_VERSIONS[0],
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'harness-bridge', version: BRIDGE_VERSION },
    };
  }

  #call(id: RpcId, params: Record<string, unknown> | undefined, res: ServerResponse, relay: string | undefined): void {
    if (relay !== undefined && this.#calls === null && !this.#closed) {
      // Adoption under way: the keeper holds the request and sends it again once this bridge serves calls.
      res.writeHead(RELAY_RETRY_STATUS, { 'content-length': 0 }).end();
      return;
    }
    if (relay !== undefined && this.#relayed.answer(relay, id, res)) return; // re-sent by the keeper: the call is journaled already
    const parsed = callParamsSchema.safeParse(params ?? {});
    if (!parsed.success) return sendJson(res, 200, rpcError(id, rpcErrors.invalidParams, 'tools/call needs params.name (and an arguments object)'));
    const { name } = parsed.data;
    if (!this.#tools.has(name)) return sendJson(res, 200, rpcError(id, rpcErrors.invalidParams, `unknown tool: ${name}`));
    const turnId = this.#options.turnId();
    // Tool-level failures are results with isError (the model reads them); nothing is journaled for them.
    if (turnId === null) return sendJson(res, 200, rpcResult(id, toolResult('no turn is running: the host cannot answer this call', true)));
    const calls = this.#calls;
    if (calls === null || this.#closed) return sendJson(res, 200, rpcError(id, rpcErrors.internal, 'the bridge is not serving calls'));
    if (this.pendingCount >= this.limits.maxPendingCalls) {
      return sendJson(res, 200, rpcResult(id, toolResult(`too many pending host tool calls (${this.limits.maxPendingCalls})`, true)));
    }
    // callId is derived from the tool-call record's own seq: unique for the journal's life, deterministic on replay.
    const callId = `mcp-${this.#options.nextSeq()}`;
    const seq = this.#options.record({ kind: 'tool-call', turnId, data: { callId, name, input: parsed.data.arguments ?? {}, ...(relay ? { relay } : {}) } });
    if (seq === null) return sendJson(res, 200, rpcError(id, rpcErrors.internal, 'the bridge is stopping'));
    if (`mcp-${seq}` !== callId) this.#log.error({ callId, seq }, 'mcp: tool-call seq differs from the predicted one');
    if (relay !== undefined) {
      this.#relayed.start({ callId, relay, turnId }, id, res, calls);
      this.#log.info({ callId, name, turnId, relay }, 'mcp: relayed tool call waiting for the host');
      return;
    }

    const entry: PendingCall = { kind: 'tool-call', answer: (frame) => this.#answered(waiting, turnId, frame) };
    const keepalive = setInterval(() => {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.write(' '); // leading JSON whitespace: resets the client's idle timer, the body still parses
    }, this.limits.keepaliveIntervalMs);
    keepalive.unref();
    const waiting: Waiting = { callId, rpcId: id, res, keepalive, entry };
    this.#waiting.set(callId, waiting);
    calls.set(callId, entry);
    this.#log.info({ callId, name, turnId }, 'mcp: tool call waiting for the host');
    res.on('close', () => {
      if (this.#waiting.get(callId) !== waiting) return; // answered or closed already
      this.#settle(waiting);
      if (calls.get(callId) === entry) calls.delete(callId);
      this.#log.info({ callId }, 'mcp: the CLI hung up; call dropped');
    });
  }

  /** The host answered (server.ts already removed the call from pendingCalls). */
  #answered(waiting: Waiting, turnId: string, frame: ToolResultFrame): void {
    const id = waiting.rpcId;
    this.#settle(waiting);
    const isError = frame.isError ?? false;
    this.#options.record({ kind: 'tool-result', turnId, data: { callId: waiting.callId, output: frame.output, isError } });
    this.#log.info({ callId: waiting.callId, isError }, 'mcp: tool call answered');
    const reply = rpcResult(id, toolResult(outputText(frame.output), isError));
    this.#options.flush().then(
      () => sendJson(waiting.res, 200, reply),
      (error: unknown) => {
        this.#log.error({ err: error, callId: waiting.callId }, 'mcp: journal flush failed before answering');
        sendJson(waiting.res, 200, rpcError(id, rpcErrors.internal, 'the bridge could not journal the result'));
      },
    );
  }

  #settle(waiting: Waiting): void {
    clearInterval(waiting.keepalive);
    this.#waiting.delete(waiting.callId);
  }
}
