// Seeded SIGKILL schedules around a host tool call of a surviving CLI (launch survive; the keeper's
// MCP relay, docs/bridge-internals.md#survive-mcp-relay): the bridge is killed before the call,
// while it waits for the host, or right after the host answered — once or twice — and the next
// bridge adopts the CLI. Each schedule counts what reached the CLI: the host's answer exactly once,
// one tool-call and one tool-result in the journal, the turn ending with the CLI's exit 0. Half the
// schedules run the CLI in a network namespace, where the relay is reached through the keeper's egress proxy.
// Approval schedules kill the bridge (once or twice) while a kept CLI waits on its stdin for an approval; the
// last bridge's host answers it, and the CLI must have asked once and read the answer once.
// HB_SURVIVE_MCP_SEED fixes the seed; HB_CHAOS_SCALE scales the schedule count.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalRecord, RecordOf } from '../../protocol/v1/index.ts';
import { connectClient, fixtureCli, repoRoot, startBridge, type RunningBridge, type TestClient } from '../bridge/helpers.ts';
import { scaled } from './chaos-kit.ts';
import { seeded } from './fuzz-frames.ts';

const seed = Number(process.env.HB_SURVIVE_MCP_SEED ?? Date.now() % 2 ** 31);
const schedules = scaled(24, 4);
const approvalSchedules = scaled(12, 2);
// Odd schedules run the CLI in a network namespace (the default isolation as root with bubblewrap), whose only way
// to the relay is its keeper's egress proxy (docs/security.md#survive-namespace); even ones outside one (uid).
const canNamespace = process.getuid?.() === 0 && spawnSync('bwrap', ['--version']).status === 0;
const isolationOf = (n: number) => (n % 2 === 1 && canNamespace ? ['--isolation', 'uid+namespace'] : ['--isolation', process.getuid?.() === 0 ? 'uid' : 'none']);
const tool = { name: 'echo_upper', description: 'upper-cases text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
const when = ['before-call', 'pending', 'answered'] as const;

const live = { bridges: [] as RunningBridge[], clients: [] as TestClient[], groups: [] as number[], keepers: [] as string[] };
const approvals = { schedules: 0, kills: 0, namespaced: 0, asked: 0, ran: 0, denied: 0, lost: 0, doubled: 0 };
const figures = { schedules: 0, namespaced: 0, kills: 0, byWhen: { 'before-call': 0, pending: 0, answered: 0 } as Record<(typeof when)[number], number>, twice: 0, lost: 0, doubled: 0 };

async function bridgeOn(n: number, stateDir?: string): Promise<{ bridge: RunningBridge; client: TestClient }> {
  const bridge = await startBridge({ ...(stateDir === undefined ? {} : { stateDir }), args: isolationOf(n) });
  live.bridges.push(bridge);
  const { client, hello } = await connectClient(bridge);
  live.clients.push(client);
  await client.attach(stateDir === undefined ? hello.lastSeq : 0);
  return { bridge, client };
}

const unanswered = (records: readonly JournalRecord[]) => {
  const answered = new Set(records.filter((r) => r.kind === 'tool-result').map((r) => (r as RecordOf<'tool-result'>).data.callId));
  return records.find((r) => r.kind === 'tool-call' && !answered.has((r as RecordOf<'tool-call'>).data.callId)) as RecordOf<'tool-call'> | undefined;
};

/** One schedule; returns what the CLI read and the journal held. */
async function schedule(n: number, random: () => number): Promise<void> {
  const kill = when[Math.floor(random() * when.length)]!;
  const twice = random() < 0.33;
  const delayMs = Math.floor(random() * 200);
  const answer = `ANSWER-${n}`;
  figures.byWhen[kill]++;
  if (isolationOf(n).includes('uid+namespace')) figures.namespaced++;
  if (twice) figures.twice++;
  let { bridge, client } = await bridgeOn(n);
  const stateDir = bridge.stateDir;
  const turnId = `t${n}`;
  await client.request({
    type: 'start',
    id: 's',
    turnId,
    launch: { argv: [process.execPath, join(repoRoot, 'test/fixtures/mcp-client.mjs'), '--call', 'echo_upper', '--args', `{"text":"${n}"}`, '--delay-ms', String(delayMs)], survive: true },
    tools: [tool],
  });
  const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
  live.groups.push(spawn.data.pid);
  live.keepers.push(join(stateDir, 'keepers', spawn.data.keeper!));
  if (kill === 'before-call') await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.includes('"step":"tools/list"'));
  else {
    const call = (await client.waitForRecord((r) => r.kind === 'tool-call')) as RecordOf<'tool-call'>;
    if (kill === 'answered') {
      expect(await client.request({ type: 'tool-result', id: 'r', callId: call.data.callId, output: answer })).toMatchObject({ type: 'ack' });
    }
  }
  for (let k = 0; k < (twice ? 2 : 1); k++) {
    await bridge.kill('SIGKILL');
    figures.kills++;
    ({ bridge, client } = await bridgeOn(n, stateDir));
    if (k === 0 && twice) await client.waitForRecord((r) => r.kind === 'tool-call' || r.kind === 'turn-end', 20_000); // the second kill lands with the call made (or the turn over)
  }
  // The host of the last bridge answers whatever call still waits (the re-delivered one, or the call made after the kill).
  const pending = unanswered(client.records()) ?? ((await client.waitForRecord((r) => r.kind === 'tool-call' || r.kind === 'turn-end', 20_000)), unanswered(client.records()));
  if (pending) expect(await client.request({ type: 'tool-result', id: 'r2', callId: pending.data.callId, output: answer })).toMatchObject({ type: 'ack' });
  const end = (await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === turnId, 30_000)) as RecordOf<'turn-end'>;
  const records = client.records();
  const calls = records.filter((r) => r.kind === 'tool-call');
  const results = records.filter((r) => r.kind === 'tool-result') as RecordOf<'tool-result'>[];
  const stdout = records.filter((r) => r.kind === 'stdout').map((r) => (r as RecordOf<'stdout'>).data.text);
  const read = stdout.filter((line) => line.includes('"step":"tools/call"'));
  const gotAnswer = read.filter((line) => line.includes(answer));
  if (gotAnswer.length === 0) figures.lost++;
  if (calls.length > 1 || results.length > 1 || read.length > 1) figures.doubled++;
  const where = `schedule ${n} (${isolationOf(n)[1]}, kill ${kill}${twice ? ' twice' : ''}, delay ${delayMs} ms, seed ${seed})`;
  expect(end.data, where).toEqual({ reason: 'exit', code: 0 });
  expect(calls, `${where}: one tool-call`).toHaveLength(1);
  expect(results.map((r) => r.data.output), `${where}: one result, the host's`).toEqual([answer]);
  expect(read, `${where}: the CLI read one answer`).toHaveLength(1);
  expect(gotAnswer, `${where}: the host's answer`).toHaveLength(1);
  await client.close();
  await bridge.kill();
}

