// The floor: a minimal `ws` server that spawns the CLI and forwards its stdout
// lines to one client, batched per tick (one JSON array of line strings per
// frame), with the same socket backpressure rule as a real bridge (stop
// reading the child while the socket holds more than 1 MiB). No journal, no
// seq, no schema. With --retain it also keeps every line in memory so a later
// {"type":"replay"} can resend them (1,000 lines per frame) — the in-memory
// floor for replay.
//
//   RAWWS_TOKEN=… node rawws-bridge.mjs [--port N] [--retain]
// Host frames: {"type":"start","argv":[…]} | {"type":"replay"}
// Bridge frames: ["line", …] | {"type":"turn-end","code"} | {"type":"replay-end"}
import { spawn } from 'node:child_process';
import { WebSocketServer } from 'ws';
import { splitLines } from './lines.mjs';

const argv = process.argv.slice(2);
const portIndex = argv.indexOf('--port');
const port = portIndex >= 0 ? Number(argv[portIndex + 1]) : 0;
const retain = argv.includes('--retain');
const token = process.env.RAWWS_TOKEN ?? '';
const HIGH_WATER = 1 << 20;

const retained = [];
const wss = new WebSocketServer({
  host: '127.0.0.1',
  port,
  maxPayload: 64 << 20,
  verifyClient: (info) => info.req.headers.authorization === `Bearer ${token}`,
});

wss.on('connection', (ws) => {
  ws.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    if (msg.type === 'start') startTurn(ws, msg.argv);
    else if (msg.type === 'replay') void replay(ws);
  });
  ws.on('error', () => {});
});

function startTurn(ws, [command, ...rest]) {
  const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'ignore'] });
  let pending = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    if (ws.readyState === 1) ws.send(JSON.stringify(batch));
    if (ws.bufferedAmount > HIGH_WATER) {
      child.stdout.pause();
      const poll = () => (ws.bufferedAmount > HIGH_WATER && ws.readyState === 1 ? setTimeout(poll, 1) : child.stdout.resume());
      setTimeout(poll, 1);
    }
  };
  splitLines(child.stdout, (line) => {
    pending.push(line);
    if (retain) retained.push(line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
  child.on('close', (code) => {
    flush();
    if (ws.readyState === 1) ws.send(JSON.stringify({ type: 'turn-end', code }));
  });
}

async function replay(ws) {
  for (let i = 0; i < retained.length && ws.readyState === 1; i += 1000) {
    ws.send(JSON.stringify(retained.slice(i, i + 1000)));
    while (ws.bufferedAmount > HIGH_WATER && ws.readyState === 1) await new Promise((r) => setTimeout(r, 1));
  }
  if (ws.readyState === 1) ws.send(JSON.stringify({ type: 'replay-end' }));
}

wss.on('listening', () => {
  process.stdout.write(`${JSON.stringify({ type: 'bridge-ready', port: wss.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
