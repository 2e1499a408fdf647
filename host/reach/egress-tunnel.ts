// The host's end of the egress tunnel (docs/remote-providers.md#egress-tunnel): the network of a
// sandbox that has none, policed here. Any session whose spawn gives stdin gets it: the bridge file's
// `--egress-tunnel` mode runs in the sandbox as the CLI's proxy, and each connection it accepts
// arrives as a tunnel (protocol/v1/egress-tunnel.ts) that this side joins to a connection to an
// egress proxy on this host's 127.0.0.1 — the same proxy, and so the same policy code, that polices
// a jailed CLI on the local provider (bridge/jail/egress-proxy.ts): CONNECT, HTTP and SOCKS; a host
// the policy does not allow gets 403 (`x-proxy-error: blocked-by-harness-bridge`); setPolicy applies
// to every connection from then on. When the exec stream ends (the process died, the host let go)
// every open tunnel ends both sides, and the stream is started again on the same port.
import { connect } from 'node:net';
import { EgressProxy, type EgressCounts } from '../../bridge/jail/egress-proxy.ts';
import { TunnelMux } from '../../protocol/v1/egress-tunnel-mux.ts';
import { TunnelLineSplitter, decodeTunnelFrame, encodeTunnelFrame, type TunnelFrame } from '../../protocol/v1/egress-tunnel.ts';
import type { NetworkPolicy } from '../../protocol/v1/network-policy.ts';
import type { ExecProcess } from './exec-socket.ts';

export type EgressTunnelSpawn = (options: { command: string; env?: Record<string, string>; stdin: true }) => PromiseLike<ExecProcess>;

export type EgressTunnelOptions = {
  /** The sandbox session's spawn, with stdin. */
  readonly spawn: EgressTunnelSpawn;
  /** The Node binary and the bridge file inside the sandbox. */
  readonly nodeCommand: string;
  readonly bridgeFile: string;
  /** The port the proxy listens on inside the sandbox (0: any; the first one taken is kept across restarts). */
  readonly port?: number;
  /**
   * A dir inside the sandbox, the host's own (the CLI cannot write it), where the sandbox's end keeps its pid: a newer
   * tunnel on the same port ends the one before it (a session resumed while another session object holds the tunnel).
   * Unset: no takeover; a start that finds the port held waits for it.
   */
  readonly pidDir?: string;
  readonly policy: NetworkPolicy;
  /** Restarts in a row that never got ready before the tunnel gives up. Default 5. */
  readonly maxFailedStarts?: number;
  /**
   * Hold the frames for the sandbox this long and send them as one stdin write (hosted exec APIs that bill
   * or rate-limit each write: docs/remote-providers.md#exec-transport). Default 0: each frame at once.
   */
  readonly batchWritesMs?: number;
  /** Held frames go at once at this many bytes. Default 256 KiB. */
  readonly maxBatchBytes?: number;
  readonly log?: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
};

export const egressTunnelShellCommand = 'exec "$HB_NODE" "$HB_FILE" --egress-tunnel "$HB_PORT"';

/** Starts that find the port taken before giving up (about 10 s in all). */
const portTakenAttempts = 14;

const quiet = { info: () => undefined, warn: () => undefined };

type Stream = { process: ExecProcess; mux: TunnelMux; writer: WritableStreamDefaultWriter<Uint8Array>; flush: () => void; done: Promise<void> };

export class EgressTunnel {
  readonly #options: EgressTunnelOptions;
  readonly #proxy: EgressProxy;
  #port: number;
  #stream: Stream | null = null;
  #closed = false;
  #failedStarts = 0;
  #starts = 0;
  #ready: Promise<void> | null = null;
  #lastError: string | undefined;
  #everReady = false;
  #stdinWrites = 0;
  #handedOver = false;
  #streamEnded: Promise<void> = Promise.resolve();

  private constructor(options: EgressTunnelOptions) {
    this.#options = options;
    this.#port = options.port ?? 0;
    this.#proxy = new EgressProxy(options.log ?? quiet);
    this.#proxy.setPolicy(options.policy);
  }

