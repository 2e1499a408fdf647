// Egress tunnel mode of the bridge file: `node bridge.mjs --egress-tunnel <port>` (0: any free port).
// The host starts it through the sandbox's exec stream when the sandbox has no network
// (docs/remote-providers.md#egress-tunnel). It listens on the sandbox's 127.0.0.1 as the CLI's proxy
// (HTTP CONNECT, absolute-form HTTP, SOCKS5: it reads none of it) and carries each accepted
// connection to the host as a tunnel over its stdio (protocol/v1/egress-tunnel.ts). The host's
// egress proxy decides every connection under the session's network policy; nothing is dialed here.
// When its stdin ends (the host's end of the stream is gone) every open tunnel's connection is
// destroyed, so a client sees the connection close, never a hang, and the process exits.
// One listener per port: given HB_PID_DIR (a dir of the host's, which the CLI cannot write), a newer
// host's tunnel (a resume, in this process or another) hands the port over from the one its pid file
// names (SIGUSR2) before it listens, so new connections go to the newest host. The one handing over
// stops listening and carries its open connections to their end (a CLI's model stream in flight at a
// suspend), then exits.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { TunnelMux } from '../../protocol/v1/egress-tunnel-mux.ts';
import { EGRESS_TUNNEL_LIMITS, TunnelLineSplitter, decodeTunnelFrame, encodeTunnelFrame, type TunnelFrame } from '../../protocol/v1/egress-tunnel.ts';

const exitUsage = 64;
const exitDataErr = 65;
const exitUnavailable = 69;

export function runEgressForwarder(portArg: string): void {
  const port = /^\d+$/.test(portArg) ? Number(portArg) : NaN;
  if (!(port >= 0 && port <= 65_535)) {
    process.stderr.write(`--egress-tunnel port must be 0-65535, got ${portArg}\n`);
    process.exit(exitUsage);
  }
  const send = (frame: TunnelFrame): void => void process.stdout.write(encodeTunnelFrame(frame));
  // Handing over: once the last connection is gone, let go of the host's stream; the process ends when its sockets have flushed.
  let handingOver = false;
  const leaveWhenIdle = (): void => {
    if (handingOver && mux.size === 0) process.stdin.destroy();
  };
  const mux = new TunnelMux(send, leaveWhenIdle);
  let nextId = 1;
  const server = createServer((socket) => {
    // Past the cap the connection is closed at once: its client sees the close, the host hears nothing.
    if (mux.size >= EGRESS_TUNNEL_LIMITS.maxTunnels) return void socket.destroy();
    const id = nextId++;
    send({ t: 'open', id });
    mux.attach(id, socket);
  });
  const stop = (code: number, why?: string): never => {
    if (why !== undefined) process.stderr.write(`harness-bridge egress tunnel: ${why}\n`);
    mux.closeAll();
    server.close();
    process.exit(code);
  };
  const pidDir = process.env.HB_PID_DIR;
  const pidFile = port === 0 || pidDir === undefined || pidDir === '' ? null : join(pidDir, `tunnel-${port}.pid`);
  if (pidFile !== null) handOverFrom(pidFile);
  let tries = 0;
  server.on('error', (error: NodeJS.ErrnoException) => {
    // The tunnel handing over lets go of the port at its signal: a bounded wait (a hang guard), then the error.
    if (error.code === 'EADDRINUSE' && ++tries < listenTries) return void setTimeout(() => server.listen(port, '127.0.0.1'), 50);
    stop(exitUnavailable, `cannot listen on 127.0.0.1:${port}: ${error.message}`);
  });
  server.on('listening', () => {
    const address = server.address();
    if (pidFile !== null) {
      try {
        writeFileSync(`${pidFile}.tmp`, String(process.pid), { mode: 0o600 });
        renameSync(`${pidFile}.tmp`, pidFile);
      } catch {
        // A bridge file in a dir this process cannot write: the tunnel runs, the next one cannot end it (it waits for the port).
      }
    }
    send({ t: 'ready', port: typeof address === 'object' && address !== null ? address.port : port });
  });
  server.listen(port, '127.0.0.1');
  const splitter = new TunnelLineSplitter();
  process.stdin.on('data', (piece: Buffer) => {
    try {
      for (const line of splitter.push(piece)) {
        const frame = decodeTunnelFrame(line);
        if (!mux.handle(frame)) throw new Error(`egress tunnel: the host sent '${frame.t}'`);
      }
    } catch (error) {
      stop(exitDataErr, (error as Error).message);
    }
  });
  process.on('SIGUSR2', () => {
    if (handingOver) return;
    handingOver = true;
    server.close();
    send({ t: 'handed-over' });
    leaveWhenIdle();
  });
  process.stdin.once('end', () => stop(0));
  process.stdin.once('error', () => stop(0));
  process.stdout.on('error', () => stop(0));
}

/** Tries to listen on a port the previous tunnel still holds (50 ms apart). */
const listenTries = 100;

/** Has the tunnel `pidFile` names hand its port over, if it is one still running (its command line says so: a pid is never reused blindly). */
function handOverFrom(pidFile: string): void {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8'));
  } catch {
    return; // none yet
  }
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return;
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--egress-tunnel')) return;
    process.kill(pid, 'SIGUSR2');
  } catch {
    // gone already
  }
}
