// The exec transport (docs/remote-providers.md#exec-transport): the local
// sandbox with its port methods removed, so the host reaches every bridge
// through relays spawned over the sandbox's own spawn stdio. The session tests
// that matter run over it unchanged: a turn, a lost exec stream mid-turn,
// suspend/continue in a new host (attach), a SIGKILLed bridge (replay, rerun),
// and a basic SandboxSession with and without stdin on its spawn.
import { spawn as spawnChild } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import type { HarnessV1NetworkSandboxSession, SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { relayShellCommand } from '../../host/reach/exec-relay.ts';
import type { LocalSandboxProcess } from '../../host/sandbox/local/process.ts';
import { createKit, runTurn, startTurn, textOf, type Kit } from './session-helpers.ts';

const bridgeFile = join(import.meta.dirname, '../../dist/bridge.mjs');

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('exec', { survive: false }); // the rerun rung: a CLI that dies with its bridge
});
afterAll(async () => {
  await kit.cleanup();
});

type Relays = { spawned: number; live: Set<LocalSandboxProcess> };

/** The sandbox without getPortEndpoint/getPortUrl (a remote engine with exec only); counts the relays its spawn starts. */
function execOnly(relays: Relays) {
  return (sandbox: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => {
    const { getPortEndpoint: _endpoint, getPortUrl: _url, ...rest } = sandbox as HarnessV1NetworkSandboxSession & Record<string, unknown>;
    const restricted = sandbox.restricted() as SandboxSession & { spawn: (o: object) => Promise<LocalSandboxProcess> };
    const spawn = async (options: { command: string }) => {
      const process = await restricted.spawn(options);
      if (options.command === relayShellCommand) {
        relays.spawned++;
        relays.live.add(process);
        void Promise.resolve(process.wait()).finally(() => relays.live.delete(process));
      }
      return process;
    };
    return { ...rest, restricted: () => ({ ...restricted, spawn }) } as unknown as HarnessV1NetworkSandboxSession;
  };
}

const deltasOf = (parts: HarnessV1StreamPart[]) => parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta);
const expectedDeltas = (prompt: string, n: number) => Array.from({ length: n }, (_, i) => `${prompt} #${i}\n`);

