// A sandbox process's stdio as a byte socket: what `ws` (through Node's http
// client, `createConnection`) writes goes to the process's stdin, what it
// prints on stdout is what `ws` reads. The process is the bridge file's relay
// mode (bridge/relay/relay.ts), which pipes those bytes to and from the
// bridge's port inside the sandbox (docs/remote-providers.md#exec-transport).
// The rest of a net.Socket that Node's http client and `ws` call (setTimeout,
// setNoDelay, setKeepAlive) is here too: setTimeout is an idle timer, the
// handshake timeout of the upgrade relies on it.
//
// Framing and batching (ExecSocketOptions) are for hosted exec APIs: base64 lines when output
// arrives as strings, and small writes held for batchWritesMs and sent as one when each stdin write
// is billed or rate-limited. A held write is acknowledged at once (so more can join it) up to
// maxBatchBytes; past that the writer waits for the batch to go (back-pressure).
import { Duplex } from 'node:stream';
import { Base64LineDecoder, encodeBase64Line, type RelayFraming } from '../../protocol/v1/relay-framing.ts';

/** A spawned sandbox process with stdin: SandboxProcess plus the `stdin` stream (spawn's `stdin: true`). */
export type ExecProcess = {
  readonly stdin?: WritableStream<Uint8Array>;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  wait(): PromiseLike<{ exitCode: number }>;
  kill(): PromiseLike<void>;
};

/** Bytes of relay stderr kept to explain a connection that ended before any byte came back. */
const maxStderrTailBytes = 2048;

export type ExecSocketOptions = {
  /** How bytes travel over the relay's stdio (protocol/v1/relay-framing.ts). Default 'bytes'. */
  readonly framing?: RelayFraming;
  /** Hold writes this long and send them as one stdin write. Default 0: each write at once. */
  readonly batchWritesMs?: number;
  /** A batch goes at once at this size, and the writer waits for it. Default 256 KiB. */
  readonly maxBatchBytes?: number;
};

const defaultMaxBatchBytes = 256 * 1024;

export class ExecSocket extends Duplex {
  private process: ExecProcess | undefined;
  private writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private readonly ready: Promise<void>;
  private resumeReading: (() => void) | undefined;
  private receivedBytes = 0;
  private stderrTail = '';
  private stderrDone: Promise<void> = Promise.resolve();
  private idleMs = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly framing: RelayFraming;
  private readonly batchWritesMs: number;
  private readonly maxBatchBytes: number;
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private batchTimer: NodeJS.Timeout | undefined;
  /** The stdin writes in flight, in order: each batch goes after the one before. */
  private flushing: Promise<void> = Promise.resolve();
  /** Stdin writes made (for the figures of a hosted transport). */
  stdinWrites = 0;

  constructor(start: () => PromiseLike<ExecProcess>, options: ExecSocketOptions = {}) {
    super({ allowHalfOpen: false });
    this.framing = options.framing ?? 'bytes';
    this.batchWritesMs = Math.max(0, options.batchWritesMs ?? 0);
    this.maxBatchBytes = Math.max(1, options.maxBatchBytes ?? defaultMaxBatchBytes);
    this.ready = Promise.resolve()
      .then(start)
      .then((process) => {
        if (!process.stdin) {
          void process.kill();
          throw new Error("the sandbox's spawn gave the relay no stdin (the exec transport needs spawn({ stdin: true }))");
        }
        this.process = process;
        this.writer = process.stdin.getWriter();
        this.reader = process.stdout.getReader();
        this.stderrDone = this.keepStderrTail(process.stderr);
        if (this.destroyed) {
          this.release();
          return;
        }
        void this.pump(this.reader);
      });
    // The sandbox could not even spawn the relay (it is gone or stopped): coded, so the channel can tell it from a slow bridge.
    this.ready.catch((error: unknown) => this.destroy(coded(new Error(`the sandbox could not spawn the relay: ${error instanceof Error ? error.message : String(error)}`, { cause: error }), 'HB_RELAY_SPAWN_FAILED')));
  }

