// JSON-RPC 2.0 as the MCP endpoint speaks it over HTTP: message schemas, error codes, result and
// error replies, and sendJson, which writes a reply as the HTTP response (also after keepalive
// spaces). What the methods do is endpoint.ts's.
import type { ServerResponse } from 'node:http';
import * as z from 'zod';

/** JSON-RPC 2.0 error codes. */
export const rpcErrors = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internal: -32603 } as const;

const rpcIdSchema = z.union([z.string().max(256), z.number().int()]);
export const messageSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: rpcIdSchema.nullable().optional(),
  method: z.string().min(1).max(256).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});
export const initializeParamsSchema = z.object({ protocolVersion: z.string().max(64) });
export const callParamsSchema = z.object({ name: z.string().min(1).max(128), arguments: z.record(z.string(), z.unknown()).optional() });

export type RpcId = z.infer<typeof rpcIdSchema>;
export type RpcReply = { result: unknown } | { error: { code: number; message: string } };

export function rpcResult(id: RpcId, result: unknown): { jsonrpc: '2.0'; id: RpcId } & RpcReply {
  return { jsonrpc: '2.0', id, result };
}

export function rpcError(id: RpcId | null, code: number, message: string): { jsonrpc: '2.0'; id: RpcId | null } & RpcReply {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** The id of an invalid message, when it has a usable one (so the client can match the error). */
export function idOf(json: unknown): RpcId | null {
  if (typeof json !== 'object' || json === null || !('id' in json)) return null;
  const id = rpcIdSchema.safeParse(json.id);
  return id.success ? id.data : null;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  if (res.headersSent) {
    res.end(text); // keepalive already sent 200 and some spaces
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' }).end(text);
}
