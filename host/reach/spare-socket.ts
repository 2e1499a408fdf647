// The probe's socket, kept open for the session's first channel: reaching a
// bridge and attaching then cost one connection, not two
// (docs/bridge-internals.md#resume-costs). Frames that arrive before the
// channel takes it are kept for it, in order. Unclaimed, it is closed after
// spareSocketMs (a session may open its first channel much later), and the
// channel connects afresh as it would have anyway.
import type { OpenSocket } from '../channel/index.ts';

/** How long a probe's socket waits for the channel: far below the bridge's heartbeat and idle limits. */
const spareSocketMs = 2_000;
const open = 1; // WebSocket.OPEN

/** Holds `spare` until taken (once) or expired; the returned function takes it, or gives undefined. */
export function spareSocket(spare: OpenSocket): () => OpenSocket | undefined {
  const { socket } = spare;
  const frames = [...spare.frames];
  let held = true;
  const release = (): void => {
    held = false;
    clearTimeout(timer);
    socket.removeAllListeners();
  };
  const timer = setTimeout(() => {
    release();
    socket.on('error', () => undefined);
    socket.terminate();
  }, spareSocketMs);
  timer.unref();
  socket.on('message', (data) => frames.push((Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)).toString('utf8')));
  socket.on('error', () => undefined); // 'close' follows
  socket.on('close', () => release());
  return () => {
    if (!held) return undefined;
    release();
    if (socket.readyState === open) return { socket, frames };
    socket.on('error', () => undefined);
    socket.terminate();
    return undefined;
  };
}
