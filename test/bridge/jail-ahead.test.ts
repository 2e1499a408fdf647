// A jail started ahead (bridge/survive/jail-ahead.ts, docs/bridge-internals.md#jail-ahead), through the
// built bridge in uid+namespace with real bubblewrap and sandbox-runtime: after a kept turn (or a host's
// `expect` frame), the spare keeper starts the jail its next CLI will likely need; a launch like that one takes it and sees the
// same env, cwd and network as one jailed the usual way; a launch that does not fit is jailed the usual way,
// and the jail started ahead is ended. Needs root, bubblewrap and sandbox-runtime (as CI has: scripts/test-setup.sh).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findSrt } from '../../bridge/jail/srt-path.ts';
import type { JournalRecord, RecordOf } from '../../protocol/v1/index.ts';
import { isAlive, waitingKeepers } from '../../host/sandbox/local/pids.ts';
import { bridgeBundle, connectClient, eventually, fixtureLaunch, startBridge, tempDir, type RunningBridge, type TestClient } from './helpers.ts';

const srt = findSrt(undefined, bridgeBundle, createRequire);
const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0 && !('error' in srt);

const bridges: RunningBridge[] = [];
const clients: TestClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(bridges.splice(0).map((bridge) => bridge.kill()));
});

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

const names = ['PATH', 'HOME', 'TMPDIR', 'NO_PROXY', 'HTTP_PROXY', 'SANDBOX_RUNTIME', 'HB_TEST_QUOTED', 'HB_JAIL_MCP_PORT'];
/** Set by the launch, and by srt in the jail: srt's value stands, as bubblewrap's --setenv has it. */
const proxy = 'http://127.0.0.1:9/';
const quoted = `it's "quoted" $HOME \`x\`\nand a second line`;

/** A kept CLI per turn that prints its cwd and env. */
function launchOf(cwd: string) {
  const args = ['--json', '--lines', '1', '--print-cwd', ...names.flatMap((name) => ['--print-env', name])];
  return fixtureLaunch(args, { survive: true, cwd, env: { HB_TEST_QUOTED: quoted, HTTP_PROXY: proxy } });
}

