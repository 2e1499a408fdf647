// A sandbox process's stdio as a byte socket: what `ws` (through Node's http
// client, `createConnection`) writes goes to the process's stdin, what it
// prints on stdout is what `ws` reads. The process is the bridge file's relay
// mode (bridge/relay/relay.ts), which pipes those bytes to and from the
// bridge's port inside the sandbox (docs/remote-providers.md#exec-transport).
// The rest of a net.Socket that Node's http client and `ws` call (setTimeout,
// setNoDelay, setKeepAlive) is here too: setTimeout is an idle timer, the
// handshake timeout of the upgrade relies on it.
import { Duplex } from 'node:stream';

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

  constructor(start: () => PromiseLike<ExecProcess>) {
    super({ allowHalfOpen: false });
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
    this.ready.then(() => this.writer!.write(chunk)).then(
      () => callback(),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    // Our end is done: close the relay's stdin, it half-closes its connection to the bridge.
    this.ready.then(() => this.writer!.close()).then(
      () => callback(),
      () => callback(), // the relay already exited: nothing left to close
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.clearIdle();
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
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (this.destroyed) return;
        if (done) break;
        this.receivedBytes += value.byteLength;
        this.touch();
        if (!this.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) {
          await new Promise<void>((resolve) => (this.resumeReading = resolve));
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
