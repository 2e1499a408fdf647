// The egress tunnel's frames (docs/remote-providers.md#egress-tunnel): a sandbox with no network
// carries its CLI's outbound connections to the host over an exec stream. Inside, the bridge file's
// `--egress-tunnel` mode listens on the sandbox's loopback as the CLI's proxy; each connection it
// accepts becomes a tunnel, its bytes carried as the frames below over the process's stdio, one JSON
// object a line (ASCII only: base64 data, so exec APIs that deliver output as strings carry it too).
// On the host each tunnel is one connection to the host's egress proxy, which reads the CONNECT,
// HTTP or SOCKS request and decides it under the session's network policy. Both ends validate every
// line against these schemas and end the stream on one that fails (TunnelProtocolError).
import * as z from 'zod';

export const EGRESS_TUNNEL_LIMITS = {
  /** Tunnels open at once over one stream; the sandbox side refuses (closes) a connection past it. */
  maxTunnels: 64,
  /** Bytes one data frame carries (before base64). */
  maxChunkBytes: 16 * 1024,
  /**
   * Bytes in flight per tunnel and direction: sent and not yet credited back. A side sends no more
   * until the other has written them on (its socket took them) and said so with `credit`, so a slow
   * reader on either side makes the other stop reading, never buffer without bound.
   */
  windowBytes: 256 * 1024,
  /** The longest line either side accepts: a full data frame with its envelope. */
  maxLineChars: Math.ceil((16 * 1024 * 4) / 3) + 256,
} as const;

const idSchema = z.number().int().min(1).max(2 ** 31);
const base64Schema = z
  .string()
  .max(Math.ceil((EGRESS_TUNNEL_LIMITS.maxChunkBytes * 4) / 3) + 4)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/);

/** The sandbox side listens: the port the CLI's proxy variables name. */
const readySchema = z.object({ t: z.literal('ready'), port: z.number().int().min(1).max(65_535) }).strict();
/** The sandbox side accepted a connection: the host opens its end (a connection to its egress proxy). */
const openSchema = z.object({ t: z.literal('open'), id: idSchema }).strict();
/** Bytes of one tunnel, either way. */
const dataSchema = z.object({ t: z.literal('data'), id: idSchema, b64: base64Schema }).strict();
/** The receiver wrote this many bytes on: the sender may send that many more. */
const creditSchema = z.object({ t: z.literal('credit'), id: idSchema, bytes: z.number().int().min(1).max(EGRESS_TUNNEL_LIMITS.windowBytes) }).strict();
/** The sender's side ended its writing (a half close: the other direction goes on). */
const endSchema = z.object({ t: z.literal('end'), id: idSchema }).strict();
/** The tunnel is gone (its socket closed or failed); the receiver ends its side after what it holds. */
const closeSchema = z.object({ t: z.literal('close'), id: idSchema }).strict();

/** The sandbox side gave its port to a newer host's tunnel: it carries its open tunnels to their end, then exits; not to be started again. */
const handedOverSchema = z.object({ t: z.literal('handed-over') }).strict();

export const tunnelFrameSchema = z.discriminatedUnion('t', [readySchema, openSchema, dataSchema, creditSchema, endSchema, closeSchema, handedOverSchema]);
export type TunnelFrame = z.infer<typeof tunnelFrameSchema>;

/** A line that is not a tunnel frame, or a frame that breaks the limits: the stream is ended. */
export class TunnelProtocolError extends Error {
  readonly code = 'egress-tunnel-protocol';
  constructor(message: string) {
    super(message);
    this.name = 'TunnelProtocolError';
  }
}

export function encodeTunnelFrame(frame: TunnelFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/** Parses and validates one line (without its newline). */
export function decodeTunnelFrame(line: string): TunnelFrame {
  if (line.length > EGRESS_TUNNEL_LIMITS.maxLineChars) throw new TunnelProtocolError(`egress tunnel: a line of ${line.length} chars (at most ${EGRESS_TUNNEL_LIMITS.maxLineChars})`);
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    throw new TunnelProtocolError(`egress tunnel: not JSON: ${line.slice(0, 80)}`);
  }
  const parsed = tunnelFrameSchema.safeParse(json);
  if (!parsed.success) throw new TunnelProtocolError(`egress tunnel: not a frame: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'frame'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** Splits a stream (pieces of any size) into lines; throws on a line past the limit. */
export class TunnelLineSplitter {
  #pending = '';
  readonly #decoder = new TextDecoder();

  push(piece: Uint8Array | string): string[] {
    this.#pending += typeof piece === 'string' ? piece : this.#decoder.decode(piece, { stream: true });
    const lines = this.#pending.split('\n');
    this.#pending = lines.pop()!;
    if (this.#pending.length > EGRESS_TUNNEL_LIMITS.maxLineChars) throw new TunnelProtocolError(`egress tunnel: a line past ${EGRESS_TUNNEL_LIMITS.maxLineChars} chars`);
    return lines.filter((line) => line.length > 0);
  }
}
