// Relay mode of the bridge file: `node bridge.mjs --relay <port | state dir>`.
// The host starts it through the sandbox's own exec stream when the sandbox
// exposes no port (docs/remote-providers.md): it connects to the bridge on
// 127.0.0.1 and pipes bytes both ways — its stdin to the socket, the socket to
// its stdout — so the host's WebSocket (upgrade, bearer token, frames) runs
// end to end through the exec stdio. It reads nothing of what it carries.
// A state dir instead of a port means "the bridge whose ready line is in
// DIR/bridge.json". Ends when either side ends; exit 69 (EX_UNAVAILABLE) when
// the bridge does not accept the connection, with the reason on stderr.
// `--base64-lines` after the target: both directions as base64 lines
// (protocol/v1/relay-framing.ts), for exec APIs that carry output as strings.
// Stage-1 cost: node:net and node:fs only.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { Base64LineDecoder, encodeBase64Line, relayFramingFlag, type RelayFraming } from '../../protocol/v1/relay-framing.ts';

const exitUsage = 64;
const exitUnavailable = 69;
const exitDataErr = 65;

/** The port a `--relay` argument names: digits are the port; anything else is a state dir holding bridge.json. */
export function relayPort(target: string): { ok: true; port: number } | { ok: false; message: string } {
  if (/^\d+$/.test(target)) {
    const port = Number(target);
    return port >= 1 && port <= 65_535 ? { ok: true, port } : { ok: false, message: `--relay port must be 1-65535, got ${target}` };
  }
  let text: string;
  try {
    text = readFileSync(join(target, 'bridge.json'), 'utf8');
  } catch (error) {
    return { ok: false, message: `no bridge.json in ${target}: ${(error as Error).message}` };
  }
  try {
    const port = (JSON.parse(text) as { port?: unknown }).port;
    if (typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65_535) return { ok: true, port };
  } catch {
    // fall through: a torn bridge.json names no port
  }
  return { ok: false, message: `${join(target, 'bridge.json')} names no port` };
}

export function runRelay(target: string, flag?: string): void {
  const found = relayPort(target);
  const framing: RelayFraming | undefined = flag === undefined ? 'bytes' : flag === relayFramingFlag['base64-lines'] ? 'base64-lines' : undefined;
  if (!found.ok || framing === undefined) {
    process.stderr.write(`harness-bridge relay: ${found.ok ? `unknown framing flag ${flag}` : found.message}\n`);
    process.exit(exitUsage);
  }
  const socket = connect({ port: found.port, host: '127.0.0.1', noDelay: true });
  let connected = false;
  socket.once('connect', () => {
    connected = true;
    if (framing === 'bytes') process.stdin.pipe(socket);
    else pipeBase64Lines(socket);
  });
  if (framing === 'bytes') socket.pipe(process.stdout);
  else socket.on('data', (chunk: Buffer) => process.stdout.write(encodeBase64Line(chunk)));
  // Pipes to stdout are written synchronously on Linux: once the socket is done, every byte is out.
  socket.once('close', () => process.exit(0));
  socket.on('error', (error) => {
    process.stderr.write(`harness-bridge relay: ${connected ? 'connection to' : 'cannot connect to'} 127.0.0.1:${found.port}: ${error.message}\n`);
    process.exit(connected ? 0 : exitUnavailable);
  });
  // The host closed the exec stream: let the bridge see the end (half close), it closes its side.
  process.stdin.once('end', () => socket.end());
  // The host went away (the exec stream's stdout is gone): nothing left to carry.
  process.stdout.on('error', () => {
    socket.destroy();
    process.exit(0);
  });
}

/** stdin's base64 lines, decoded, to the bridge; a line that is not base64 ends the relay (exit 65, EX_DATAERR). */
function pipeBase64Lines(socket: Socket): void {
  const decoder = new Base64LineDecoder();
  process.stdin.on('data', (piece: Buffer) => {
    let chunks: Buffer[];
    try {
      chunks = decoder.push(piece);
    } catch (error) {
      process.stderr.write(`harness-bridge relay: ${(error as Error).message}\n`);
      socket.destroy();
      process.exit(exitDataErr);
    }
    for (const chunk of chunks) if (!socket.write(chunk)) process.stdin.pause();
  });
  socket.on('drain', () => process.stdin.resume());
}
