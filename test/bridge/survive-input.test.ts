// A write to a kept CLI's stdin whose `stdin` record died with the bridge, and one journaled that
// never reached the keeper. The bridge sends the
// write to the keeper and queues the record in one tick, and a SIGKILL can fall between the socket
// write and the journal's write(2). The keeper counts and keeps what it wrote; the adopting bridge
// journals what its journal lacks, so the host's settle finds the input landed, and writes again
// what its journal holds and the keeper never received
// (host/session/send-request.ts) and the CLI reads it once (docs/bridge-internals.md#survive-in-flight-tool-call).
// The dead bridge's last write is made by the test on the keeper's socket, after the kill: the
// crash point is chosen, not timed. Built bridge, real processes and sockets.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchSpecSchema } from '../../protocol/v1/index.ts';
import { keeperConnection, killedBridges, texts } from './killed-bridges.ts';

// Echoes each stdin line as {"got": line} (a long one as its length); a {"method":"prompt"} line ends the turn ({"done":true});
// a {"method":"env"} line also prints its MCP variables.
const CLI = `
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (line.includes('"env"')) console.log(JSON.stringify({ env: [process.env.HARNESS_BRIDGE_MCP_URL, process.env.HARNESS_BRIDGE_MCP_TOKEN] }));
  console.log(JSON.stringify({ got: line.length > 1000 ? 'len:' + line.length : line }));
  if (line.includes('"prompt"')) console.log(JSON.stringify({ done: true }));
});
setInterval(() => {}, 1000);`;

const { groups, bridgeOn } = killedBridges();

const echo = (line: string) => JSON.stringify({ got: line.length > 1001 ? `len:${line.trimEnd().length}` : line.trimEnd() });

/** Sends lines on a keeper's socket, as a bridge does, and closes. */
async function sendToKeeper(dir: string, lines: object[]): Promise<void> {
  const socket = await keeperConnection(dir);
  await new Promise<void>((resolve) => socket.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''), resolve));
}

