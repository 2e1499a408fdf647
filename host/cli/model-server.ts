// `harness-bridge model-server`: the scripted model server (host/testing/scripted-model, its
// README.md the manual) on 127.0.0.1 until interrupted, for testing a CLI offline. Prints one JSON
// ready line, then serves; --profile says what it knows about the CLIs it serves.
import { loadProfiles, profileNames } from '../testing/scripted-model/load-profile.ts';
import type { CliProfile } from '../testing/scripted-model/profiles.ts';
import { startModelServer } from '../testing/scripted-model/server.ts';
import { CliUsageError, parseArgs, stringFlag } from './args.ts';

export const modelServerHelp = `usage: harness-bridge model-server [--port N] [--log FILE] [--profile NAME|MODULE]...

Serves the scripted model on 127.0.0.1 (Anthropic Messages /v1/messages, OpenAI
Responses /v1/responses, Chat Completions /v1/chat/completions) until SIGINT or
SIGTERM. Replies follow SCENARIO:… markers in the prompt (SCENARIO:shell,
SCENARIO:write PATH:x, SCENARIO:mcp, SCENARIO:slow, …): see
host/testing/scripted-model/README.md in the harness-bridge repository.
Prints one line first:
{"type":"model-server-ready","port":N,"url":"http://127.0.0.1:N"}.

options:
  --port <n>           port (default: a free one)
  --log <file>         append every request as one JSON line (credentials dropped)
  --profile <p>        what the model knows about a CLI: ${profileNames.join(', ')}, or an
                       ES module (.mjs/.js) exporting profiles; repeatable, first
                       match wins; default reference (claude-code, codex, pi)
  -h, --help           this help`;

const flags = { port: { type: 'string' }, log: { type: 'string' }, profile: { type: 'string' } } as const;

export async function modelServerCommand(argv: ReadonlyArray<string>): Promise<number> {
  // --profile repeats; parseArgs keeps the last, so collect them first.
  const profileValues: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--profile' && argv[i + 1] !== undefined) profileValues.push(argv[++i]!);
    else if (arg.startsWith('--profile=')) profileValues.push(arg.slice('--profile='.length));
    else rest.push(arg);
  }
  const parsed = parseArgs('model-server', rest, flags, { min: 0, max: 0, name: '' });
  if (parsed.help) {
    process.stdout.write(`${modelServerHelp}\n`);
    return 0;
  }
  const portText = stringFlag(parsed, 'port') ?? '0';
  const port = /^\d+$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new CliUsageError(`model-server: --port must be 0..65535, got ${JSON.stringify(portText)}`);
  let profiles: CliProfile[] | undefined;
  for (const value of profileValues) {
    try {
      (profiles ??= []).push(...(await loadProfiles(value)));
    } catch (error) {
      throw new CliUsageError(`model-server: --profile ${value}: ${(error as Error).message}`);
    }
  }
  const logFile = stringFlag(parsed, 'log');
  const server = await startModelServer({ port, ...(logFile === undefined ? {} : { logFile }), ...(profiles === undefined ? {} : { profiles }) });
  process.stdout.write(`${JSON.stringify({ type: 'model-server-ready', port: server.port, url: server.url })}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
