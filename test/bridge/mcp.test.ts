// bridge/mcp/endpoint.ts: the MCP endpoint on its own (fetch against a real loopback
// listener, a fake journal) and through the real bridge (dist/bridge.mjs with a
// fixture MCP client acting as the CLI and a raw ws host).
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MCP_ENV_V1, type HostToolSpec, type JournalRecord, type LaunchSpec, type RecordDraft, type ToolResultFrame } from '../../protocol/v1/index.ts';
import { createBridgeLogger, logFileName, type BridgeLogger } from '../../bridge/logger.ts';
import { McpEndpoint, type McpEndpointOptions } from '../../bridge/mcp/endpoint.ts';
import { withMcp } from '../../bridge/mcp/with-mcp.ts';
import type { PendingCall, SupervisorPort } from '../../bridge/server/server.ts';
import { connectClient, eventually, repoRoot, sleep, startBridge, tempDir, type RunningBridge } from './helpers.ts';

const listedSchema = z.object({
  result: z.object({ tools: z.array(z.object({ name: z.string(), description: z.string().optional(), inputSchema: z.record(z.string(), z.unknown()) })) }),
});

const echoTool: HostToolSpec = {
  name: 'echo_upper',
  description: 'Echo the text in upper case.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

type Harness = {
  endpoint: McpEndpoint;
  records: { seq: number; draft: RecordDraft }[];
  calls: Map<string, PendingCall>;
  turn: { id: string | null };
  logger: BridgeLogger;
  dir: string;
};

let h: Harness;

function makeEndpoint(overrides: Partial<McpEndpointOptions> = {}): Harness {
  const dir = tempDir('hb-mcp-');
  const logger = createBridgeLogger({ stateDir: dir, level: 'debug' });
  const records: { seq: number; draft: RecordDraft }[] = [];
  let seq = 10; // a journal that already holds records: callIds come from the real seq, not a counter from 1
  const turn = { id: 't1' as string | null };
  const endpoint = new McpEndpoint({
    record: (draft) => {
      records.push({ seq: ++seq, draft });
      return seq;
    },
    nextSeq: () => seq + 1,
    flush: () => Promise.resolve(),
    turnId: () => turn.id,
    log: logger.child('mcp'),
    ...overrides,
  });
  const calls = new Map<string, PendingCall>();
  endpoint.bindCalls(calls);
  return { endpoint, records, calls, turn, logger, dir };
}

beforeEach(async () => {
  h = makeEndpoint();
  await h.endpoint.listen();
});

afterEach(async () => {
  await h.endpoint.close();
  h.logger.flushSync();
  // The log file opens asynchronously (pino's sync: false): in a case this short it may appear while the dir is removed.
  rmSync(h.dir, { recursive: true, force: true, maxRetries: 5 });
});

type Reply = { status: number; text: string; json: unknown };

async function post(body: unknown, options: { token?: string | null; url?: string; signal?: AbortSignal; raw?: boolean; relay?: string } = {}): Promise<Reply> {
  const token = options.token === undefined ? h.endpoint.token : options.token;
  const response = await fetch(options.url ?? h.endpoint.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(options.relay === undefined ? {} : { 'x-hb-relay': options.relay }),
    },
    body: options.raw === true && typeof body === 'string' ? body : JSON.stringify(body),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const text = await response.text();
  let json: unknown = null;
  if (text.trim().length > 0) json = JSON.parse(text);
  return { status: response.status, text, json };
}

const rpc = (id: number | string, method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });

/** What server.ts does with a host tool-result frame. */
function answer(callId: string, output: unknown, isError?: boolean): void {
  const call = h.calls.get(callId);
  if (call === undefined || call.kind !== 'tool-call') throw new Error(`no pending tool-call ${callId}`);
  h.calls.delete(callId);
  const frame: ToolResultFrame = { type: 'tool-result', callId, output, ...(isError === undefined ? {} : { isError }) };
  call.answer(frame);
}

