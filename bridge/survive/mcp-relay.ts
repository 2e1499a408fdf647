// The keeper's MCP relay (launch `survive`; docs/bridge-internals.md#survive-mcp-relay). A kept
// CLI's MCP URL points here, at its keeper, not at the bridge, so a host tool call outlives a
// SIGKILLed bridge: each request goes on to the current bridge's endpoint carrying an
// `x-hb-relay` id; when that bridge goes away before its answer ends, the request is held and sent
// again, with the same id, to the bridge that comes next (the `up` line on the keeper socket names
// its endpoint port). The bridge journals the id with the tool call, so the adopting bridge answers
// the re-sent request from the journal or from the host's answer, never as a new call: the CLI
// gets one answer. Keeper mode only (node:http is imported when the relay starts: bridge cold start
// does not pay for it).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from 'node:net';
import { createTokenCheck } from '../auth/token-check.ts';
import { readBoundedBody } from '../mcp/bounded-body.ts';
import { bearer } from '../mcp/mcp-shapes.ts';

export type RelaySpec = {
  /** The loopback port the CLI's MCP URL names (chosen by the bridge, which set the CLI's env). */
  listenPort: number;
  /** The spawning bridge's endpoint port, until an `up` line names another. */
  upstreamPort: number;
  /** Prefix of every relay id (the keeper dir's id): unique for the journal's life. */
  idPrefix: string;
  maxBodyBytes: number;
  maxPending: number;
  keepaliveIntervalMs: number;
};

export const RELAY_HEADER = 'x-hb-relay';
/** The bridge's answer "not serving relayed calls yet" (adoption under way): held and sent again. */
export const RELAY_RETRY_STATUS = 503;

/** Headers the endpoint reads; nothing else crosses. */
const forwarded = ['authorization', 'content-type', 'accept', 'origin', 'mcp-protocol-version'] as const;
const maxBackoffMs = 1_000;

type Held = {
  id: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  res: ServerResponse;
  /** A tools/call may wait long for the host: it gets the endpoint's keepalive while no bridge sends one. */
  call: boolean;
  attempt: number;
  tries: number;
  timer: NodeJS.Timeout | null;
  keepalive: NodeJS.Timeout | null;
  abort: (() => void) | null;
  done: boolean;
};

export type McpRelay = { setUpstream(port: number): void; close(): void };

/** `bound`: a server already listening on `spec.listenPort` (kept from a jail started ahead), whose handle the relay takes. */
export async function startMcpRelay(spec: RelaySpec, token: string | undefined, bound?: Server): Promise<McpRelay> {
  const { createServer, request } = await import('node:http');
  const tokenMatches = token === undefined ? undefined : createTokenCheck(token);
  const held = new Map<string, Held>();
  let upstream = spec.upstreamPort;
  let counter = 0;

  const finish = (entry: Held): void => {
    entry.done = true;
    if (entry.timer) clearTimeout(entry.timer);
    if (entry.keepalive) clearInterval(entry.keepalive);
    entry.abort?.();
    held.delete(entry.id);
  };

  const retry = (entry: Held, attempt: number): void => {
    if (entry.done || entry.attempt !== attempt || entry.timer !== null) return; // a later attempt, or this one's retry, is under way
    entry.abort = null;
    const wait = Math.min(maxBackoffMs, 50 * 2 ** Math.min(entry.tries, 5));
    entry.timer = setTimeout(() => send(entry), wait);
  };

  const send = (entry: Held): void => {
    if (entry.done) return;
    entry.timer = null;
    const attempt = ++entry.attempt;
    entry.tries += 1;
    const out = request({
      host: '127.0.0.1',
      port: upstream,
      method: 'POST',
      path: entry.path,
      headers: { ...entry.headers, [RELAY_HEADER]: entry.id, 'content-length': entry.body.length },
    });
    entry.abort = () => out.destroy();
    out.on('error', () => retry(entry, attempt));
    out.on('response', (up: IncomingMessage) => {
      const status = up.statusCode ?? 502;
      if (status === RELAY_RETRY_STATUS) {
        up.resume();
        up.on('end', () => retry(entry, attempt));
        up.on('error', () => retry(entry, attempt));
        return;
      }
      // Leading whitespace (the endpoint's keepalive) goes on at once; the JSON itself only whole, so
      // a bridge dying mid-answer never leaves half an answer in front of the next bridge's.
      const body: Buffer[] = [];
      up.on('data', (chunk: Buffer) => {
        if (body.length === 0 && /^\s*$/.test(chunk.toString('latin1'))) {
          head(entry.res, status, up.headers['content-type']);
          entry.res.write(chunk);
        } else body.push(chunk);
      });
      up.on('end', () => {
        if (entry.done || entry.attempt !== attempt) return;
        head(entry.res, status, up.headers['content-type']);
        entry.res.end(Buffer.concat(body));
        finish(entry);
      });
      up.on('close', () => {
        if (!up.complete) retry(entry, attempt);
      });
      up.on('error', () => undefined);
    });
    out.end(entry.body);
  };

  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    req.on('error', () => undefined);
    if (tokenMatches && !tokenMatches(bearer(req))) {
      res.writeHead(401, { 'www-authenticate': 'Bearer', connection: 'close', 'content-length': 0 }).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-length': 0 }).end();
      return;
    }
    if (held.size >= spec.maxPending) {
      res.writeHead(503, { connection: 'close', 'content-length': 0 }).end();
      return;
    }
    const tooLarge = (): void => void res.writeHead(413, { connection: 'close', 'content-length': 0 }).end();
    readBoundedBody(req, spec.maxBodyBytes, (body) => {
      const headers: Record<string, string> = {};
      for (const name of forwarded) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const entry: Held = {
        id: `${spec.idPrefix}-${++counter}`,
        path: req.url ?? '/',
        headers,
        body,
        res,
        call: body.includes('"tools/call"'),
        attempt: 0,
        tries: 0,
        timer: null,
        keepalive: null,
        abort: null,
        done: false,
      };
      held.set(entry.id, entry);
      if (entry.call) {
        entry.keepalive = setInterval(() => {
          head(res, 200, 'application/json');
          res.write(' ');
        }, spec.keepaliveIntervalMs);
      }
      res.on('close', () => {
        if (!entry.done) finish(entry); // the CLI hung up: the bridge drops the call when its request closes
      });
      send(entry);
    }, tooLarge);
  });
  server.maxConnections = spec.maxPending * 2;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const listening = (): void => {
      server.off('error', reject);
      server.on('error', () => undefined);
      resolve({
        setUpstream(port) {
          upstream = port;
          for (const entry of held.values()) {
            if (entry.abort !== null || entry.done) continue; // in flight to a live bridge
            if (entry.timer) clearTimeout(entry.timer);
            entry.tries = 0;
            send(entry);
          }
        },
        close() {
          for (const entry of [...held.values()]) finish(entry);
          server.close(); // a port bound ahead too: the relay's server holds its handle
        },
      });
    };
    // A port bound ahead (a jail started ahead: jail-ahead.ts) is taken over as it is; else it is bound now.
    if (bound !== undefined) server.listen(bound, listening);
    else server.listen(spec.listenPort, '127.0.0.1', listening);
  });
}

function head(res: ServerResponse, status: number, contentType: string | string[] | undefined): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': typeof contentType === 'string' ? contentType : 'application/json', 'cache-control': 'no-store' });
}