async function session() {
  const root = tempDir('hb-jail-ahead-');
  const project = join(root, 'project');
  const other = join(root, 'other');
  mkdirSync(project, { recursive: true });
  mkdirSync(other, { recursive: true });
  const bridge = await startBridge({ stateDir: join(root, '.harness-bridge', 'sessions', 'ahead'), args: ['--isolation', 'uid+namespace'] });
  bridges.push(bridge);
  const { client, hello } = await connectClient(bridge);
  clients.push(client);
  expect(hello.isolation?.mode).toBe('uid+namespace');
  await client.attach(hello.lastSeq);
  /** A kept turn (a CLI process of its own) to its end: what it printed, and its keeper's spec. */
  const turn = async (turnId: string, cwd: string) => {
    await client.request({ type: 'start', id: `s-${turnId}`, turnId, launch: launchOf(cwd) });
    const spawn = (await client.waitForRecord((r) => r.kind === 'spawn' && r.turnId === turnId)) as RecordOf<'spawn'>;
    let spec: { ahead?: unknown } = {};
    try {
      spec = JSON.parse(readFileSync(join(bridge.stateDir, 'keepers', spawn.data.keeper!, 'spec.json'), 'utf8')) as typeof spec;
    } catch {
      // its dir is removed once the exit is journaled
    }
    const end = (await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === turnId)) as RecordOf<'turn-end'>;
    const lines = client
      .records()
      .filter((r): r is JournalRecord & { kind: 'stdout' } => r.kind === 'stdout' && r.turnId === turnId)
      .map((r) => JSON.parse(r.data.text) as { type: string; name?: string; value?: string | null; cwd?: string });
    return { end, spec, env: Object.fromEntries(lines.filter((l) => l.type === 'env').map((l) => [l.name, l.value] as const)), cwd: lines.find((l) => l.type === 'cwd')?.cwd, lines: lines.length };
  };
  /** The waiting spare keeper, once the jail it started ahead runs under it. */
  const spareWithJail = () =>
    eventually(async () => {
      const [spare] = await waitingKeepers(bridge.stateDir);
      return spare !== undefined && childrenOf(spare).length > 0 && { spare, jail: childrenOf(spare)[0]! };
    }, 20_000, 'a spare keeper with its jail started ahead');
  /** What the bridge logged of a jail started ahead that could not be taken (the message of a failed expectation). */
  const aheadLog = () =>
    readFileSync(join(bridge.stateDir, 'bridge.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes('started ahead'))
      .join('\n') || 'nothing logged of the jail started ahead';
  return { bridge, client, project, other, turn, spareWithJail, launchOf, aheadLog };
}

describe.skipIf(!canNamespace)('a jail started ahead by the spare keeper (uid+namespace)', () => {
  it('a launch like the last takes it, and its CLI sees what a CLI jailed the usual way sees', async () => {
    const { turn, project, spareWithJail, aheadLog } = await session();
    const first = await turn('t1', project);
    expect(first.spec.ahead).toBeUndefined(); // nothing was known to make a jail ahead for
    const { jail } = await spareWithJail();
    const second = await turn('t2', project);
    expect(second.spec.ahead, aheadLog()).toBeDefined();
    expect(second.end.data.reason).toBe(first.end.data.reason);
    expect(second.lines).toBe(first.lines);
    expect(second.cwd).toBe(project);
    expect(second.env).toEqual(first.env);
    expect(second.env.HB_TEST_QUOTED).toBe(quoted);
    expect(second.env.HB_JAIL_MCP_PORT).toBeNull();
    expect(second.env.SANDBOX_RUNTIME).toBe('1');
    expect(second.env.HTTP_PROXY).not.toBe(proxy);
    // The jail that ran the CLI was the one started ahead (its bubblewrap has gone with the CLI).
    await eventually(() => !isAlive(jail), 15_000, 'the jail ahead ended with its CLI');
  });

  it("a host's expect frame makes the first CLI's jail ahead, and the first turn takes it", async () => {
    const { client, turn, project, spareWithJail, launchOf, aheadLog } = await session();
    expect(await client.request({ type: 'expect', id: 'x1', launch: launchOf(project) })).toMatchObject({ type: 'ack', id: 'x1' });
    const { jail } = await spareWithJail();
    const first = await turn('t1', project);
    expect(first.spec.ahead, aheadLog()).toBeDefined();
    expect(first.cwd).toBe(project);
    expect(first.env.HB_TEST_QUOTED).toBe(quoted);
    expect(first.env.HTTP_PROXY).not.toBe(proxy);
    await eventually(() => !isAlive(jail), 15_000, 'the jail ahead ended with its CLI');
  });

  it('a launch that does not fit is jailed the usual way, and the jail started ahead ends', async () => {
    const { turn, project, other, spareWithJail } = await session();
    await turn('t1', project);
    const { jail } = await spareWithJail();
    const elsewhere = await turn('t2', other);
    expect(elsewhere.spec.ahead).toBeUndefined();
    expect(elsewhere.cwd).toBe(other);
    expect(elsewhere.env.HB_TEST_QUOTED).toBe(quoted);
    await eventually(() => !isAlive(jail), 15_000, 'the jail started ahead ended');
  });

  it('a bridge that stops ends its spare keeper and the jail it started ahead', async () => {
    const { client, turn, project, spareWithJail } = await session();
    await turn('t1', project);
    const { spare, jail } = await spareWithJail();
    expect(await client.request({ type: 'stop', id: 'bye' })).toMatchObject({ type: 'ack' });
    await eventually(() => !isAlive(spare) && !isAlive(jail), 15_000, 'the spare keeper and its jail gone');
  });
});