  /** Stdin writes made to the sandbox's end, over every stream (a hosted API bills or limits each). */
  get stdinWrites(): number {
    return this.#stdinWrites;
  }

  /** Starts the host's proxy and the sandbox's end; resolves once the sandbox's proxy listens. */
  static async start(options: EgressTunnelOptions): Promise<EgressTunnel> {
    const tunnel = new EgressTunnel(options);
    await tunnel.#proxy.listen(0);
    tunnel.#proxy.unref(); // the exec stream keeps the host alive while the sandbox's end runs, not this server
    // The port may still be held by the end a gone host left (it exits once the end of its stream
    // arrives): a start that finds it taken tries again, a bounded number of times.
    for (let attempt = 1; ; attempt++) {
      try {
        await tunnel.#open();
        return tunnel;
      } catch (error) {
        if (attempt < portTakenAttempts && /EADDRINUSE/.test((error as Error).message)) {
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
          continue;
        }
        await tunnel.close();
        throw error;
      }
    }
  }

  /** The port of the CLI's proxy inside the sandbox (`http://127.0.0.1:<port>` for HTTP(S)_PROXY, `socks5://…` too). */
  get port(): number {
    return this.#port;
  }

  get policy(): NetworkPolicy['mode'] {
    return this.#proxy.policyMode;
  }

  /** Decisions so far (allowed, refused by reason), as the proxy counts them. */
  get counts(): EgressCounts {
    return this.#proxy.counts;
  }

  /**
   * A newer host's tunnel took the port (a resume elsewhere, or a newer session object here): this one's end carries
   * the connections it has to their end, takes no new ones, and is not started again.
   */
  get handedOver(): boolean {
    return this.#handedOver;
  }

  /** Resolves once the current stream to the sandbox's end has ended (its process gone). */
  streamEnded(): Promise<void> {
    return this.#streamEnded;
  }

  /** How many times the sandbox's end was started (1 + restarts). */
  get starts(): number {
    return this.#starts;
  }

  /** The policy for every connection from now on; open tunnels stay open. */
  setPolicy(policy: NetworkPolicy): void {
    this.#proxy.setPolicy(policy);
  }

  /** Resolves once the sandbox's end listens (after a restart: the new one). */
  ready(): Promise<void> {
    return this.#ready ?? Promise.reject(new Error(`egress tunnel closed${this.#lastError ? `: ${this.#lastError}` : ''}`));
  }

  /** Ends the current exec stream as a lost host would (its stdin closes); the tunnel starts a new one. */
  async dropStream(): Promise<void> {
    const stream = this.#stream;
    if (stream === null) return;
    stream.flush();
    await stream.writer.close().catch(() => undefined);
    await stream.done;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const stream = this.#stream;
    this.#stream = null;
    if (stream !== null) {
      stream.mux.closeAll();
      stream.flush();
      await stream.writer.close().catch(() => undefined);
      await stream.process.kill();
      await stream.done;
    }
    await this.#proxy.close();
  }

