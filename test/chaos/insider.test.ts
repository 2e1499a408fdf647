// The insider attack suite (issue 14; docs/security.md#attack-suite): a command the CLI runs tries
// to act as the host. The fixture CLI runs test/chaos/insider/attack.mjs through its shell, the
// way a coding CLI's shell tool runs a command, under every isolation mode this machine offers;
// the attacker is told where everything is (state dir, bridge pid and port) and tries to read
// the token (file, handed-over file, environ, /proc, ps), reach the bridge's socket (directly and
// through the egress proxy), attach, approve, answer a host tool call, write the journal, use its
// MCP credential for anything but the running turn's tools, inject into the CLI's stdin, signal
// the bridge and `kill -9 -1`. One [figures] line per mode. The goal, as root on this machine:
// 0 successes in the default mode. `none` shows what isolation prevents (its kill -9 -1 is not
// run: as root it would take the machine's processes with it).
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { IsolationReport, JournalRecord, RecordOf } from '../../protocol/v1/index.ts';
import { connectClient, fixtureCli, repoRoot, startBridge, tempDir, type RunningBridge } from '../bridge/helpers.ts';
import { alive, figuresLine, killAllAttempt, readAttempts, type Attempt } from './insider/figures.ts';

const attackScript = join(repoRoot, 'test/chaos/insider/attack.mjs');
const root = process.getuid?.() === 0;

type ModeResult = { mode: string; report: IsolationReport | undefined; attempts: Attempt[] };

const bridges: RunningBridge[] = [];
const summary: ModeResult[] = [];
afterAll(async () => {
  for (const bridge of bridges) await bridge.kill();
});

/** Starts a bridge the way the kit does (token handed over in a file, never in env) and runs the attack in one turn. */
async function attack(isolation: string | undefined, cliUser?: string): Promise<ModeResult & { bridgeAlive: boolean; records: JournalRecord[]; hostDisplaced: boolean }> {
  const project = tempDir('hb-insider-project-');
  const stateDir = join(tempDir('hb-insider-'), 'state');
  const token = randomBytes(32).toString('hex');
  const tokenFile = `token.new.${randomBytes(8).toString('hex')}`;
  mkdirSync(stateDir, { mode: 0o700 });
  writeFileSync(join(stateDir, tokenFile), token, { mode: 0o600 });
  const bridge = await startBridge({
    stateDir,
    token,
    env: { HARNESS_BRIDGE_TOKEN: null },
    args: ['--token-file', tokenFile, ...(isolation ? ['--isolation', isolation] : []), ...(cliUser ? ['--cli-user', cliUser] : [])],
  });
  bridges.push(bridge);
  const { client, hello } = await connectClient(bridge);
  client.ws.on('error', () => undefined); // a displaced host's socket is closed under it (mode none)
  await client.attach(hello.lastSeq);
  const results = join(project, 'attack-results.ndjson');
  const mode = hello.isolation?.mode ?? 'none';
  const hints = { stateDir, bridgePid: bridge.ready.pid, port: bridge.port, results, tool: 'lookup', killAll: mode !== 'none' };
  const shell = `exec ${process.execPath} ${attackScript} '${JSON.stringify(hints)}'`;
  const started = client.request({
    type: 'start',
    id: 's',
    turnId: 'insider',
    launch: {
      argv: [process.execPath, fixtureCli, '--echo'],
      cwd: project,
      stdin: 'pipe',
      lifetime: 'session',
      turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }],
    },
    input: `${JSON.stringify({ type: 'prompt', text: 'run the shell tool', lines: 0, shell })}\n`,
    tools: [{ name: 'lookup', description: 'a host tool the turn offers' }],
  });
  await started.catch(() => undefined); // in mode none the insider may displace this host before the ack
  // The attacker's own host-tool call: the host (this test) answers it, as a host would — after the
  // attacker had its chance (it gives up waiting for its own forged answer after 2 s).
  const call = (await client.waitForRecord((r) => r.kind === 'tool-call', 60_000)) as RecordOf<'tool-call'>;
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const hostDisplaced = client.frames.some((f) => f.type === 'error' && f.code === 'not-owner');
  // A displaced host comes back like the kit's channel would: a new connection, attached from the start.
  const host = hostDisplaced ? (await connectClient(bridge)).client : client;
  if (hostDisplaced) await host.attach(0);
  host.send({ type: 'tool-result', id: 'host-answer', callId: call.data.callId, output: 'the host answer' });
  const end = (await host.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 'insider', 60_000).catch(() => undefined)) as RecordOf<'turn-end'> | undefined;
  expect(end, 'the turn ended').toBeDefined();
  const attempts = readAttempts(results);
  const bridgeAlive = alive(bridge.ready.pid);
  attempts.push(killAllAttempt(hints.killAll, bridgeAlive, mode));
  const records = host.records();
  await host.close();
  if (host !== client) await client.close();
  return { mode, report: hello.isolation, attempts, bridgeAlive, records, hostDisplaced };
}