  override _read(): void {
    const resume = this.resumeReading;
    this.resumeReading = undefined;
    resume?.();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.touch();
    const done = (error?: unknown) => callback(error === undefined ? undefined : error instanceof Error ? error : new Error(String(error)));
    if (this.batchWritesMs === 0) {
      this.send(chunk).then(() => done(), done);
      return;
    }
    this.batch.push(chunk);
    this.batchBytes += chunk.byteLength;
    if (this.batchBytes >= this.maxBatchBytes) {
      this.flushBatch().then(() => done(), done);
      return;
    }
    this.batchTimer ??= setTimeout(() => {
      this.flushBatch().catch((error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))));
    }, this.batchWritesMs);
    done();
  }

  override _final(callback: (error?: Error | null) => void): void {
    // Our end is done: what is held goes, then the relay's stdin closes; it half-closes its connection to the bridge.
    this.flushBatch()
      .then(() => this.ready)
      .then(() => this.writer!.close())
      .then(
        () => callback(),
        () => callback(), // the relay already exited: nothing left to close
      );
  }

  /** The held writes as one stdin write. */
  private flushBatch(): Promise<void> {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    if (this.batch.length === 0) return this.flushing;
    const chunk = this.batch.length === 1 ? this.batch[0]! : Buffer.concat(this.batch, this.batchBytes);
    this.batch = [];
    this.batchBytes = 0;
    return this.send(chunk);
  }

  /** One stdin write of `chunk`, framed, after every earlier one. */
  private send(chunk: Buffer): Promise<void> {
    const payload = this.framing === 'bytes' ? chunk : Buffer.from(encodeBase64Line(chunk), 'latin1');
    const sent = this.flushing.then(() => this.ready).then(async () => {
      this.stdinWrites++;
      await this.writer!.write(payload);
    });
    this.flushing = sent.catch(() => undefined);
    return sent;
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.clearIdle();
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    this.resumeReading?.();
    this.release();
    callback(error);
  }

  /** Idle timeout as net.Socket has it: 'timeout' after `ms` without a byte either way; 0 turns it off. */
  setTimeout(ms: number, callback?: () => void): this {
    this.idleMs = ms;
    if (callback) this.once('timeout', callback);
    this.touch();
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  private async pump(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const lines = this.framing === 'base64-lines' ? new Base64LineDecoder() : undefined;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (this.destroyed) return;
        if (done) break;
        this.touch();
        let chunks: Buffer[];
        try {
          chunks = lines ? lines.push(value) : [Buffer.from(value.buffer, value.byteOffset, value.byteLength)];
        } catch (error) {
          // Not what the relay writes: the exec API altered the output (or another process wrote to it).
          this.destroy(coded(new Error(`the relay's output is not base64 lines (${(error as Error).message})`, { cause: error }), 'HB_RELAY_FRAMING'));
          return;
        }
        for (const chunk of chunks) {
          this.receivedBytes += chunk.byteLength;
          if (!this.push(chunk)) await new Promise<void>((resolve) => (this.resumeReading = resolve));
          if (this.destroyed) return;
        }
      }
    } catch (error) {
      if (!this.destroyed) this.destroy(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.receivedBytes === 0) {
      // The relay ended without carrying a byte: it could not reach the bridge. Say why (its stderr).
      await Promise.race([this.stderrDone, delay(200)]);
      const exited = Promise.resolve(this.process?.wait()).then((result) => result?.exitCode, () => undefined);
      const exit = await Promise.race([exited, delay(200).then(() => undefined)]);
      const why = this.stderrTail.trim() || 'it printed nothing';
      if (!this.destroyed) this.destroy(coded(new Error(`the relay ended before the bridge answered${exit === undefined ? '' : ` (exit ${exit})`}: ${why}`), 'HB_RELAY_UNREACHABLE'));
      return;
    }
    this.push(null);
  }

  private async keepStderrTail(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        this.stderrTail = (this.stderrTail + decoder.decode(value, { stream: true })).slice(-maxStderrTailBytes);
      }
    } catch {
      return; // torn down with the process
    }
  }

  /** Close the relay's stdin (it exits on EOF), stop reading, and kill it as a backstop. */
  private release(): void {
    const { writer, reader, process } = this;
    this.writer = undefined;
    this.reader = undefined;
    this.process = undefined;
    writer?.abort().catch(() => undefined);
    reader?.cancel().catch(() => undefined);
    if (process) Promise.resolve(process.kill()).catch(() => undefined);
  }

  private touch(): void {
    this.clearIdle();
    if (this.idleMs > 0 && !this.destroyed) {
      this.idleTimer = setTimeout(() => this.emit('timeout'), this.idleMs);
      this.idleTimer.unref();
    }
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** An error with a `code` as Node's socket errors have (ECONNREFUSED…): host/channel/connection.ts reads it (looksDead). */
function coded(error: Error, code: string): Error {
  return Object.assign(error, { code });
}
