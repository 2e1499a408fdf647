// How a connection's token is checked: where the request carries it
// (Authorization header, else ?token=) and a constant-time compare, lengths
// first. server.ts and mcp/endpoint.ts use these; the token itself comes from token-source.ts.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The token a request presents: `Authorization: Bearer <token>`, else `?token=` (for proxies that strip headers). */
export function presentedToken(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match ? match[1] : undefined;
  }
  const url = request.url ?? '';
  const query = url.indexOf('?');
  if (query < 0) return undefined;
  return new URLSearchParams(url.slice(query + 1)).get('token') ?? undefined;
}

/** A checker bound to the expected token: constant-time compare, lengths first. */
export function createTokenCheck(token: string): (presented: string | undefined) => boolean {
  const expected = Buffer.from(token, 'utf8');
  return (presented) => {
    if (presented === undefined) return false;
    const actual = Buffer.from(presented, 'utf8');
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  };
}
