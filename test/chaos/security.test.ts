// Security properties of the bridge and the kit (issue 8): tokens checked
// before any frame (ws upgrade and MCP endpoint), the token in no log,
// journal, recording, diagnostic or error, private file modes, frame size
// limits, and ownership (a host that does not own the stream cannot act on it).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { PROTOCOL_LIMITS_V1, PROTOCOL_VERSION_V1, type JournalRecord } from '../../protocol/v1/index.ts';
import { createBridgeChannel } from '../../host/channel/index.ts';
import { defaultStateDir } from '../../host/harness.ts';
import { probeBridge } from '../../host/reach/probe.ts';
import { HttpRefusal, connectClient, fixtureLaunch, randomToken, startBridge, type RunningBridge } from '../bridge/helpers.ts';
import { createChaosKit, shapeOf, verifyTurn, type ChaosKit, type Part } from './chaos-kit.ts';

// Every bridge this file starts logs at debug level: the most it will ever write.
process.env.HARNESS_BRIDGE_LOG_LEVEL = 'debug';

const figures = { refused401: 0, mcpRefused401: 0, mcp: 'skipped', grepped: 0, grepBytes: 0, leaks: 0, modes: 0, tooLarge: 0, notOwner: 0 };
const bridges: RunningBridge[] = [];
let kit: ChaosKit;
let scratch: string;
beforeAll(async () => {
  kit = await createChaosKit('security');
  scratch = await mkdtemp(join(tmpdir(), 'hb-security-'));
  await chmod(scratch, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
});
afterAll(async () => {
  for (const bridge of bridges) await bridge.kill();
  await kit.cleanup();
  await rm(scratch, { recursive: true, force: true });
  console.log(
    `[figures] security upgrade-401=${figures.refused401} mcp-401=${figures.mcpRefused401} (mcp: ${figures.mcp}) token-grep files=${figures.grepped} bytes=${figures.grepBytes} leaks=${figures.leaks} ` +
      `private-modes-checked=${figures.modes} too-large=${figures.tooLarge} not-owner=${figures.notOwner}`,
  );
}, 60_000);

async function refusal(promise: Promise<unknown>): Promise<number | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    return error instanceof HttpRefusal ? error.status : -1;
  }
}

/** Opens a ws and records whether any frame arrived before the refusal. */
function rawUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number | null; frames: number }> {
  return new Promise((resolve) => {
    let frames = 0;
    const ws = new WebSocket(url, { headers });
    ws.on('message', () => frames++);
    ws.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, frames });
      ws.terminate();
    });
    ws.on('open', () => setTimeout(() => (ws.close(), resolve({ status: null, frames })), 200));
    ws.on('error', () => resolve({ status: -1, frames }));
  });
}