function figures(result: ModeResult): string {
  return figuresLine(`mode=${result.mode}`, result.attempts);
}

describe('insider attack suite: a command the CLI runs tries to act as the host', () => {
  it.skipIf(!root)('default mode (auto, the bridge as root): every attempt is refused, the bridge lives, the host keeps its stream', { timeout: 180_000 }, async () => {
    const result = await attack(undefined);
    summary.push(result);
    console.log(figures(result));
    console.log(`[figures] insider mode=${result.mode} attempts-detail ${result.attempts.map((a) => `${a.attempt}=${a.success ? 'SUCCESS' : a.refusedBy}`).join(' ')}`);
    expect(result.report?.mode, `isolation reasons: ${result.report?.reasons.join('; ')}`).not.toBe('none');
    // Without a namespace the socket is reachable (attaching is not): the one attempt a uid alone does not refuse.
    expect(result.attempts.filter((a) => a.success).map((a) => a.attempt)).toEqual(result.report?.networkPolicy ? [] : ['reach-ws-direct']);
    expect(result.bridgeAlive).toBe(true);
    expect(result.hostDisplaced).toBe(false);
    // The forged answer never reached the journal (the host's may come too late for the attacker, who hung up).
    const answers = result.records.filter((r): r is RecordOf<'tool-result'> => r.kind === 'tool-result');
    expect(answers.map((r) => r.data.output)).not.toContain('forged by the insider');
    expect(result.records.some((r) => r.kind === 'tool-call'), 'the attacker\'s own host-tool call went through its MCP credential').toBe(true);
  });

  it.skipIf(!root)('uid mode: every attempt is refused', { timeout: 180_000 }, async () => {
    // Without a pid namespace its kill -9 -1 reaches every process of its uid: the session's own (docs/security.md#session-uid),
    // so other suites' CLIs on this machine live on.
    const result = await attack('uid');
    summary.push(result);
    console.log(figures(result));
    expect(result.report?.mode).toBe('uid');
    // Reaching the socket is not refused (shared network), attaching is.
    expect(result.attempts.filter((a) => a.success).map((a) => a.attempt)).toEqual(['reach-ws-direct']);
    expect(result.bridgeAlive).toBe(true);
  });

  it.skipIf(!root)('namespace mode (no uid of its own): every attempt is refused', { timeout: 180_000 }, async () => {
    const result = await attack('namespace');
    summary.push(result);
    console.log(figures(result));
    expect(result.report?.mode, `isolation reasons: ${result.report?.reasons.join('; ')}`).toBe('namespace');
    expect(result.attempts.filter((a) => a.success).map((a) => a.attempt)).toEqual([]);
    expect(result.bridgeAlive).toBe(true);
  });

  it('none: what isolation prevents (the insider gets the token and acts as the host)', { timeout: 180_000 }, async () => {
    const result = await attack('none');
    summary.push(result);
    console.log(figures(result));
    const won = new Set(result.attempts.filter((a) => a.success).map((a) => a.attempt));
    for (const attempt of ['read-token-file', 'attach-direct', 'write-journal', 'signal-bridge']) expect(won, attempt).toContain(attempt);
  });
});
