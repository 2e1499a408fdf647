// Replays captured bridge frames to one ws client as fast as the socket takes
// them, so a host-side channel can be measured without any bridge in the way.
//   node frame-server.mjs FRAMES_FILE   (one frame per line; line 1 = the hello)
// On connection it sends the hello; on the client's first message it sends
// every other frame in order, pausing while the socket holds more than 1 MiB.
import { readFileSync } from 'node:fs';
import { WebSocketServer } from 'ws';

const frames = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean);
const HIGH_WATER = 1 << 20;
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 64 << 20 });
wss.on('connection', (ws) => {
  ws.on('error', () => {});
  ws.send(frames[0]);
  ws.once('message', async () => {
    for (let i = 1; i < frames.length && ws.readyState === 1; i++) {
      ws.send(frames[i]);
      while (ws.bufferedAmount > HIGH_WATER && ws.readyState === 1) await new Promise((r) => setTimeout(r, 1));
    }
  });
});
wss.on('listening', () => process.stdout.write(`${JSON.stringify({ type: 'bridge-ready', port: wss.address().port })}\n`));