describe('security', () => {
  it('wrong, missing and other-session tokens get HTTP 401 on the upgrade, before any frame (header and query fallback)', async () => {
    const a = await startBridge();
    const b = await startBridge();
    bridges.push(a, b);
    const url = `ws://127.0.0.1:${a.port}/`;
    const cases: Array<[string, string, Record<string, string>]> = [
      ['missing', url, {}],
      ['wrong', url, { authorization: `Bearer ${randomToken()}` }],
      ['other session', url, { authorization: `Bearer ${b.token}` }],
      ['one char off', url, { authorization: `Bearer ${a.token.slice(0, -1)}${a.token.endsWith('A') ? 'B' : 'A'}` }],
      ['prefix', url, { authorization: `Bearer ${a.token.slice(0, 8)}` }],
      ['not bearer', url, { authorization: a.token }],
      ['wrong in query', `${url}?token=${encodeURIComponent(b.token)}`, {}],
    ];
    for (const [name, target, headers] of cases) {
      const result = await rawUpgrade(target, headers);
      expect(result, `${name} token`).toEqual({ status: 401, frames: 0 });
      figures.refused401++;
    }
    // The right token in the query fallback works; so does the header.
    expect(await refusal(connectClient(a, { tokenIn: 'query' }))).toBeNull();
    expect(await refusal(connectClient(a))).toBeNull();
    // The kit's probe reports it as unauthorized, not as "gone".
    const probe = await probeBridge(url, b.token, 2_000);
    expect(probe).toMatchObject({ ok: false, reason: 'unauthorized' });
    expect(JSON.stringify(probe)).not.toContain(b.token);
  });

  it('the MCP endpoint refuses wrong, missing and other-session tokens with 401 (and serves its own token)', async () => {
    const bridge = await startBridge();
    bridges.push(bridge);
    const other = await startBridge();
    bridges.push(other);
    // The CLI learns the endpoint from its env; this one writes URL and token to a scratch file (never to stdout: no journal).
    const envOut = async (target: RunningBridge, name: string): Promise<{ url: string; token: string } | null> => {
      const { client } = await connectClient(target);
      await client.attach(0);
      // Its project dir (cwd): where an isolated CLI may write (docs/security.md#modes).
      const project = join(scratch, name);
      await mkdir(project, { recursive: true });
      const file = join(project, 'env.json');
      const script = `require('fs').writeFileSync(${JSON.stringify(file)}, JSON.stringify({url: process.env.HARNESS_BRIDGE_MCP_URL ?? null, token: process.env.HARNESS_BRIDGE_MCP_TOKEN ?? null}))`;
      await client.request({ type: 'start', id: 's', turnId: `mcp-${name}`, launch: { argv: [process.execPath, '-e', script], cwd: project } });
      await client.waitForRecord((r) => r.kind === 'turn-end');
      await client.close();
      const written = JSON.parse(await readFile(file, 'utf8')) as { url: string | null; token: string | null };
      return written.url === null || written.token === null ? null : { url: written.url, token: written.token };
    };
    const mine = await envOut(bridge, 'mine');
    if (mine === null) {
      figures.mcp = 'skipped: the bridge exposes no MCP endpoint to its CLI';
      console.log(`security: MCP endpoint cases skipped — ${figures.mcp}`);
      return;
    }
    const theirs = await envOut(other, 'theirs');
    figures.mcp = 'checked';
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const post = (token: string | null, url = mine.url) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
        body,
      });
    const refused: Array<[string, string | null]> = [
      ['missing', null],
      ['wrong', randomToken()],
      ['the bridge host token (not the MCP one)', bridge.token],
      ['another session’s MCP token', theirs?.token ?? randomToken()],
      ['another session’s host token', other.token],
    ];
    for (const [name, token] of refused) {
      const response = await post(token);
      expect(response.status, `MCP ${name}`).toBe(401);
      expect(await response.text(), 'no JSON-RPC before auth').toBe('');
      figures.mcpRefused401++;
    }
    expect((await post(null, `${mine.url}?token=${encodeURIComponent(mine.token)}`)).status, 'no token in the URL').toBe(401);
    figures.mcpRefused401++;
    expect((await post(mine.token)).status).toBe(200);
  });

  it('the token appears in no log, journal, recording, diagnostic or error after a full session with recording and debug logs', async () => {
    const recordDir = join(scratch, 'recordings');
    await mkdir(recordDir);
    const host = await kit.open('secret', undefined, { settings: { recordDir } });
    const stateDir = defaultStateDir(join(kit.root, 'sandboxes', 'secret'), 'fixture', 'secret');
    const token = (await readFile(join(stateDir, 'token'), 'utf8')).trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    const errors: string[] = [];
    const prompt = 'secret LINES:20 INTERVAL:1';
    const parts: Part[] = [];
    await (await host.session.doPromptTurn({ prompt, emit: (part) => parts.push(part) })).done;
    expect(verifyTurn(shapeOf(prompt), parts)).toMatchObject({ ok: true });
    // A suspend/resume (token read back from the sandbox), drops, and failures that produce error messages.
    const state = await host.session.doSuspendTurn();
    expect(JSON.stringify(state)).not.toContain(token);
    host.proxy()?.dropAll();
    await host.dispose();
    const resumed = await kit.open('secret', state, { settings: { recordDir } });
    const more: Part[] = [];
    await (await resumed.session.doPromptTurn({ prompt: 'again LINES:5', emit: (part) => more.push(part) })).done;
    resumed.proxy()?.dropAll();
    try {
      await resumed.session.doContinueTurn({ emit: () => undefined });
    } catch (error) {
      errors.push(String(error), (error as Error).stack ?? '', JSON.stringify(error));
    }
    // That host lets go of the bridge first: otherwise its reconnect, late on a loaded machine, displaces the channel below.
    await Promise.resolve(resumed.session.doDetach()).catch((error: unknown) => errors.push(String(error), JSON.stringify(error)));
    await resumed.dispose();
    // A channel with bridge diagnostics forwarded at debug level, recording too; and a refused token.
    const port = (JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { port: number }).port;
    const diagnostics: unknown[] = [];
    const channel = createBridgeChannel({
      url: `ws://127.0.0.1:${port}/`,
      token,
      cursor: 0,
      recordTo: join(recordDir, 'diagnostics-channel.ndjson'),
      onRecords: () => undefined,
      onDiagnostic: (d) => diagnostics.push(d),
    });
    await channel.whenLive();
    await channel.request({ type: 'diagnostics', enabled: true, level: 'debug' });
    await channel.request({ type: 'start', turnId: 'diag-turn', launch: fixtureLaunch(['--lines', '3']) });
    await channel.request({ type: 'input', turnId: 'no-such-turn', text: 'x' }).catch((error: unknown) => errors.push(String(error), JSON.stringify(error)));
    // A refused token while this channel forwards the bridge's logs (the refusal is logged).
    const refusedChannel = createBridgeChannel({ url: `ws://127.0.0.1:${port}/`, token: `${token}x`, cursor: 0, onRecords: () => undefined, onDiagnostic: (d) => diagnostics.push(d) });
    const refusedWith = await refusedChannel.closed;
    errors.push(String(refusedWith), refusedWith?.stack ?? '', JSON.stringify(refusedWith));
    expect(refusedWith?.code).toBe('unauthorized');
    // Forwarded once the channel has caught up with the journal (none while it is behind): wait for one (a hang guard, not a pass condition).
    for (let i = 0; i < 400 && !diagnostics.some((d) => (d as { source?: string }).source === 'bridge'); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    await channel.close();
    expect(diagnostics.some((d) => (d as { source?: string }).source === 'bridge'), `bridge logs were forwarded: ${JSON.stringify(diagnostics).slice(0, 600)}`).toBe(true);

    // Grep the whole sandbox (state dir: journal, bridge.log, bridge.json; all but the token file itself), the recordings, everything captured.
    const haystacks: Array<[string, string]> = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile() && entry.name !== 'token') haystacks.push([path, readFileSync(path, 'latin1')]);
      }
    };
    walk(recordDir);
    walk(join(kit.root, 'sandboxes'));
    haystacks.push(['diagnostics', JSON.stringify(diagnostics)], ['errors', errors.join('\n')], ['kit diagnostics', JSON.stringify(kit.diagnostics)]);
    expect(haystacks.some(([path]) => path.endsWith('.ndjson') && path.includes('recordings')), 'recordings were written').toBe(true);
    for (const [path, text] of haystacks) {
      figures.grepped++;
      figures.grepBytes += text.length;
      if (text.includes(token)) {
        figures.leaks++;
        throw new Error(`the bridge token leaked into ${path}`);
      }
    }
    expect(haystacks.some(([path]) => path.endsWith('journal.ndjson')) && haystacks.some(([path]) => path.endsWith('bridge.log')), 'journal and log were grepped').toBe(true);
    await resumed.session.doDestroy();
    await resumed.dispose();
  });

  it('the state dir is 0700 (0711 when the CLI has a uid of its own: passable to its dirs, never listable), journal/token/ready/log files 0600, the CLI\'s own dirs 0700 and its', async () => {
    const bridge = await startBridge({ env: { HARNESS_BRIDGE_TOKEN: null } }); // token written to the state dir
    bridges.push(bridge);
    const { client, hello } = await connectClient({ port: bridge.port, token: readFileSync(join(bridge.stateDir, 'token'), 'utf8').trim() });
    await client.attach(0);
    await client.request({ type: 'start', id: 's', turnId: 'modes', launch: fixtureLaunch(['--lines', '2']) });
    await client.waitForRecord((r) => r.kind === 'turn-end');
    await client.close();
    const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);
    const cliUid = hello.isolation?.cliUid;
    expect(mode(bridge.stateDir)).toBe(cliUid === undefined ? '700' : '711');
    figures.modes++;
    for (const name of readdirSync(bridge.stateDir)) {
      const info = statSync(join(bridge.stateDir, name));
      if (name === 'home' || name === 'tmp') {
        // The CLI's own HOME and TMPDIR (docs/security.md#modes): its uid's, closed to everyone else.
        expect(`${name} ${mode(join(bridge.stateDir, name))} ${info.uid}`).toBe(`${name} 700 ${cliUid ?? process.getuid?.()}`);
      } else if (name === 'keepers') {
        // Where keepers wait and keep their CLIs' dirs (bridge/survive/keeper-dir.ts): the first waits from the bridge's start.
        expect(`${name} ${mode(join(bridge.stateDir, name))} ${info.uid}`).toBe(`${name} 700 ${process.getuid?.()}`);
      } else if (name === 'jail') {
        // sandbox-runtime's settings (read by the CLI's uid before the jail hides the state dir) and the egress port.
        expect(`${name} ${mode(join(bridge.stateDir, name))} ${info.uid}`).toBe(`${name} 711 ${process.getuid?.()}`);
        for (const inner of readdirSync(join(bridge.stateDir, name))) expect(mode(join(bridge.stateDir, name, inner))).toMatch(/^6[04]{2}$/);
      } else {
        expect(`${name} ${mode(join(bridge.stateDir, name))}`).toBe(`${name} 600`);
      }
      figures.modes++;
    }
    for (const name of ['journal.ndjson', 'token', 'bridge.json', 'bridge.log']) expect(readdirSync(bridge.stateDir)).toContain(name);
    // Even under a permissive umask the bridge keeps them private.
    const loose = join(await mkdtemp(join(tmpdir(), 'hb-umask-')), 'state');
    execFileSync('sh', ['-c', `umask 000 && mkdir -p "${loose}"`]);
    const permissive = await startBridge({ stateDir: loose });
    bridges.push(permissive);
    expect(mode(loose)).toMatch(cliUid === undefined ? /^700$/ : /^7[01]{2}$/);
    expect(Number.parseInt(mode(loose), 8) & 0o066, 'no group/other read or write').toBe(0);
    for (const name of readdirSync(loose).filter((n) => n !== 'jail')) expect(`${name} ${mode(join(loose, name))}`).toBe(`${name} 600`);
    figures.modes += 1 + readdirSync(loose).length;
  });

  it('a frame over maxFrameBytes is refused with too-large and the connection stays usable', async () => {
    const bridge = await startBridge();
    bridges.push(bridge);
    const { client } = await connectClient(bridge);
    for (const size of [PROTOCOL_LIMITS_V1.maxFrameBytes + 1, PROTOCOL_LIMITS_V1.maxFrameBytes * 2]) {
      client.send(JSON.stringify({ type: 'input', id: 'big', turnId: 't', text: 'x'.repeat(size) }));
      const error = await client.next('error', 30_000);
      expect(error.code).toBe('too-large');
      figures.tooLarge++;
    }
    client.send({ type: 'ping', t: 7 });
    expect(await client.next('pong')).toMatchObject({ t: 7 });
    await client.attach(0);
    expect(await client.request({ type: 'start', id: 'after', turnId: 'after', launch: fixtureLaunch(['--lines', '1']) })).toMatchObject({ type: 'ack' });
    // Beyond ws's hard maxPayload the socket is closed with 1009 instead of buffering it.
    client.send('y'.repeat(PROTOCOL_LIMITS_V1.maxPayloadBytes + 1));
    expect((await client.closed).code).toBe(1009);
    const again = await connectClient(bridge);
    expect(again.hello.type).toBe('hello');
    await again.client.close();
  });

  it('a host that never attached, or was displaced by a newer attach, cannot act on the running turn (not-owner)', async () => {
    const bridge = await startBridge();
    bridges.push(bridge);
    const owner = await connectClient(bridge);
    await owner.client.attach(0);
    expect(await owner.client.request({ type: 'start', id: 's', turnId: 'owned', launch: fixtureLaunch(['--lines', '400', '--interval-ms', '5']) })).toMatchObject({ type: 'ack' });
    const stranger = await connectClient(bridge);
    const attempts = [
      { type: 'abort', id: 'a1', turnId: 'owned' },
      { type: 'signal', id: 'a2', turnId: 'owned', signal: 'SIGKILL' },
      { type: 'input', id: 'a3', turnId: 'owned', text: 'x\n' },
      { type: 'start', id: 'a4', turnId: 'mine', launch: fixtureLaunch(['--lines', '1']) },
      { type: 'rerun', id: 'a5', turnId: 'r', of: 'owned', launch: fixtureLaunch(['--lines', '1']) },
      { type: 'tool-result', id: 'a6', callId: 'c', output: 1 },
      { type: 'diagnostics', id: 'a7', enabled: true },
      { type: 'stop', id: 'a8' },
      { type: 'destroy', id: 'a9' },
    ];
    for (const frame of attempts) {
      expect(await stranger.client.request(frame), `never attached: ${frame.type}`).toMatchObject({ type: 'error', code: 'not-owner', id: frame.id });
      figures.notOwner++;
    }
    // Displaced: a newer attach takes the stream; the old owner is told not-owner and closed (4000).
    const newer = await connectClient(bridge);
    await newer.client.attach(0);
    const told = await owner.client.waitFor((f) => f.type === 'error' && f.code === 'not-owner');
    expect(told).toMatchObject({ code: 'not-owner' });
    expect((await owner.client.closed).code).toBe(4000);
    figures.notOwner++;
    // The stranger still cannot act, and the turn ran on untouched: no abort, no signal from anyone.
    expect(await stranger.client.request({ type: 'abort', id: 'late', turnId: 'owned' })).toMatchObject({ code: 'not-owner' });
    figures.notOwner++;
    const end = await newer.client.waitForRecord((r) => r.kind === 'turn-end', 60_000);
    expect(end).toMatchObject({ turnId: 'owned', data: { reason: 'exit', code: 0 } });
    const records: JournalRecord[] = newer.client.records();
    expect(records.filter((r) => r.kind === 'signal' || r.kind === 'stdin')).toEqual([]);
    expect(records.some((r) => r.turnId === 'mine' || r.turnId === 'r')).toBe(false);
    void PROTOCOL_VERSION_V1;
    await stranger.client.close();
    await newer.client.close();
  });
});
