// CLI entry: `npx tsx test/model-server/main.ts [--port N] [--log FILE]`.
// Prints one JSON ready line `{"type":"model-server-ready","port":N,"url":…}` and serves until SIGINT/SIGTERM.
import { startModelServer } from './server.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const portArg = arg('--port');
const port = portArg === undefined ? 0 : Number.parseInt(portArg, 10);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`bad --port ${portArg}\n`);
  process.exit(2);
}
const logFile = arg('--log');
const server = await startModelServer(logFile === undefined ? { port } : { port, logFile });
process.stdout.write(`${JSON.stringify({ type: 'model-server-ready', port: server.port, url: server.url })}\n`);
const stop = () => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
