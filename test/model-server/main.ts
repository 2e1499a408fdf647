// CLI entry: `npx tsx test/model-server/main.ts [--port N] [--log FILE] [--profile NAME|MODULE]...`.
// Prints one JSON ready line `{"type":"model-server-ready","port":N,"url":…}` and serves until SIGINT/SIGTERM.
// --profile (repeatable, in order): claude-code, codex, pi, reference (the default: all three), generic
// (none: tools guessed from their schemas), or a module exporting profiles (host/testing/scripted-model/README.md).
import { loadProfiles } from '../../host/testing/scripted-model/load-profile.ts';
import type { CliProfile } from '../../host/testing/scripted-model/profiles.ts';
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
let profiles: CliProfile[] | undefined;
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] !== '--profile') continue;
  const value = process.argv[i + 1];
  if (value === undefined) {
    process.stderr.write('--profile needs a value\n');
    process.exit(2);
  }
  try {
    (profiles ??= []).push(...(await loadProfiles(value)));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
}
const server = await startModelServer({ port, ...(logFile === undefined ? {} : { logFile }), ...(profiles === undefined ? {} : { profiles }) });
process.stdout.write(`${JSON.stringify({ type: 'model-server-ready', port: server.port, url: server.url })}\n`);
const stop = () => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
