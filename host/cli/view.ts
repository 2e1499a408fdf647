// `harness-bridge view`: a recording, journal or state dir as one
// self-contained HTML page (host/view/), written to a file that opens from
// disk, or served on 127.0.0.1 with --serve. Reads the source as `replay`
// does (streaming, any size); the adapter is chosen the same way.
import { closeSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { basename, resolve } from 'node:path';
import { guessAdapterId, openSource, RecordStream, SourceError, validateSource } from '../replay/index.ts';
import { collectView, viewBounds } from '../view/collect.ts';
import { diffBounds, diffView } from '../view/diff-rows.ts';
import { pageChunks } from '../view/page.ts';
import type { ViewData } from '../view/view-data.ts';
import { booleanFlag, CliError, CliUsageError, parseArgs, stringFlag } from './args.ts';
import { loadAdapterModules, resolveAdapter } from './replay.ts';

export const viewHelp = `usage: harness-bridge view <recording|journal|dir> [options]

Writes one self-contained HTML page showing a session: a timeline per turn
(records by lane against seq or time), every record and the parts the adapter
translates it to (as replay does), linked both ways; host tool calls and
approvals with durations and who answered; segments (suspend, continue),
ladder rungs, bridge restarts, redelivered and recomputed ranges; gaps,
duplicates and every --check finding where they happen; usage per step and
per turn; search and keyboard navigation. No server, no network: the file
opens from disk.

Any size: the source is streamed; the page keeps every record's detail up to
${viewBounds.keepAllUpTo.toLocaleString('en-US')} records, beyond that ${viewBounds.window} records around each turn edge, host
call and flag (at most ${viewBounds.maxKept.toLocaleString('en-US')}), and counts the rest in per-turn histograms.

options:
  --out <file.html>     where to write the page (default: <input name>.html in
                        the current directory)
  --adapter <id|path>   adapter to translate with (as for replay; default:
                        guessed from the launched argv)
  --diff <other>        also translate <other> and show both side by side,
                        aligned by seq, differences marked (at most
                        ${diffBounds.maxRows.toLocaleString('en-US')} differing seqs listed)
  --diff-adapter <id|path>
                        translate the other side with this adapter; with no
                        --diff, the same input: two adapter versions
  --serve               serve the page on 127.0.0.1 (a free port, or --port)
                        and print its URL; Ctrl-C stops
  --port <n>            port for --serve
  -h, --help            this help`;

const flags = {
  out: { type: 'string' },
  adapter: { type: 'string' },
  diff: { type: 'string' },
  'diff-adapter': { type: 'string' },
  serve: { type: 'boolean' },
  port: { type: 'string' },
} as const;

export async function viewCommand(argv: ReadonlyArray<string>): Promise<number> {
  const parsed = parseArgs('view', argv, flags, { min: 1, max: 1, name: 'the recording, journal or state dir to view' });
  if (parsed.help) {
    process.stdout.write(`${viewHelp}\n`);
    return 0;
  }
  const port = stringFlag(parsed, 'port');
  if (port !== undefined && !/^\d{1,5}$/.test(port)) throw new CliUsageError(`view: --port must be a number, got ${JSON.stringify(port)}`);
  if (port !== undefined && !booleanFlag(parsed, 'serve')) throw new CliUsageError('view: --port needs --serve');
  let data: ViewData;
  try {
    data = await buildData(parsed);
  } catch (error) {
    if (error instanceof SourceError) throw new CliError(`view: ${error.message}`);
    throw error;
  }
  const input = parsed.positionals[0]!;
  const out = stringFlag(parsed, 'out') ?? (booleanFlag(parsed, 'serve') ? undefined : resolve(`${basename(resolve(input)).replace(/\.ndjson$/, '')}.html`));
  if (out !== undefined) {
    const bytes = writePage(out, data);
    process.stdout.write(`wrote ${out} (${bytes.toLocaleString('en-US')} bytes): open it in a browser\n`);
  }
  if (booleanFlag(parsed, 'serve')) await serve(Buffer.concat([...pageChunks(data)].map((chunk) => Buffer.from(chunk))), port === undefined ? 0 : Number(port));
  return 0;
}

/** Writes the page chunk by chunk (never one string); returns its size in bytes. */
function writePage(path: string, data: ViewData): number {
  const fd = openSync(path, 'w');
  let bytes = 0;
  try {
    for (const chunk of pageChunks(data)) {
      const buffer = Buffer.from(chunk);
      for (let at = 0; at < buffer.length; ) at += writeSync(fd, buffer, at);
      bytes += buffer.length;
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

async function buildData(parsed: ReturnType<typeof parseArgs>): Promise<ViewData> {
  await loadAdapterModules('view', parsed);
  const input = parsed.positionals[0]!;
  const source = openSource(input);
  validateSource(source);
  const adapterId = stringFlag(parsed, 'adapter') ?? guessAdapterId(new RecordStream(source).records());
  if (adapterId === undefined) throw new CliUsageError('view: cannot tell which adapter produced this; pass --adapter <id>');
  const adapter = resolveAdapter('view', adapterId);
  const data = collectView(source, adapter, { adapterId, title: input });
  const otherPath = stringFlag(parsed, 'diff');
  const otherAdapterId = stringFlag(parsed, 'diff-adapter');
  if (otherPath === undefined && otherAdapterId === undefined) return data;
  const otherSource = otherPath === undefined ? source : openSource(otherPath);
  validateSource(otherSource);
  const otherId = otherAdapterId ?? adapterId;
  const diff = diffView(
    { source, adapter: resolveAdapter('view', adapterId), label: `${input} (${adapterId})` },
    { source: otherSource, adapter: resolveAdapter('view', otherId), label: `${otherPath ?? input} (${otherId})` },
  );
  return { ...data, diff };
}

/** Serves the page on 127.0.0.1 until SIGINT / SIGTERM. */
function serve(body: Buffer, port: number): Promise<void> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url !== '/' && request.url !== '/index.html')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length, 'cache-control': 'no-store' }).end(body);
  });
  return new Promise((resolveServe, reject) => {
    server.once('error', (error) => reject(new CliError(`view: cannot serve on 127.0.0.1:${port}: ${error.message}`)));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      process.stdout.write(`serving on http://127.0.0.1:${bound}/ (Ctrl-C stops)\n`);
      const stop = () => {
        server.close(() => resolveServe());
        server.closeAllConnections(); // a browser keeps its connection open; Ctrl-C must not wait for it
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  });
}