describe('relay mode of the bridge file', () => {
  it('exits 69 with the reason when nothing listens, 64 for a state dir without bridge.json, and carries bytes both ways', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hb-relay-'));
    try {
      expect(await runRelay(['1'], '')).toMatchObject({ code: 69, stderr: expect.stringMatching(/cannot connect to 127\.0\.0\.1:1/) });
      expect(await runRelay([dir], '')).toMatchObject({ code: 64, stderr: expect.stringMatching(/no bridge\.json/) });
      const net = await import('node:net');
      const server = net.createServer((socket) => {
        socket.on('data', (data) => socket.write(`echo:${data}`));
        socket.on('end', () => socket.end());
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as { port: number }).port;
      await writeFile(join(dir, 'bridge.json'), JSON.stringify({ port }));
      expect(await runRelay([dir], 'hello')).toEqual({ code: 0, stdout: 'echo:hello', stderr: '' });
      server.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('sessions over the exec transport', () => {
  it('runs turns with no port method: the probe goes through a relay, and the channel adopts its socket', async () => {
    const relays: Relays = { spawned: 0, live: new Set() };
    const { session } = await kit.start('exec-turn', { wrap: execOnly(relays) });
    const parts = await runTurn(session, 'over exec LINES:30');
    expect(textOf(parts)).toBe(expectedDeltas('over exec LINES:30', 30).join(''));
    expect(parts.at(-1)?.type).toBe('finish');
    const second = await runTurn(session, 'again LINES:2');
    expect(textOf(second)).toBe('again LINES:2 #0\nagain LINES:2 #1\n');
    expect(relays.spawned, 'one relay for the start probe, whose socket the channel adopted (host/reach/spare-socket.ts)').toBe(1);
    console.log(`[figures] exec-transport turn: relays spawned=${relays.spawned} deltas=${deltasOf(parts).length}`);
    await session.doDestroy();
    await waitFor(() => relays.live.size === 0);
    expect(relays.live.size, 'no relay outlives the session').toBe(0);
  });

  it('a lost exec stream mid-turn is invisible to the consumer: the channel reconnects through a new relay, every part once', async () => {
    const relays: Relays = { spawned: 0, live: new Set() };
    const { session } = await kit.start('exec-drop', { wrap: execOnly(relays) });
    const prompt = 'dropped LINES:120 INTERVAL:3';
    let killed = 0;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n % 30 === 0) for (const relay of relays.live) void relay.kill().then(() => killed++);
    });
    await control.done;
    expect(deltasOf(parts)).toEqual(expectedDeltas(prompt, 120));
    expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
    expect(killed, 'relays were killed mid-turn').toBeGreaterThan(0);
    expect(relays.spawned, 'each lost stream was replaced by a new relay').toBeGreaterThan(1);
    console.log(`[figures] exec-transport drops: relays killed=${killed} spawned=${relays.spawned}`);
    await session.doDestroy();
  });

  it('suspend mid-turn → a new host over exec → continue: the attach rung, every delta once', async () => {
    const relays: Relays = { spawned: 0, live: new Set() };
    const { session } = await kit.start('exec-slice', { wrap: execOnly(relays) });
    const prompt = 'sliced LINES:80 INTERVAL:4';
    let suspended: Promise<HarnessV1ResumeState> | null = null;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 20 && suspended === null) suspended = Promise.resolve(session.doSuspendTurn());
    });
    await control.done;
    const resumed = await kit.resume('exec-slice', await suspended!, { wrap: execOnly(relays) });
    const rest: HarnessV1StreamPart[] = [];
    const continued = await resumed.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await continued.done;
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['attach']);
    expect(deltasOf([...parts, ...rest])).toEqual(expectedDeltas(prompt, 80));
    expect(rest.filter((p) => p.type === 'stream-start'), 'a continued slice gets no second stream-start').toHaveLength(0);
    await resumed.session.doDestroy();
  });

  it('bridge SIGKILL mid-turn over exec: the replay rung delivers everything journaled, then the rerun rung recomputes, marked', async () => {
    const relays: Relays = { spawned: 0, live: new Set() };
    const { session } = await kit.start('exec-sigkill', { wrap: execOnly(relays) });
    const prompt = 'crash LINES:200 INTERVAL:5';
    let suspended: Promise<HarnessV1ResumeState> | null = null;
    const { parts, control } = await startTurn(session, prompt, (_p, n) => {
      if (n === 30 && suspended === null) {
        suspended = (async () => {
          const state = await session.doSuspendTurn();
          const stateDir = (state.data as { stateDir: string }).stateDir;
          const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
          process.kill(pid, 'SIGKILL');
          return state;
        })();
      }
    });
    await control.done;
    const resumed = await kit.resume('exec-sigkill', await suspended!, { wrap: execOnly(relays) });
    const rest: HarnessV1StreamPart[] = [];
    const continued = await resumed.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await continued.done;
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['replay', 'rerun']);
    const all = [...parts, ...rest];
    const marker = all.findIndex((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message)));
    expect(marker, 'a recomputed marker stands where the rerun began').toBeGreaterThan(0);
    const before = deltasOf(all.slice(0, marker));
    expect(before).toEqual(expectedDeltas(prompt, before.length));
    expect(before.length).toBeGreaterThanOrEqual(25);
    expect(deltasOf(all.slice(marker))).toEqual(expectedDeltas(prompt, 200));
    console.log(`[figures] exec-transport sigkill: kept before kill=${before.length} rungs=replay,rerun relays=${relays.spawned}`);
    await resumed.session.doDestroy();
  });

  it('a basic SandboxSession runs over exec without resolvePort; one whose spawn gives no stdin is refused with HarnessCapabilityUnsupportedError', async () => {
    const box = await kit.provider.createSession({ sessionId: 'exec-basic' });
    try {
      const basic = box.restricted();
      const harness = kit.harness();
      const session = await harness.doStart({ sessionId: 'exec-basic', sandboxSession: basic, sessionWorkDir: box.defaultWorkingDirectory });
      expect(textOf(await runTurn(session, 'basic LINES:3'))).toBe(expectedDeltas('basic LINES:3', 3).join(''));
      await session.doDestroy();

      const noStdin = { ...basic, spawn: (options: Parameters<SandboxSession['spawn']>[0]) => basic.spawn({ ...options, stdin: false }) };
      const error = await kit
        .harness()
        .doStart({ sessionId: 'exec-basic-2', sandboxSession: noStdin, sessionWorkDir: box.defaultWorkingDirectory })
        .then(() => undefined, (e: unknown) => e);
      expect(HarnessCapabilityUnsupportedError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/getPortEndpoint.*stdin/s);
    } finally {
      await box.destroy();
    }
  });
});

function runRelay(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnChild(process.execPath, [bridgeFile, '--relay', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    if (input) child.stdin.write(input);
    // Let the echo come back before our end closes the connection.
    setTimeout(() => child.stdin.end(), input ? 300 : 0);
  });
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}