describe('MCP endpoint on its own', () => {
  it('listens on 127.0.0.1 only, with its own token', async () => {
    expect(h.endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(h.endpoint.token.length).toBeGreaterThanOrEqual(32);
    expect(makeEndpoint().endpoint.token).not.toBe(h.endpoint.token);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
    if (external === undefined) return; // only loopback here: nothing else to try
    const url = `http://${external.address}:${h.endpoint.port}/mcp`;
    await expect(post(rpc(1, 'ping'), { url })).rejects.toThrow();
  });

  it('negotiates the protocol version: echoes a known one, offers the newest otherwise', async () => {
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05']) {
      const reply = await post(rpc(0, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '0' } }));
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', id: 0, result: { protocolVersion: version, capabilities: { tools: {} }, serverInfo: { name: 'harness-bridge' } } });
    }
    const future = await post(rpc('a', 'initialize', { protocolVersion: '2099-01-01' }));
    expect(future.json).toMatchObject({ id: 'a', result: { protocolVersion: '2025-11-25' } });
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    expect((await post(rpc(2, 'ping'))).json).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    // Claude's first message: a probe for a newer revision, answered "method not found" (it then initializes).
    const probe = await post(rpc('server-discover-probe-1', 'server/discover', { _meta: {} }));
    expect(probe).toMatchObject({ status: 200, json: { id: 'server-discover-probe-1', error: { code: -32601 } } });
  });

  it('lists the running turn’s tools only: a new turn’s start frame replaces the last one’s (least privilege)', async () => {
    expect((await post(rpc(1, 'tools/list'))).json).toEqual({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
    h.endpoint.setTurnTools([echoTool, { name: 'bare' }]);
    const first = listedSchema.parse((await post(rpc(2, 'tools/list'))).json);
    expect(first.result.tools.map((t) => t.name)).toEqual(['echo_upper', 'bare']);
    expect(first.result.tools[1]!.inputSchema).toEqual({ type: 'object' });
    h.endpoint.setTurnTools([{ name: 'later', description: 'from turn 2' }, { ...echoTool, description: 'v2' }]);
    const listed = listedSchema.parse((await post(rpc(3, 'tools/list'))).json);
    expect(listed.result.tools.map((t) => t.name)).toEqual(['later', 'echo_upper']);
    expect(listed.result.tools[1]).toEqual({ name: 'echo_upper', description: 'v2', inputSchema: echoTool.inputSchema });
    // A tool of an earlier turn is no longer callable.
    const stale = await post(rpc(4, 'tools/call', { name: 'bare', arguments: {} }));
    expect(stale.json).toMatchObject({ id: 4, error: { code: -32602 } });
  });

  it('bounds the listed tools (the last ones kept)', async () => {
    const small = makeEndpoint({ limits: { maxListedTools: 2 } });
    small.endpoint.setTurnTools([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    await small.endpoint.listen();
    try {
      const listed = listedSchema.parse((await post(rpc(1, 'tools/list'), { url: small.endpoint.url, token: small.endpoint.token })).json);
      expect(listed.result.tools.map((t) => t.name)).toEqual(['b', 'c']);
    } finally {
      await small.endpoint.close();
    }
  });

  it('refuses a wrong, missing or other token with 401 before any JSON-RPC', async () => {
    h.endpoint.setTurnTools([echoTool]);
    const other = makeEndpoint();
    const call = rpc(1, 'tools/call', { name: 'echo_upper', arguments: { text: 'x' } });
    for (const token of [null, 'nope', `${h.endpoint.token}x`, h.endpoint.token.slice(1), other.endpoint.token, '']) {
      const reply = await post(call, { token });
      expect(reply.status).toBe(401);
      expect(reply.text).toBe('');
    }
    // The token only counts in the header, never in the query string.
    const query = await fetch(`${h.endpoint.url}?token=${h.endpoint.token}`, { method: 'POST', body: JSON.stringify(rpc(1, 'ping')) });
    expect(query.status).toBe(401);
    const get = await fetch(h.endpoint.url, { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(401);
    expect(h.records).toEqual([]);
    expect(h.calls.size).toBe(0);
  });

  it('answers GET/DELETE with 405 and other paths with 404 (authenticated)', async () => {
    const headers = { authorization: `Bearer ${h.endpoint.token}` };
    expect((await fetch(h.endpoint.url, { headers: { ...headers, accept: 'text/event-stream' } })).status).toBe(405);
    expect((await fetch(h.endpoint.url, { method: 'DELETE', headers })).status).toBe(405);
    expect((await fetch(h.endpoint.url.replace('/mcp', '/other'), { method: 'POST', headers, body: '{}' })).status).toBe(404);
  });

  it('refuses an oversized body with 413 and keeps serving', async () => {
    const small = makeEndpoint({ limits: { maxMcpBodyBytes: 1024 } });
    await small.endpoint.listen();
    small.endpoint.setTurnTools([echoTool]);
    try {
      const big = rpc(1, 'tools/call', { name: 'echo_upper', arguments: { text: 'x'.repeat(4096) } });
      const reply = await post(big, { url: small.endpoint.url, token: small.endpoint.token });
      expect(reply.status).toBe(413);
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(small.records).toEqual([]);
      // Chunked (no content-length): refused while streaming.
      const chunked = await fetch(small.endpoint.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${small.endpoint.token}` },
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < 8; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(512)));
            controller.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      expect(chunked.status).toBe(413);
      const ping = await post(rpc(2, 'ping'), { url: small.endpoint.url, token: small.endpoint.token });
      expect(ping.json).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    } finally {
      await small.endpoint.close();
    }
  });

  it('answers malformed JSON-RPC with JSON-RPC errors and keeps working', async () => {
    const notJson = await post('{"jsonrpc":"2.0",', { raw: true });
    expect(notJson).toMatchObject({ status: 400, json: { id: null, error: { code: -32700 } } });
    const batch = await post([rpc(1, 'ping'), rpc(2, 'ping')]);
    expect(batch).toMatchObject({ status: 400, json: { error: { code: -32600 } } });
    const noVersion = await post({ id: 7, method: 'ping' });
    expect(noVersion).toMatchObject({ status: 400, json: { id: 7, error: { code: -32600 } } });
    const wrongTypes = await post({ jsonrpc: '2.0', id: {}, method: 42 });
    expect(wrongTypes).toMatchObject({ status: 400, json: { id: null, error: { code: -32600 } } });
    const neither = await post({ jsonrpc: '2.0', id: 3 });
    expect(neither).toMatchObject({ status: 400, json: { id: 3, error: { code: -32600 } } });
    expect((await post(rpc(4, 'initialize', {}))).json).toMatchObject({ id: 4, error: { code: -32602 } });
    expect((await post(rpc(5, 'tools/call', { arguments: {} }))).json).toMatchObject({ id: 5, error: { code: -32602 } });
    expect((await post(rpc(6, 'tools/call', { name: 'echo_upper', arguments: 'text' }))).json).toMatchObject({ id: 6, error: { code: -32602 } });
    expect((await post(rpc(8, 'tools/call', { name: 'not_a_tool', arguments: {} }))).json).toMatchObject({ id: 8, error: { code: -32602, message: 'unknown tool: not_a_tool' } });
    expect((await post(rpc(9, 'resources/list'))).json).toMatchObject({ id: 9, error: { code: -32601 } });
    // A response to a request we never sent, and an unknown notification: accepted, ignored.
    expect((await post({ jsonrpc: '2.0', id: 1, result: {} })).status).toBe(202);
    expect((await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })).status).toBe(202);
    expect(h.records).toEqual([]);
    expect((await post(rpc(10, 'ping'))).json).toEqual({ jsonrpc: '2.0', id: 10, result: {} });
  });

  it('turns tools/call into a journaled tool-call, waits for the host, journals the result and answers', async () => {
    h.endpoint.setTurnTools([echoTool]);
    const pending = post(rpc(2, 'tools/call', { name: 'echo_upper', arguments: { text: 'hello mcp' }, _meta: { progressToken: 2 } }));
    await eventually(() => h.calls.size === 1, 5_000, 'a pending call');
    expect(h.records).toEqual([{ seq: 11, draft: { kind: 'tool-call', turnId: 't1', data: { callId: 'mcp-11', name: 'echo_upper', input: { text: 'hello mcp' } } } }]);
    expect([...h.calls.keys()]).toEqual(['mcp-11']);
    h.turn.id = null; // the call keeps the turn it was made in, even if the result arrives after that turn ended
    answer('mcp-11', 'HELLO MCP');
    const reply = await pending;
    expect(reply).toMatchObject({ status: 200, json: { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'HELLO MCP' }], isError: false } } });
    expect(h.records[1]).toEqual({ seq: 12, draft: { kind: 'tool-result', turnId: 't1', data: { callId: 'mcp-11', output: 'HELLO MCP', isError: false } } });
    expect(h.endpoint.pendingCount).toBe(0);

    h.turn.id = 't2';
    const second = post(rpc(3, 'tools/call', { name: 'echo_upper' }));
    await eventually(() => h.calls.has('mcp-13'), 5_000, 'the second call');
    answer('mcp-13', { reason: 'denied', code: 7 }, true);
    expect((await second).json).toMatchObject({ id: 3, result: { content: [{ type: 'text', text: '{"reason":"denied","code":7}' }], isError: true } });
    expect(h.records[2]!.draft).toMatchObject({ turnId: 't2', data: { callId: 'mcp-13', input: {} } });
    expect(h.records[3]!.draft).toMatchObject({ kind: 'tool-result', turnId: 't2', data: { isError: true } });
  });

  it('waits for the host before answering (write before send)', async () => {
    let release!: () => void;
    const gate = makeEndpoint({ flush: () => new Promise<void>((resolve) => (release = resolve)) });
    await gate.endpoint.listen();
    gate.endpoint.setTurnTools([echoTool]);
    try {
      let settled = false;
      const pending = post(rpc(1, 'tools/call', { name: 'echo_upper', arguments: {} }), { url: gate.endpoint.url, token: gate.endpoint.token }).then((r) => {
        settled = true;
        return r;
      });
      await eventually(() => gate.calls.size === 1, 5_000, 'a pending call');
      const entry = gate.calls.get('mcp-11')!;
      gate.calls.delete('mcp-11');
      if (entry.kind === 'tool-call') entry.answer({ type: 'tool-result', callId: 'mcp-11', output: 'ok' });
      await sleep(100);
      expect(settled).toBe(false); // the tool-result record is not on disk yet
      release();
      expect((await pending).json).toMatchObject({ result: { content: [{ text: 'ok' }] } });
    } finally {
      await gate.endpoint.close();
    }
  });

  it('refuses a call with no running turn, and beyond maxPendingCalls, without journaling', async () => {
    h.endpoint.setTurnTools([echoTool]);
    h.turn.id = null;
    const idle = await post(rpc(1, 'tools/call', { name: 'echo_upper', arguments: {} }));
    expect(idle.json).toMatchObject({ result: { isError: true, content: [{ text: expect.stringContaining('no turn is running') }] } });
    expect(h.records).toEqual([]);

    const one = makeEndpoint({ limits: { maxPendingCalls: 1 } });
    await one.endpoint.listen();
    one.endpoint.setTurnTools([echoTool]);
    try {
      const opts = { url: one.endpoint.url, token: one.endpoint.token };
      const first = post(rpc(1, 'tools/call', { name: 'echo_upper', arguments: {} }), opts);
      await eventually(() => one.calls.size === 1, 5_000, 'the first call');
      const second = await post(rpc(2, 'tools/call', { name: 'echo_upper', arguments: {} }), opts);
      expect(second.json).toMatchObject({ id: 2, result: { isError: true, content: [{ text: expect.stringContaining('too many pending') }] } });
      expect(one.records).toHaveLength(1);
      const entry = one.calls.get('mcp-11')!;
      one.calls.delete('mcp-11');
      if (entry.kind === 'tool-call') entry.answer({ type: 'tool-result', callId: 'mcp-11', output: 'done' });
      expect((await first).json).toMatchObject({ id: 1, result: { isError: false } });
    } finally {
      await one.endpoint.close();
    }
  });

  it('a relayed call (launch survive: through the keeper) outlives its request: the re-sent request gets the answer, nothing is journaled twice', async () => {
    h.endpoint.setTurnTools([echoTool]);
    const abort = new AbortController();
    const first = post(rpc(4, 'tools/call', { name: 'echo_upper', arguments: { text: 'x' } }), { signal: abort.signal, relay: 'k1-4' });
    await eventually(() => h.calls.size === 1, 5_000, 'a pending call');
    expect(h.records[0]!.draft).toMatchObject({ kind: 'tool-call', data: { callId: 'mcp-11', relay: 'k1-4' } });
    abort.abort(); // the keeper's connection broke (its bridge-side half, as when a bridge dies)
    await expect(first).rejects.toThrow();
    await sleep(50);
    expect([...h.calls.keys()], 'the call still waits for the host').toEqual(['mcp-11']);
    const again = post(rpc(4, 'tools/call', { name: 'echo_upper', arguments: { text: 'x' } }), { relay: 'k1-4' });
    await sleep(50);
    answer('mcp-11', 'X');
    expect((await again).json).toMatchObject({ id: 4, result: { content: [{ text: 'X' }], isError: false } });
    expect(h.records.map((r) => r.draft.kind), 'one call, one result').toEqual(['tool-call', 'tool-result']);
    expect(h.endpoint.pendingCount).toBe(0);
  });

  it('an adopting bridge answers a re-sent relayed request from the journal, or waits for the host; before it serves calls it says 503 (the keeper sends again)', async () => {
    const adopting = makeEndpoint();
    await adopting.endpoint.listen();
    adopting.endpoint.setTurnTools([echoTool]);
    try {
      const opts = { url: adopting.endpoint.url, token: adopting.endpoint.token };
      adopting.endpoint.adoptCalls([
        { callId: 'mcp-3', relay: 'k0-1', turnId: 't1', result: { output: 'FROM THE JOURNAL', isError: false } },
        { callId: 'mcp-5', relay: 'k0-2', turnId: 't1' },
      ]);
      expect([...adopting.calls.keys()], 'only the unanswered call waits for the host').toEqual(['mcp-5']);
      const journaled = await post(rpc(7, 'tools/call', { name: 'echo_upper', arguments: {} }), { ...opts, relay: 'k0-1' });
      expect(journaled.json).toMatchObject({ id: 7, result: { content: [{ text: 'FROM THE JOURNAL' }], isError: false } });
      const waiting = post(rpc(8, 'tools/call', { name: 'echo_upper', arguments: {} }), { ...opts, relay: 'k0-2' });
      await sleep(50);
      const entry = adopting.calls.get('mcp-5')!;
      adopting.calls.delete('mcp-5');
      if (entry.kind === 'tool-call') entry.answer({ type: 'tool-result', callId: 'mcp-5', output: 'FROM THE HOST' });
      expect((await waiting).json).toMatchObject({ id: 8, result: { content: [{ text: 'FROM THE HOST' }] } });
      expect(adopting.records.map((r) => [r.draft.kind, (r.draft.data as { callId?: string }).callId]), 'no new call; the host\'s result journaled').toEqual([['tool-result', 'mcp-5']]);
    } finally {
      await adopting.endpoint.close();
    }

    const early = new McpEndpoint({ record: () => 1, nextSeq: () => 1, flush: () => Promise.resolve(), turnId: () => 't1', log: h.logger.child('early') });
    await early.listen();
    early.setTurnTools([echoTool]);
    try {
      const notYet = await post(rpc(1, 'tools/call', { name: 'echo_upper', arguments: {} }), { url: early.url, token: early.token, relay: 'k0-3' });
      expect(notYet.status, 'adoption under way: not an answer the keeper would pass on').toBe(503);
    } finally {
      await early.close();
    }
  });

  it('drops a call from pending when the CLI hangs up, recording nothing new', async () => {
    h.endpoint.setTurnTools([echoTool]);
    const abort = new AbortController();
    const pending = post(rpc(1, 'tools/call', { name: 'echo_upper', arguments: { text: 'x' } }), { signal: abort.signal });
    await eventually(() => h.calls.size === 1, 5_000, 'a pending call');
    abort.abort();
    await expect(pending).rejects.toThrow();
    await eventually(() => h.calls.size === 0 && h.endpoint.pendingCount === 0, 5_000, 'the call to be dropped');
    expect(h.records.map((r) => r.draft.kind)).toEqual(['tool-call']);
  });

  it('keeps a long wait alive with leading whitespace; the body still parses', async () => {
    const slow = makeEndpoint({ limits: { keepaliveIntervalMs: 20 } });
    await slow.endpoint.listen();
    slow.endpoint.setTurnTools([echoTool]);
    try {
      const pending = post(rpc(1, 'tools/call', { name: 'echo_upper', arguments: {} }), { url: slow.endpoint.url, token: slow.endpoint.token });
      await eventually(() => slow.calls.size === 1, 5_000, 'a pending call');
      await sleep(150);
      const entry = slow.calls.get('mcp-11')!;
      slow.calls.delete('mcp-11');
      if (entry.kind === 'tool-call') entry.answer({ type: 'tool-result', callId: 'mcp-11', output: 'late' });
      const reply = await pending;
      expect(reply.status).toBe(200);
      expect(reply.text).toMatch(/^ {3,}\{/);
      expect(reply.json).toMatchObject({ id: 1, result: { content: [{ text: 'late' }] } });
    } finally {
      await slow.endpoint.close();
    }
  });

  it('close() answers waiting calls with an error and empties pending', async () => {
    h.endpoint.setTurnTools([echoTool]);
    const pending = post(rpc(1, 'tools/call', { name: 'echo_upper', arguments: {} }));
    await eventually(() => h.calls.size === 1, 5_000, 'a pending call');
    await h.endpoint.close();
    expect((await pending).json).toMatchObject({ id: 1, error: { code: -32603, message: 'the bridge is stopping' } });
    expect(h.calls.size).toBe(0);
  });

  it('withMcp feeds start tools to the endpoint and merges its env over the launch env', async () => {
    const started: { launch: LaunchSpec; meta: unknown }[] = [];
    const port: SupervisorPort = {
      state: 'idle',
      turnId: null,
      start: (_turnId, launch, _input, meta) => {
        started.push({ launch, meta });
        return { ok: true };
      },
      write: () => ({ ok: true }),
      signal: () => ({ ok: true }),
      abort: () => ({ ok: true }),
    };
    const wrapped = withMcp(port, h.endpoint);
    expect(wrapped.state).toBe('idle');
    const launch: LaunchSpec = {
      argv: ['cli'],
      env: { KEEP: '1', [MCP_ENV_V1.tokenEnvVar]: 'stale' },
      stdin: 'null',
      io: { mode: 'pipes' },
      lifetime: 'turn',
      turnEnd: [],
      interrupt: { signal: 'SIGINT' },
    };
    await wrapped.start('t9', launch, undefined, { tools: [echoTool] });
    expect(started[0]!.launch.env).toEqual({ KEEP: '1', [MCP_ENV_V1.urlEnvVar]: h.endpoint.url, [MCP_ENV_V1.tokenEnvVar]: h.endpoint.token });
    expect(started[0]!.launch.argv).toEqual(['cli']);
    expect(started[0]!.meta).toEqual({ tools: [echoTool] });
    expect(launch.env![MCP_ENV_V1.tokenEnvVar]).toBe('stale'); // the host's object is not mutated
    const listed = listedSchema.parse((await post(rpc(1, 'tools/list'))).json);
    expect(listed.result.tools.map((t) => t.name)).toEqual(['echo_upper']);
  });

  it('never writes the token to its log', async () => {
    h.endpoint.setTurnTools([echoTool]);
    await post(rpc(1, 'initialize', { protocolVersion: '2025-11-25' }));
    await post(rpc(2, 'ping'), { token: 'wrong-token-wrong-token' });
    const pending = post(rpc(3, 'tools/call', { name: 'echo_upper', arguments: {} }));
    await eventually(() => h.calls.size === 1, 5_000, 'a pending call');
    answer('mcp-11', 'ok');
    await pending;
    h.logger.flushSync();
    await sleep(50);
    const log = readdirSync(h.dir).map((f) => readFileSync(join(h.dir, f), 'utf8')).join('\n');
    expect(log).toContain('mcp: tool call answered');
    expect(log).not.toContain(h.endpoint.token);
  });
});

describe('MCP endpoint through the real bridge', () => {
  const mcpClient = join(repoRoot, 'test/fixtures/mcp-client.mjs');
  let dir: string;
  let bridge: RunningBridge | null = null;

  beforeEach(() => {
    dir = tempDir('hb-mcp-bridge-');
  });
  afterEach(async () => {
    await bridge?.kill();
    bridge = null;
    rmSync(dir, { recursive: true, force: true });
  });

  // dir is the CLI's project (cwd): under the bridge's default isolation the one place besides its own dirs it may write.
  const clientLaunch = (args: string[]) => ({ argv: [process.execPath, mcpClient, '--secrets-out', join(dir, 'secrets.json'), ...args], cwd: dir });
  const secrets = (): { url: string; token: string } =>
    z.object({ url: z.string(), token: z.string().min(32) }).parse(JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')));
  const stdoutStep = (records: JournalRecord[], step: string): Record<string, unknown> | undefined => {
    for (const r of records) {
      if (r.kind !== 'stdout') continue;
      const line = z.record(z.string(), z.unknown()).safeParse(JSON.parse(r.data.text));
      if (line.success && line.data.step === step) return line.data;
    }
    return undefined;
  };
  /** Every file in the state dir, plus the bridge's stderr: where a token must never appear. */
  const everythingWritten = (b: RunningBridge): string =>
    readdirSync(b.stateDir, { recursive: true, withFileTypes: true }) // the CLI's own dirs (home, tmp) included
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
      .join('\n') + b.stderr();

  it('a CLI calls a host tool: the host sees the tool-call record, answers, and the CLI gets the answer', async () => {
    bridge = await startBridge({ args: ['--host', '0.0.0.0'] });
    const { client, hello } = await connectClient(bridge);
    expect(JSON.stringify(hello)).not.toMatch(/mcp/i);
    await client.attach(0);
    const start = await client.request({
      type: 'start',
      id: 's1',
      turnId: 't1',
      launch: clientLaunch(['--call', 'echo_upper', '--args', '{"text":"hello mcp"}']),
      tools: [echoTool],
    });
    expect(start).toMatchObject({ type: 'ack' });
    const call = await client.waitForRecord((r) => r.kind === 'tool-call');
    if (call.kind !== 'tool-call') throw new Error('unreachable');
    expect(call).toMatchObject({ turnId: 't1', data: { callId: `mcp-${call.seq}`, name: 'echo_upper', input: { text: 'hello mcp' } } });
    const listed = stdoutStep(client.records(), 'tools/list');
    expect(listed).toMatchObject({ status: 200, body: { result: { tools: [{ name: 'echo_upper', inputSchema: echoTool.inputSchema }] } } });
    expect(stdoutStep(client.records(), 'initialize')).toMatchObject({ body: { result: { protocolVersion: '2025-06-18' } } });

    expect(await client.request({ type: 'tool-result', id: 'r1', callId: call.data.callId, output: 'HELLO MCP' })).toMatchObject({ type: 'ack' });
    await client.waitForRecord((r) => r.kind === 'turn-end');
    const records = client.records();
    expect(stdoutStep(records, 'tools/call')).toMatchObject({ status: 200, body: { result: { content: [{ type: 'text', text: 'HELLO MCP' }], isError: false } } });
    const kinds = records.filter((r) => r.turnId === 't1').map((r) => r.kind);
    expect(kinds.indexOf('tool-call')).toBeLessThan(kinds.indexOf('tool-result'));
    expect(records.find((r) => r.kind === 'tool-result')).toMatchObject({ turnId: 't1', data: { callId: call.data.callId, output: 'HELLO MCP', isError: false } });
    expect(records.find((r) => r.kind === 'turn-end')).toMatchObject({ data: { reason: 'exit', code: 0 } });

    // The same answer re-sent (the host lost the ack): acked, journaled once. Another answer, or a call never asked: unknown-call.
    expect(await client.request({ type: 'tool-result', id: 'r1b', callId: call.data.callId, output: 'HELLO MCP' })).toMatchObject({ type: 'ack' });
    expect(await client.request({ type: 'tool-result', id: 'r2', callId: call.data.callId, output: 'again' })).toMatchObject({ type: 'error', code: 'unknown-call' });
    expect(await client.request({ type: 'tool-result', id: 'r2b', callId: call.data.callId, output: 'HELLO MCP', isError: true })).toMatchObject({ type: 'error', code: 'unknown-call' });
    expect(client.records().filter((r) => r.kind === 'tool-result')).toHaveLength(1);
    expect(await client.request({ type: 'tool-result', id: 'r3', callId: 'mcp-999', output: 'x' })).toMatchObject({ type: 'error', code: 'unknown-call' });

    // The endpoint: loopback only even with the ws on 0.0.0.0, its own token (the host's is refused), nowhere on disk.
    const { url, token } = secrets();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(token).not.toBe(bridge.token);
    const ping = JSON.stringify(rpc(1, 'ping'));
    expect((await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${bridge.token}` }, body: ping })).status).toBe(401);
    expect((await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: ping })).status).toBe(200);
    const external = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === 'IPv4' && !a.internal);
    if (external !== undefined) await expect(fetch(url.replace('127.0.0.1', external.address), { method: 'POST', body: ping })).rejects.toThrow();
    expect(everythingWritten(bridge)).not.toContain(token);
    expect(JSON.stringify(records)).not.toContain(token);
    await client.close();
  });

  it('a call made while no host is attached waits, is replayed to the next host and answered then', async () => {
    bridge = await startBridge();
    const first = await connectClient(bridge);
    await first.client.attach(0);
    const start = await first.client.request({
      type: 'start',
      id: 's1',
      turnId: 't1',
      launch: clientLaunch(['--call', 'echo_upper', '--args', '{"text":"while away"}', '--delay-ms', '400']),
      tools: [echoTool],
    });
    expect(start).toMatchObject({ type: 'ack' });
    const cursor = first.client.records().at(-1)!.seq;
    await first.client.close();

    const journal = join(bridge.stateDir, 'journal.ndjson');
    await eventually(() => readFileSync(journal, 'utf8').includes('"kind":"tool-call"'), 15_000, 'the tool-call record on disk');
    await sleep(300); // the CLI keeps waiting with nobody attached
    expect(readFileSync(journal, 'utf8')).not.toContain('"kind":"tool-result"');

    const second = await connectClient(bridge);
    const { records } = await second.client.attach(cursor);
    const call = records.find((r) => r.kind === 'tool-call');
    if (call?.kind !== 'tool-call') throw new Error(`no tool-call in the replay: ${JSON.stringify(records)}`);
    expect(call).toMatchObject({ turnId: 't1', data: { name: 'echo_upper', input: { text: 'while away' } } });
    expect(await second.client.request({ type: 'tool-result', id: 'r1', callId: call.data.callId, output: { upper: 'WHILE AWAY' } })).toMatchObject({ type: 'ack' });
    await second.client.waitForRecord((r) => r.kind === 'turn-end');
    expect(stdoutStep(second.client.records(), 'tools/call')).toMatchObject({
      body: { result: { content: [{ type: 'text', text: '{"upper":"WHILE AWAY"}' }], isError: false } },
    });
    expect(everythingWritten(bridge)).not.toContain(secrets().token);
    await second.client.close();
  });

  it('a CLI that hangs up mid-call is dropped: nothing new recorded, a late answer is unknown-call', async () => {
    bridge = await startBridge();
    const { client } = await connectClient(bridge);
    await client.attach(0);
    // A shell CLI whose MCP client is killed mid-call (its HTTP request closes), while the turn goes on.
    // Each step waits for the test's go (a file), not a fixed sleep: a sleep lost the race on a loaded machine.
    const dir = tempDir('hb-mcp-go-');
    const waitFor = (name: string) => `i=0; while [ ! -e ${JSON.stringify(join(dir, name))} ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done`;
    const script = `node ${JSON.stringify(mcpClient)} --call echo_upper --args '{"text":"x"}' & pid=$!; ${waitFor('kill')}; kill -9 $pid; wait $pid; ${waitFor('end')}; echo after`;
    await client.request({ type: 'start', id: 's1', turnId: 't1', launch: { argv: ['sh', '-c', script] }, tools: [echoTool] });
    const call = await client.waitForRecord((r) => r.kind === 'tool-call');
    if (call.kind !== 'tool-call') throw new Error('unreachable');
    writeFileSync(join(dir, 'kill'), '');
    const log = join(bridge.stateDir, logFileName);
    await eventually(() => existsSync(log) && readFileSync(log, 'utf8').includes('the CLI hung up; call dropped'), 15_000, 'the bridge dropping the call');
    // Dropped while its turn still runs: the late answer is refused for the hang-up, not for the turn's end.
    expect(await client.request({ type: 'tool-result', id: 'r1', callId: call.data.callId, output: 'late' })).toMatchObject({ type: 'error', code: 'unknown-call' });
    writeFileSync(join(dir, 'end'), '');
    await client.waitForRecord((r) => r.kind === 'turn-end');
    expect(client.records().filter((r) => r.kind === 'tool-result')).toEqual([]);
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
