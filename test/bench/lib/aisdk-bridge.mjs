// The AI SDK's own bridge runtime (`runBridge` from @ai-sdk/harness/bridge,
// pinned 1.0.122) run as a real process, with the thinnest adapter possible:
// `onStart` spawns `start.argv` and emits one `{type:'raw', rawValue: line}`
// event per stdout line (no JSON.parse, no translation — cheaper than any real
// adapter), then a HarnessV1 `finish` part when the process exits. Everything else —
// the ws server, token check, seq stamping, in-memory replay log, the
// best-effort disk mirror, `resume` replay — is the AI SDK's code, unmodified.
//
//   BRIDGE_CHANNEL_TOKEN=… node aisdk-bridge.mjs --state-dir DIR [--port N]
// prints the AI SDK's ready line {"type":"bridge-ready","port":N} on stdout.
//
// One deviation: runBridge hard-codes host '0.0.0.0'; benchmarks bind loopback
// only, so http.Server#listen is wrapped to turn '0.0.0.0' into '127.0.0.1'.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { runBridge } from '@ai-sdk/harness/bridge';
import { splitLines } from './lines.mjs';

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  if (args[1] === '0.0.0.0') args[1] = '127.0.0.1';
  return listen.apply(this, args);
};

const argv = process.argv.slice(2);
const arg = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};

await runBridge({
  bridgeType: 'bench',
  bridgeStateDir: arg('state-dir') ?? '.',
  port: Number(arg('port') ?? 0),
  token: process.env.BRIDGE_CHANNEL_TOKEN ?? '',
  async onStart(start, turn) {
    const [command, ...rest] = start.argv;
    const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
    const onAbort = () => child.kill('SIGKILL');
    turn.abortSignal.addEventListener('abort', onAbort, { once: true });
    splitLines(child.stdout, (line) => turn.emit({ type: 'raw', rawValue: line }));
    child.stderr.resume();
    const code = await new Promise((resolve) => {
      child.on('error', () => resolve(-1));
      child.on('close', (exitCode) => resolve(exitCode));
    });
    turn.abortSignal.removeEventListener('abort', onAbort);
    turn.emit({
      type: 'finish',
      finishReason: { unified: code === 0 ? 'stop' : 'error', raw: String(code) },
      totalUsage: { inputTokens: {}, outputTokens: {} },
    });
  },
});
