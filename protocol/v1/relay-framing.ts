// How the exec transport's relay carries the host's socket bytes over a process's stdio
// (docs/remote-providers.md#exec-transport). `bytes`: as they are, for engines whose exec stdio is
// byte-exact (docker exec, the local provider). `base64-lines`: each chunk as one base64 line, both
// ways, for hosted exec APIs that hand a process's output over as strings (a WebSocket frame header
// is not text: decoded as UTF-8 it is lost) — only ASCII letters, digits, `+/=` and newlines travel.
// Shared by the relay (bridge/relay/relay.ts) and the host's socket (host/reach/exec-socket.ts).

export type RelayFraming = 'bytes' | 'base64-lines';

/** The relay's command-line flag for a framing (none for bytes: the relay's default). */
export const relayFramingFlag = { bytes: '', 'base64-lines': '--base64-lines' } as const satisfies Record<RelayFraming, string>;

/**
 * The longest base64 line either side accepts: a whole protocol payload (64 MiB, ws's maxPayload)
 * base64-encoded, plus slack. A longer line is not ours: the stream is corrupt, and the reader ends it.
 */
export const maxBase64LineChars = Math.ceil((64 * 1024 * 1024 * 4) / 3) + 1024;

/** One chunk as a base64 line. */
export function encodeBase64Line(chunk: Uint8Array): string {
  return `${Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64')}\n`;
}

/**
 * Splits a stream of base64 lines (in pieces of any size, as strings or bytes) back into the chunks
 * they carry. `push` returns the chunks its piece completed; it throws on a character that is not
 * base64 or on a line past maxBase64LineChars, naming it (the caller ends the stream).
 */
export class Base64LineDecoder {
  #pending = '';

  push(piece: string | Uint8Array): Buffer[] {
    const text = typeof piece === 'string' ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('latin1');
    const out: Buffer[] = [];
    let start = 0;
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
      const line = this.#pending + text.slice(start, newline);
      this.#pending = '';
      start = newline + 1;
      const chunk = decodeLine(line.endsWith('\r') ? line.slice(0, -1) : line);
      if (chunk.byteLength > 0) out.push(chunk);
    }
    this.#pending += text.slice(start);
    if (this.#pending.length > maxBase64LineChars) throw new Error(`relay framing: a base64 line longer than ${maxBase64LineChars} characters`);
    return out;
  }

  /** True when a line was started and not ended: the stream ended mid-chunk. */
  get partial(): boolean {
    return this.#pending.length > 0;
  }
}

const base64Line = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeLine(line: string): Buffer {
  if (line.length % 4 !== 0 || !base64Line.test(line)) {
    throw new Error(`relay framing: not a base64 line (${line.length} characters, starting ${JSON.stringify(line.slice(0, 24))})`);
  }
  return Buffer.from(line, 'base64');
}