/**
 * One approval schedule: a kept session CLI (the fixture CLI) asks before it runs a tool and waits on its stdin; the
 * bridge is SIGKILLed once or twice while it waits; the last bridge's host answers through an input frame. The CLI
 * asked once, ran (or refused) the tool once, and the turn ended matched.
 */
async function approvalSchedule(n: number, random: () => number): Promise<void> {
  const twice = random() < 0.33;
  const approved = random() < 0.5;
  if (isolationOf(n).includes('uid+namespace')) approvals.namespaced++;
  let { bridge, client } = await bridgeOn(n);
  const stateDir = bridge.stateDir;
  const turnId = `a${n}`;
  await client.request({
    type: 'start',
    id: 's',
    turnId,
    launch: {
      argv: [process.execPath, fixtureCli, '--echo'],
      stdin: 'pipe',
      lifetime: 'session',
      survive: true,
      turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }],
    },
    input: `${JSON.stringify({ type: 'prompt', text: `approve ${n}`, lines: 1, approve: 'rm_tmp' })}\n`,
  });
  const spawn = (await client.waitForRecord((r) => r.kind === 'spawn')) as RecordOf<'spawn'>;
  live.groups.push(spawn.data.pid);
  live.keepers.push(join(stateDir, 'keepers', spawn.data.keeper!));
  const asked = (await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text.includes('"approval-request"'))) as RecordOf<'stdout'>;
  const id = (JSON.parse(asked.data.text) as { id: string }).id;
  for (let k = 0; k < (twice ? 2 : 1); k++) {
    await bridge.kill('SIGKILL');
    approvals.kills++;
    ({ bridge, client } = await bridgeOn(n, stateDir));
  }
  const answer = JSON.stringify({ type: 'approval', id, approved, ...(approved ? {} : { reason: 'no' }) });
  expect(await client.request({ type: 'input', id: 'i', turnId, text: `${answer}\n` })).toMatchObject({ type: 'ack' });
  const end = (await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === turnId, 30_000)) as RecordOf<'turn-end'>;
  const lines = client
    .records()
    .filter((r): r is RecordOf<'stdout'> => r.kind === 'stdout' && r.turnId === turnId)
    .map((r) => JSON.parse(r.data.text) as { type: string; denied?: boolean });
  const requests = lines.filter((l) => l.type === 'approval-request');
  const results = lines.filter((l) => l.type === 'tool-result');
  approvals.asked += requests.length;
  if (results.length === 0) approvals.lost++;
  if (requests.length > 1 || results.length > 1) approvals.doubled++;
  if (results[0]?.denied === false) approvals.ran++;
  if (results[0]?.denied === true) approvals.denied++;
  const where = `approval schedule ${n} (${isolationOf(n)[1]}, ${approved ? 'approved' : 'denied'}${twice ? ', killed twice' : ''}, seed ${seed})`;
  expect(end.data, where).toMatchObject({ reason: 'matched' });
  expect(requests, `${where}: asked once`).toHaveLength(1);
  expect(results.map((r) => r.denied), `${where}: the answer reached the CLI once`).toEqual([!approved]);
  expect(client.records().filter((r) => r.kind === 'spawn'), `${where}: one CLI all along`).toHaveLength(1);
  await client.request({ type: 'stop', id: 'st' }).catch(() => undefined);
  await client.close();
  await bridge.kill();
}

