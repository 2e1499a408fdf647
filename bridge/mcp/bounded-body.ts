// A request body read up to a byte bound: the MCP endpoint's and the keeper relay's (bridge/survive/mcp-relay.ts).
import type { IncomingMessage } from 'node:http';

/** Collects `req`'s body; past `maxBytes`, `tooLarge` runs once and the rest is discarded, so `done` never runs. */
export function readBoundedBody(req: IncomingMessage, maxBytes: number, done: (body: Buffer) => void, tooLarge: () => void): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let refused = false;
  req.on('data', (chunk: Buffer) => {
    if (refused) return;
    bytes += chunk.length;
    if (bytes <= maxBytes) return void chunks.push(chunk);
    refused = true;
    chunks.length = 0;
    tooLarge();
  });
  req.on('end', () => {
    if (!refused) done(Buffer.concat(chunks, bytes));
  });
}
