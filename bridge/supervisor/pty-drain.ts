// node-pty destroys a pty's reading socket 200 ms after its CLI exits (a guard for
// platforms where that socket never closes), and destroying drops what the kernel still
// holds for it. A loaded machine misses that window: the bridge is not scheduled, or the
// tty layer has not pushed the CLI's last writes yet. So just before that destroy, what
// is left is read synchronously: a read on the master flushes the tty layer first, then
// returns the bytes, EIO once the CLI's side is closed, or EAGAIN (node-pty opens the
// master non-blocking) while a process still holds it open.
import { readSync } from 'node:fs';

type Decoder = { write(bytes: Buffer): string };

type Socket = {
  destroy: (...args: unknown[]) => unknown;
  destroyed?: boolean;
  /** Returns (and emits as 'data', to node-pty's listeners) what the stream buffered while paused. */
  read?: () => unknown;
  /** The stream's own decoder (encoding 'utf8'), so a character split across the last reads stays whole. */
  _readableState?: { decoder?: Decoder | null };
};

/** node-pty 1.x's terminal fields this relies on; absent (another version), nothing is patched. */
type PtyInternals = { _fd?: unknown; _socket?: Socket };

const chunkBytes = 64 * 1024;
/** Bounds a drain when a process the CLI left behind keeps writing into the pty. */
const maxDrainBytes = 4 * 1024 * 1024;

/** Reads what the pty still holds before node-pty's socket destroy, delivering it as its data events would. */
export function drainBeforeDestroy(term: object, encoding: 'utf8' | null, deliver: (data: string | Buffer) => void): void {
  const { _fd: fd, _socket: socket } = term as PtyInternals;
  if (typeof fd !== 'number' || !socket || typeof socket.destroy !== 'function') return;
  const destroy = socket.destroy;
  socket.destroy = function (this: Socket, ...args: unknown[]) {
    if (!socket.destroyed) {
      // What the stream buffered (a paused pty) is older than what the kernel holds: it goes first.
      for (let n = 0; n < 1024 && typeof socket.read === 'function' && socket.read() !== null; n++);
      const decoder = encoding === null ? null : (socket._readableState?.decoder ?? utf8Decoder());
      for (const bytes of readLeft(fd)) {
        const data = decoder ? decoder.write(bytes) : bytes;
        if (data.length > 0) deliver(data);
      }
    }
    return destroy.apply(this, args);
  };
}

/** A global TextDecoder, not node:string_decoder: the bridge's first stage loads no builtin it does not need (bundle.test.ts). */
function utf8Decoder(): Decoder {
  const decoder = new TextDecoder('utf-8');
  return { write: (bytes) => decoder.decode(bytes, { stream: true }) };
}

function readLeft(fd: number): Buffer[] {
  const out: Buffer[] = [];
  let total = 0;
  while (total < maxDrainBytes) {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    let n: number;
    try {
      n = readSync(fd, buffer, 0, chunkBytes, null);
    } catch {
      break; // EIO: the CLI's side is closed and everything was read; EAGAIN: nothing more now
    }
    if (n <= 0) break;
    out.push(buffer.subarray(0, n));
    total += n;
  }
  return out;
}