  #open(): Promise<void> {
    this.#ready = this.#spawn();
    this.#ready.catch(() => undefined);
    return this.#ready;
  }

  async #spawn(): Promise<void> {
    this.#starts++;
    const process = await this.#options.spawn({
      command: egressTunnelShellCommand,
      env: { HB_NODE: this.#options.nodeCommand, HB_FILE: this.#options.bridgeFile, HB_PORT: String(this.#port), ...(this.#options.pidDir ? { HB_PID_DIR: this.#options.pidDir } : {}) },
      stdin: true,
    });
    if (process.stdin === undefined) throw new Error('egress tunnel: the sandbox spawn gave no stdin');
    const writer = process.stdin.getWriter();
    const { send, flush } = frameWriter(writer, this.#options, () => this.#stdinWrites++);
    const mux = new TunnelMux(send);
    let signalReady!: () => void;
    let failReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      signalReady = resolve;
      failReady = reject;
    });
    let stderr = '';
    const drainStderr = (async () => {
      const decoder = new TextDecoder();
      for await (const piece of chunks(process.stderr)) stderr = (stderr + decoder.decode(piece, { stream: true })).slice(-2000);
    })().catch(() => undefined);
    const done = (async () => {
      const splitter = new TunnelLineSplitter();
      try {
        for await (const piece of chunks(process.stdout)) {
          for (const line of splitter.push(piece)) this.#receive(decodeTunnelFrame(line), mux, signalReady);
        }
      } catch (error) {
        this.#lastError = (error as Error).message;
        this.#options.log?.warn({ err: this.#lastError }, 'egress tunnel: stream ended on a protocol error');
        await process.kill();
      }
      mux.closeAll();
      flush();
      await writer.close().catch(() => undefined);
      await drainStderr;
      const exit = await process.wait();
      if (stderr.trim() !== '') this.#lastError = `exit ${exit.exitCode}: ${stderr.trim()}`;
      failReady(new Error(`egress tunnel: the sandbox's end exited ${exit.exitCode} before it listened${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
    })();
    const stream: Stream = { process, mux, writer, flush, done };
    this.#stream = stream;
    this.#streamEnded = done;
    void done.then(() => this.#ended(stream));
    await ready;
    this.#failedStarts = 0;
    this.#everReady = true;
  }

  #receive(frame: TunnelFrame, mux: TunnelMux, signalReady: () => void): void {
    if (frame.t === 'ready') {
      this.#port = frame.port;
      signalReady();
    } else if (frame.t === 'handed-over') {
      this.#handedOver = true;
      this.#options.log?.info({ port: this.#port }, "egress tunnel: a newer host's tunnel took the port; open connections run to their end here");
    } else if (frame.t === 'open') {
      mux.attach(frame.id, connect({ host: '127.0.0.1', port: this.#proxy.port }));
    } else mux.handle(frame);
  }

  /** A stream ended: unless closed, the next one starts on the same port. */
  #ended(stream: Stream): void {
    // A start that never listened fails start() instead (a bad bridge file, a taken port).
    if (this.#stream !== stream || this.#closed || !this.#everReady) return;
    this.#stream = null;
    if (this.#handedOver) {
      this.#ready = null;
      this.#lastError = "a newer host's tunnel took the port";
      return;
    }
    this.#failedStarts++;
    if (this.#failedStarts > (this.#options.maxFailedStarts ?? 5)) {
      this.#ready = null;
      this.#options.log?.warn({ err: this.#lastError }, 'egress tunnel: gave up restarting');
      return;
    }
    this.#options.log?.info({ starts: this.#starts }, 'egress tunnel: stream ended, starting it again');
    void this.#open();
  }
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * Sends frames over the sandbox end's stdin, in order (the mux's windows bound what can wait). With
 * `batchWritesMs`, frames are held that long (or until `maxBatchBytes`) and go as one write.
 */
function frameWriter(
  writer: WritableStreamDefaultWriter<Uint8Array>,
  options: Pick<EgressTunnelOptions, 'batchWritesMs' | 'maxBatchBytes'>,
  wrote: () => void,
): { send: (frame: TunnelFrame) => void; flush: () => void } {
  const encoder = new TextEncoder();
  const write = (text: string): void => {
    wrote();
    void writer.write(encoder.encode(text)).catch(() => undefined);
  };
  const holdMs = Math.max(0, options.batchWritesMs ?? 0);
  if (holdMs === 0) return { send: (frame) => write(encodeTunnelFrame(frame)), flush: () => undefined };
  const maxBytes = Math.max(1, options.maxBatchBytes ?? 256 * 1024);
  let held: string[] = [];
  let heldBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (held.length === 0) return;
    const text = held.join('');
    held = [];
    heldBytes = 0;
    write(text);
  };
  const send = (frame: TunnelFrame): void => {
    const line = encodeTunnelFrame(frame);
    held.push(line);
    heldBytes += line.length; // frames are ASCII: one byte per char
    if (heldBytes >= maxBytes) flush();
    else timer ??= setTimeout(flush, holdMs);
  };
  return { send, flush };
}