/** Waits (bounded: a hang guard) until a keeper's stdout capture holds `text`. */
async function captureHolds(dir: string, text: string): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (existsSync(join(dir, 'stdout')) && readFileSync(join(dir, 'stdout'), 'utf8').includes(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the keeper's capture never held ${text}`);
}

const hello = '{"method":"hello"}\n';

/** A bridge running turn t1 on a kept echo CLI that has read `hello`; its keeper's dir and pid. */
async function keptTurn(more: object = {}) {
  const first = await bridgeOn();
  const launch = launchSpecSchema.parse({
    argv: [process.execPath, '-e', CLI],
    stdin: 'pipe',
    lifetime: 'session',
    survive: true,
    turnEnd: [{ json: { path: ['done'], equals: true } }],
    ...more,
  });
  await first.client.request({ type: 'start', id: 's', turnId: 't1', launch, input: hello });
  const spawn = await first.client.waitForRecord((r) => r.kind === 'spawn');
  if (spawn.kind === 'spawn') groups.push(spawn.data.pid);
  await first.client.waitForRecord((r) => r.kind === 'stdout' && r.data.text === echo(hello));
  const [keeper] = readdirSync(join(first.bridge.stateDir, 'keepers'));
  const keeperDir = join(first.bridge.stateDir, 'keepers', keeper!);
  const keeperPid = Number(readFileSync(join(keeperDir, 'keeper.pid'), 'utf8'));
  groups.push(keeperPid);
  return { ...first, keeperDir, keeperPid };
}

describe('a kept CLI input whose stdin record died with the bridge (survive)', () => {
  it('is journaled by the adopting bridge: the host finds it landed, and the CLI reads each input once', { timeout: 60_000 }, async () => {
    const first = await keptTurn();
    const { stateDir } = first.bridge;
    const { keeperDir } = first;
    await first.bridge.kill('SIGKILL');

    // The dead bridge's last tick: two writes reached the keeper, their stdin records never reached the journal
    // (one carries a placeholder its record keeps, as launch stdinSecrets writes do).
    const lost = '{"method":"lost"}\n';
    const secret = '{"method":"secret","token":"${TOKEN}"}\n';
    await sendToKeeper(keeperDir, [
      { t: 'in', b: Buffer.from(lost).toString('base64') },
      { t: 'in', b: Buffer.from(secret.replace('${TOKEN}', 'abc')).toString('base64'), j: secret },
    ]);
    await captureHolds(keeperDir, echo(secret.replace('${TOKEN}', 'abc')));

    const second = await bridgeOn(stateDir, 0);
    const start = await second.client.waitForRecord((r) => r.kind === 'bridge-start' && r.data.adopted !== undefined);
    const journaled = second.client.records().filter((r) => r.kind === 'stdin' && r.seq > start.seq);
    expect(journaled.map((r) => r.kind === 'stdin' && [r.turnId, r.data.text]), 'the keeper\'s writes, journaled by the adopting bridge in order').toEqual([
      ['t1', lost],
      ['t1', secret],
    ]);
    // A host that sent these and lost their acks settles from the journal: landed, so it does not send them again.
    await second.client.request({ type: 'input', id: 'p', turnId: 't1', text: '{"method":"prompt"}\n' });
    await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000);
    const records = second.client.records();
    expect(texts(records, 'stdin'), 'one stdin record per write').toEqual([hello, lost, secret, '{"method":"prompt"}\n']);
    const got = texts(records, 'stdout').filter((t) => t.startsWith('{"got"'));
    expect(got, 'the CLI read each write once, in order').toEqual([hello, lost, secret.replace('${TOKEN}', 'abc'), '{"method":"prompt"}\n'].map(echo));
    const end = records.find((r) => r.kind === 'turn-end' && r.turnId === 't1');
    expect(end?.kind === 'turn-end' && end.data.reason).toBe('matched');
  });

  it('a journaled write that never reached the keeper (larger than the socket buffer, the keeper stopped) is written again by the adopting bridge, once', { timeout: 60_000 }, async () => {
    const first = await keptTurn();
    const { keeperPid } = first;
    // The keeper reads nothing while stopped: of a 2 MiB write, the socket takes its buffer's worth and the
    // bridge holds the rest. The ack says the stdin record is journaled.
    process.kill(keeperPid, 'SIGSTOP');
    const big = `${'x'.repeat(2 * 1024 * 1024)}\n`;
    try {
      expect(await first.client.request({ type: 'input', id: 'big', turnId: 't1', text: big })).toMatchObject({ type: 'ack' });
      await first.bridge.kill('SIGKILL');
    } finally {
      process.kill(keeperPid, 'SIGCONT');
    }
    const second = await bridgeOn(first.bridge.stateDir, 0);
    await second.client.waitForRecord((r) => r.kind === 'stdout' && r.data.text === echo(big));
    await second.client.request({ type: 'input', id: 'p', turnId: 't1', text: '{"method":"prompt"}\n' });
    await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000);
    const records = second.client.records();
    expect(texts(records, 'stdin').map((t) => (t.length > 1001 ? t.length : t)), 'one stdin record per write').toEqual([hello, big.length, '{"method":"prompt"}\n']);
    expect(texts(records, 'stdout').filter((t) => t.startsWith('{"got"')), 'the CLI read each write once, in order').toEqual(
      [hello, big, '{"method":"prompt"}\n'].map(echo),
    );
  });

  it("an adopted CLI's stdin placeholders (launch stdinSecrets) take its MCP URL and token, in a write redelivered at adoption and in new ones", { timeout: 60_000 }, async () => {
    const first = await keptTurn({ stdinSecrets: ['HARNESS_BRIDGE_MCP_URL', 'HARNESS_BRIDGE_MCP_TOKEN'] });
    await first.client.request({ type: 'input', id: 'e', turnId: 't1', text: '{"method":"env"}\n' });
    const said = await first.client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.startsWith('{"env"'));
    const [url, token] = (JSON.parse(said.kind === 'stdout' ? said.data.text : '{}') as { env: [string, string] }).env;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    // A journaled write the keeper never received (it reads nothing while stopped; 2 MiB is more than the socket takes): written again at adoption.
    const placeholder = '${HARNESS_BRIDGE_MCP_URL}';
    const big = `{"u":"${placeholder}","pad":"${'x'.repeat(2 * 1024 * 1024)}"}\n`;
    process.kill(first.keeperPid, 'SIGSTOP');
    try {
      expect(await first.client.request({ type: 'input', id: 'big', turnId: 't1', text: big })).toMatchObject({ type: 'ack' });
      await first.bridge.kill('SIGKILL');
    } finally {
      process.kill(first.keeperPid, 'SIGCONT');
    }
    const second = await bridgeOn(first.bridge.stateDir, 0);
    const prompt = '{"method":"prompt","t":"${HARNESS_BRIDGE_MCP_TOKEN}"}\n';
    await second.client.request({ type: 'input', id: 'p', turnId: 't1', text: prompt });
    await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000);
    const records = second.client.records();
    const got = texts(records, 'stdout').filter((t) => t.startsWith('{"got"'));
    expect(got.slice(-2), 'the placeholders substituted in what the CLI read').toEqual([
      JSON.stringify({ got: `len:${big.trimEnd().length - placeholder.length + url.length}` }),
      echo(prompt.replace('${HARNESS_BRIDGE_MCP_TOKEN}', token)),
    ]);
    expect(texts(records, 'stdin').slice(-2), 'the journal keeps the placeholders').toEqual([big, prompt]);
  });

  it('a restart with nothing lost journals nothing more', { timeout: 60_000 }, async () => {
    const first = await keptTurn();
    await first.client.request({ type: 'input', id: 'i', turnId: 't1', text: '{"method":"more"}\n' });
    await first.client.waitForRecord((r) => r.kind === 'stdout' && r.data.text === echo('{"method":"more"}'));
    await first.bridge.kill('SIGKILL');
    const second = await bridgeOn(first.bridge.stateDir, 0);
    await second.client.request({ type: 'input', id: 'p', turnId: 't1', text: '{"method":"prompt"}\n' });
    await second.client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1', 30_000);
    const records = second.client.records();
    expect(texts(records, 'stdin')).toEqual([hello, '{"method":"more"}\n', '{"method":"prompt"}\n']);
    expect(texts(records, 'stdout').filter((t) => t.startsWith('{"got"'))).toEqual([hello, '{"method":"more"}\n', '{"method":"prompt"}\n'].map(echo));
  });
});
