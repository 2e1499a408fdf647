// The real Claude Code 2.1.328, launched BY THE BRIDGE in stream-json mode,
// calls a host tool through the bridge's MCP endpoint; the host's tool-result
// goes back into the model's conversation. Bridge, Claude and the scripted
// model server share a loopback-only network namespace (root); the test (the
// host) reaches the bridge through a unix-socket forwarder inside it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { PROTOCOL_VERSION_V1, type JournalRecord } from '../../protocol/v1/index.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { STREAM_JSON_ARGS, claudeEnv } from '../fixtures/claude-code/driver.ts';
import { startIsolatedModelServer, type IsolatedModelServer } from '../model-server/netns.ts';
import { TestClient, bridgeBundle, randomToken, readyLineSchema, repoRoot, tempDir } from './helpers.ts';

/** What an adapter puts in argv: references to the env the bridge merges in, never the values. */
const mcpConfig = JSON.stringify({
  mcpServers: { host: { type: 'http', url: '${HARNESS_BRIDGE_MCP_URL}', headers: { Authorization: 'Bearer ${HARNESS_BRIDGE_MCP_TOKEN}' } } },
});

let dir: string;
let bin: string;
let model: IsolatedModelServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = tempDir('hb-mcp-claude-');
  bin = (await ensureCli('claude-code')).binPath;
  model = await startIsolatedModelServer({ logFile: join(dir, 'requests.jsonl') });
  if (!model.isolated) console.warn(`mcp-claude: running without a network namespace: ${model.reason}`);
}, 300_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Spawns `cmd args` inside the model server's namespace and resolves with its first stdout line. */
function spawnInNamespace(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; line: string }> {
  const wrapped = model.wrap(cmd, args);
  const child = spawn(wrapped.cmd, wrapped.args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd}: no ready line in 15 s; stderr: ${err}`)), 15_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const end = out.indexOf('\n');
      if (end < 0) return;
      clearTimeout(timer);
      resolve({ child, line: out.slice(0, end) });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited early (${code}); stderr: ${err}`));
    });
  });
}

it('Claude calls a host tool through the bridge MCP endpoint; the host answer reaches the model', async () => {
  const stateDir = join(dir, 'state');
  const home = join(dir, 'home');
  const proj = join(dir, 'proj');
  mkdirSync(home, { recursive: true });
  mkdirSync(proj, { recursive: true });
  const token = randomToken();
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HARNESS_BRIDGE_TOKEN: token };
  const bridge = await spawnInNamespace(process.execPath, [bridgeBundle, '--state-dir', stateDir], env);
  const ready = readyLineSchema.parse(JSON.parse(bridge.line));
  const socket = join(dir, 'bridge.sock');
  await spawnInNamespace(process.execPath, [join(repoRoot, 'test/fixtures/unix-forward.mjs'), socket, String(ready.port)], env);

  const ws = new WebSocket(`ws+unix://${socket}:/`, { headers: { authorization: `Bearer ${token}` } });
  const client = new TestClient(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  await client.waitFor((f) => f.type === 'hello');
  client.send({ type: 'attach', protocolVersion: PROTOCOL_VERSION_V1, cursor: 0 });
  await client.waitFor((f) => f.type === 'replay-end');

  const start = await client.request({
    type: 'start',
    id: 's1',
    turnId: 't1',
    launch: {
      argv: [bin, ...STREAM_JSON_ARGS, '--mcp-config', mcpConfig, '--strict-mcp-config', '--allowedTools', 'mcp__host__echo_upper'],
      env: claudeEnv(home, model.url),
      cwd: proj,
      stdin: 'pipe',
      lifetime: 'session',
      turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }],
      interrupt: { input: '{"type":"control_request","request_id":"int-1","request":{"subtype":"interrupt"}}\n' },
    },
    input: `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'SCENARIO:mcp call the host tool' } })}\n`,
    tools: [
      {
        name: 'echo_upper',
        description: 'Echo the given text in upper case.',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
    ],
  });
  expect(start).toMatchObject({ type: 'ack' });

  const call = await client.waitForRecord((r) => r.kind === 'tool-call', 60_000);
  if (call.kind !== 'tool-call') throw new Error('unreachable');
  expect(call).toMatchObject({ turnId: 't1', data: { callId: `mcp-${call.seq}`, name: 'echo_upper', input: { text: 'hello mcp' } } });

  // While Claude waits on us: the endpoint reached it through env (read from /proc), never through argv.
  const spawned = client.records().find((r) => r.kind === 'spawn');
  if (spawned?.kind !== 'spawn') throw new Error('no spawn record');
  const environ = readFileSync(`/proc/${spawned.data.pid}/environ`, 'utf8').split('\0');
  const mcpToken = environ.find((e) => e.startsWith('HARNESS_BRIDGE_MCP_TOKEN='))?.slice('HARNESS_BRIDGE_MCP_TOKEN='.length) ?? '';
  expect(mcpToken.length).toBeGreaterThanOrEqual(32);
  expect(mcpToken).not.toBe(token);
  expect(environ.find((e) => e.startsWith('HARNESS_BRIDGE_MCP_URL='))).toMatch(/^HARNESS_BRIDGE_MCP_URL=http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  expect(environ.some((e) => e.startsWith('HARNESS_BRIDGE_TOKEN='))).toBe(false);

  const answer = 'HOST SAYS: HELLO MCP';
  expect(await client.request({ type: 'tool-result', id: 'r1', callId: call.data.callId, output: answer })).toMatchObject({ type: 'ack' });
  const end = await client.waitForRecord((r) => r.kind === 'turn-end', 60_000);
  expect(end).toMatchObject({ turnId: 't1', data: { reason: 'matched' } });

  const records: JournalRecord[] = client.records();
  const stdout = records.filter((r) => r.kind === 'stdout').map((r) => (r.kind === 'stdout' ? r.data.text : ''));
  const init = stdout.find((l) => l.includes('"subtype":"init"')) ?? '';
  expect(init).toContain('"name":"host","status":"connected"');
  const result = stdout.find((l) => l.includes('"type":"result"')) ?? '';
  expect(result).toContain('"is_error":false');

  // The model's next request carried the host's answer as the tool_result of the MCP tool_use.
  const requests = model.requests().filter((r) => r.path === '/v1/messages');
  const last = JSON.stringify(requests.at(-1)?.body);
  expect(last).toContain('"type":"tool_result"');
  expect(last).toContain(answer);
  expect(JSON.stringify(requests.map((r) => r.body))).toContain('mcp__host__echo_upper');

  // Argv carries references only; the token is in no record, journal line, log line or model request.
  expect(JSON.stringify(records.filter((r) => r.kind === 'turn-start' || r.kind === 'spawn'))).toContain('${HARNESS_BRIDGE_MCP_TOKEN}');
  expect(await client.request({ type: 'stop', id: 'stop-1' }, 30_000)).toMatchObject({ type: 'ack' });
  await client.closed;

  // Read once the CLI is gone: while it runs it makes and removes files of its own (a file-watch probe in its tmp).
  const written = readdirSync(stateDir, { recursive: true, withFileTypes: true }) // the CLI's own dirs (its HOME, tmp) included
    .filter((entry) => entry.isFile())
    .map((entry) => readIfPresent(join(entry.parentPath, entry.name)))
    .join('\n');
  for (const haystack of [written, JSON.stringify(records), readFileSync(join(dir, 'requests.jsonl'), 'utf8')]) expect(haystack).not.toContain(mcpToken);
}, 180_000);

/** A file listed a moment ago may be gone (a process of the CLI's still ending removes its own): it holds nothing then. */
function readIfPresent(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}