afterAll(async () => {
  console.log(
    `[figures] survive-mcp schedules=${figures.schedules} namespaced=${figures.namespaced} kills=${figures.kills} by-when=${JSON.stringify(figures.byWhen)} twice=${figures.twice} ` +
      `lost=${figures.lost} doubled=${figures.doubled} seed=${seed}`,
  );
  console.log(`[figures] survive-approvals ${Object.entries(approvals).map(([k, v]) => `${k}=${v}`).join(' ')} seed=${seed}`);
  await Promise.all(live.clients.map((client) => client.close()));
  await Promise.all(live.bridges.map((bridge) => bridge.kill()));
  for (const dir of live.keepers) {
    if (!existsSync(join(dir, 'keeper.pid'))) continue;
    try {
      process.kill(Number(readFileSync(join(dir, 'keeper.pid'), 'utf8')), 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const pid of live.groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

describe('survive: host tool calls and approvals across bridge SIGKILLs', () => {
  it(`${schedules} seeded schedules: the host's answer reaches the CLI exactly once, one call and one result journaled`, { timeout: schedules * 60_000 }, async () => {
    const random = seeded(seed);
    for (let n = 1; n <= schedules; n++) {
      try {
        await schedule(n, random);
      } catch (error) {
        throw new Error(`survive-mcp failed at schedule ${n} (HB_SURVIVE_MCP_SEED=${seed}): ${(error as Error).message}`, { cause: error });
      }
      figures.schedules++;
    }
    expect(figures.lost + figures.doubled, 'lost or doubled answers').toBe(0);
    expect(figures.byWhen.pending, 'kills while a call waited for the host happened').toBeGreaterThan(0);
  });

  it(`${approvalSchedules} seeded schedules with an approval pending at the kill: the CLI is asked once and reads the host's answer once`, { timeout: approvalSchedules * 60_000 }, async () => {
    const random = seeded(seed ^ 0x5a5a);
    for (let n = 1; n <= approvalSchedules; n++) {
      try {
        await approvalSchedule(n, random);
      } catch (error) {
        throw new Error(`survive approvals failed at schedule ${n} (HB_SURVIVE_MCP_SEED=${seed}): ${(error as Error).message}`, { cause: error });
      }
      approvals.schedules++;
    }
    expect(approvals.lost + approvals.doubled, 'lost or doubled approvals').toBe(0);
  });
});
