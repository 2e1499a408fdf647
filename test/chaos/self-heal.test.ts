// Seeded SIGKILLs of a session's bridge at random points of a turn with an approval and a host
// tool call in flight, driven like an application drives it: parts in, answers out, and NO
// recovery code (no suspend, no resume, no retry). The session revives the bridge itself
// (host/reach/revive.ts): the new bridge adopts the kept CLI (the fixture with launch
// `survive`), and the same doPromptTurn stream goes on. Per schedule: every delta once,
// the approval and the tool answer reached the CLI exactly once (counted in the journal),
// exactly one finish, nothing recomputed, and the session serves the next turn.
// A third of the schedules kill the revived bridge again. HB_SELF_HEAL_SEED fixes the
// seed; HB_CHAOS_SCALE scales the schedule count.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import type { HarnessV1PromptControl } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { isAlive } from '../../host/sandbox/local/pids.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { echoUpperTool, mcpClientAdapter } from '../fixtures/mcp-client-adapter.ts';
import { createKit, runTurn, type Kit } from '../host/session-helpers.ts';
import { scaled } from './chaos-kit.ts';
import { seeded } from './fuzz-frames.ts';

const seed = Number(process.env.HB_SELF_HEAL_SEED ?? Date.now() % 2 ** 31);
const schedules = scaled(14, 4);
/** Where the first kill lands: after the n-th delta, when the approval or the tool call is asked, or right after it was answered. */
const points = ['delta', 'approval-asked', 'approval-answered', 'tool-asked', 'tool-answered'] as const;
type Point = (typeof points)[number];
/** MCP schedules: the kill lands before the CLI's call, while it waits for the host (answered while no bridge runs), or right after the answer. */
const mcpSchedules = scaled(6, 2);
const mcpPoints = ['before-call', 'asked', 'answered'] as const;
type McpPoint = (typeof mcpPoints)[number];

const figures = {
  schedules: 0,
  kills: 0,
  recovered: 0,
  twice: 0,
  byPoint: Object.fromEntries(points.map((p) => [p, 0])) as Record<Point, number>,
  recoverMs: [] as number[],
  lost: 0,
  doubled: 0,
  finishes: [] as number[],
  mcp: { schedules: 0, kills: 0, byPoint: { 'before-call': 0, asked: 0, answered: 0 } as Record<McpPoint, number>, lost: 0, doubled: 0 },
};

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('self-heal-chaos', { survive: true });
});
afterAll(async () => {
  const sorted = [...figures.recoverMs].sort((a, b) => a - b);
  const median = sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)]!;
  const oneFinish = figures.finishes.filter((n) => n === 1).length;
  console.log(
    `[figures] self-heal schedules=${figures.schedules} kills=${figures.kills} twice=${figures.twice} recovered-in-stream=${figures.recovered} ` +
      `by-point=${JSON.stringify(figures.byPoint)} recover-ms median=${median} max=${sorted.at(-1) ?? 0} ` +
      `lost=${figures.lost} doubled=${figures.doubled} one-finish-turns=${oneFinish}/${figures.finishes.length} seed=${seed}`,
  );
  const { mcp } = figures;
  console.log(`[figures] self-heal-mcp schedules=${mcp.schedules} kills=${mcp.kills} by-point=${JSON.stringify(mcp.byPoint)} lost=${mcp.lost} doubled=${mcp.doubled} seed=${seed}`);
  await kit?.cleanup();
});

const stateDirOf = (workDir: string, sessionId: string) => join(workDir, '..', '.harness-bridge', 'sessions', `fixture-${sessionId}`);

type Line = { kind: string; turnId: string | null; data: Record<string, unknown> };

async function journal(stateDir: string): Promise<Line[]> {
  const text = await readFile(join(stateDir, 'journal.ndjson'), 'utf8');
  return text
    .split('\n')
    .slice(1)
    .filter((line) => line.includes('\t'))
    .map((line) => JSON.parse(line.slice(line.indexOf('\t') + 1)) as Line);
}

/** SIGKILLs the bridge bridge.json names and waits until it is gone; resolves with when it died. */
async function killBridge(stateDir: string): Promise<number> {
  const { pid } = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8')) as { pid: number };
  process.kill(pid, 'SIGKILL');
  while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 2));
  return Date.now();
}

/** The session's revival reports (host/session/self-heal.ts), in order. */
const revivals = (sessionId: string): HarnessV1Diagnostic[] =>
  kit.diagnostics.filter((d) => d.sessionId === sessionId && d.level === 'warn' && typeof d.attrs?.deadBridgeId === 'string');

async function until(check: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs; // a hang guard, not a timing assertion
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`hang guard: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function schedule(n: number, random: () => number): Promise<void> {
  const point = points[Math.floor(random() * points.length)]!;
  const twice = random() < 0.33;
  const lines = 3 + Math.floor(random() * 8);
  const killAfterDelta = 1 + Math.floor(random() * lines);
  const interval = 2 + Math.floor(random() * 10);
  figures.byPoint[point]++;
  if (twice) figures.twice++;
  const sessionId = `heal-${n}`;
  const answer = `ANSWER-${n}`;
  const where = `schedule ${n} (kill at ${point}${point === 'delta' ? ` ${killAfterDelta}` : ''}${twice ? ', twice' : ''}, ${lines} lines, seed ${seed})`;
  const { session, workDir } = await kit.start(sessionId);
  const stateDir = stateDirOf(workDir, sessionId);

  const kills: Array<Promise<number>> = [];
  const answers: Array<PromiseLike<unknown>> = [];
  const kill = () => {
    figures.kills++;
    kills.push(killBridge(stateDir));
  };
  let control!: HarnessV1PromptControl;
  const parts: HarnessV1StreamPart[] = [];
  let deltas = 0;
  let secondKillArmed = false;
  // The application: it answers what the turn asks, as soon as it asks. The schedule adds the kills.
  const emit = (part: HarnessV1StreamPart) => {
    parts.push(part);
    if (secondKillArmed && revivals(sessionId).length >= 1) {
      secondKillArmed = false;
      kill();
    }
    if (part.type === 'text-delta' && ++deltas === killAfterDelta && point === 'delta') kill();
    if (part.type === 'tool-approval-request') {
      if (point === 'approval-asked') kill();
      const submit = () => control.submitToolApproval!({ approvalId: part.approvalId, approved: true });
      answers.push(point === 'approval-asked' ? kills[0]!.then(submit) : Promise.resolve(submit()));
      if (point === 'approval-answered') kill();
    }
    if (part.type === 'tool-call' && part.providerExecuted !== true) {
      if (point === 'tool-asked') kill();
      const submit = () => control.submitToolResult({ toolCallId: part.toolCallId, output: answer });
      answers.push(point === 'tool-asked' ? kills[0]!.then(submit) : Promise.resolve(submit()));
      if (point === 'tool-answered') kill();
    }
  };
  control = await session.doPromptTurn({ prompt: `s${n} LINES:${lines} INTERVAL:${interval} APPROVE:rm_tmp TOOL:lookup`, emit });
  if (twice) secondKillArmed = true;
  await control.done;
  await Promise.all(answers);
  // A kill right after the last answer may land after the turn ended: the session revives its bridge all the same.
  await until(() => kills.length > 0, `${where}: the kill happened`);
  const killedAt = await kills[0]!;
  await until(() => revivals(sessionId).length >= 1, `${where}: a revival`);
  figures.recoverMs.push(revivals(sessionId)[0]!.timestamp! - killedAt);
  if (kills.length > 1) {
    const second = await kills[1]!;
    await until(() => revivals(sessionId).length >= 2, `${where}: a second revival`);
    figures.recoverMs.push(revivals(sessionId)[1]!.timestamp! - second);
  }

  const finishes = parts.filter((p) => p.type === 'finish');
  figures.finishes.push(finishes.length);
  const records = await journal(stateDir);
  const stdout = records.filter((r) => r.kind === 'stdout').map((r) => String(r.data.text));
  const stdin = records.filter((r) => r.kind === 'stdin').map((r) => String(r.data.text));
  const toolAnswers = stdin.filter((text) => text.includes(answer));
  const approvalAnswers = stdin.filter((text) => text.includes('"type":"approval"'));
  const ran = stdout.filter((text) => text.includes('"type":"tool-result"') && text.includes('"denied":false'));
  const resultWithAnswer = stdout.filter((text) => text.includes('"type":"result"') && text.includes(answer));
  const unexpected = stdout.filter((text) => text.includes('unexpected-'));
  if (resultWithAnswer.length === 0 || ran.length === 0) figures.lost++;
  if (toolAnswers.length > 1 || approvalAnswers.length > 1 || ran.length > 1 || unexpected.length > 0) figures.doubled++;

  const texts = parts.filter((p): p is Extract<HarnessV1StreamPart, { type: 'text-delta' }> => p.type === 'text-delta').map((p) => p.delta);
  const expectedTexts = [...Array.from({ length: lines }, (_, i) => `s${n} LINES:${lines} INTERVAL:${interval} APPROVE:rm_tmp TOOL:lookup #${i}\n`)];
  expect(texts.slice(0, lines), `${where}: every delta once, in order`).toEqual(expectedTexts);
  expect(texts.slice(lines), `${where}: the approval's delta`).toEqual([`s${n} LINES:${lines} INTERVAL:${interval} APPROVE:rm_tmp TOOL:lookup #approved rm_tmp\n`]);
  expect(finishes, `${where}: exactly one finish`).toHaveLength(1);
  expect(parts.at(-1), `${where}: the finish is last, a stop`).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
  expect(parts.some((p) => p.type === 'stream-start' && (p.warnings ?? []).length > 0), `${where}: nothing recomputed`).toBe(false);
  expect([toolAnswers.length, approvalAnswers.length, ran.length, resultWithAnswer.length, unexpected.length], `${where}: each answer reached the CLI once`).toEqual([1, 1, 1, 1, 0]);
  expect(parts.filter((p) => p.type === 'tool-call' && p.providerExecuted !== true), `${where}: one host tool call`).toHaveLength(1);
  expect((session as unknown as { rungs: string[] }).rungs.every((rung) => rung === 'replay'), `${where}: the replay rung only`).toBe(true);
  figures.recovered++;
  // The revived session serves the next turn with the same CLI.
  const next = await runTurn(session, `next${n} LINES:2`);
  expect(next.filter((p) => p.type === 'finish'), `${where}: the next turn`).toHaveLength(1);
  await session.doDestroy();
}

/**
 * One MCP schedule: a CLI calls a host tool over the bridge's MCP endpoint (its keeper relays the call); the bridge is
 * SIGKILLed before the call, while it waits for the host (the app answers while no bridge runs), or right after the
 * answer, a third of them twice. The CLI must read the host's answer once; one tool-call and one tool-result journaled.
 */
async function mcpSchedule(n: number, random: () => number): Promise<void> {
  const point = mcpPoints[Math.floor(random() * mcpPoints.length)]!;
  const twice = random() < 0.33;
  figures.mcp.byPoint[point]++;
  const sessionId = `heal-mcp-${n}`;
  const answer = `MCP-ANSWER-${n}`;
  const where = `mcp schedule ${n} (kill ${point}${twice ? ' twice' : ''}, seed ${seed})`;
  const sandbox = await kit.provider.createSession({ sessionId });
  const harness = createBridgeHarness(mcpClientAdapter({ harnessId: 'mcp', delayMs: point === 'before-call' ? 300 : 0 }), { probeTimeoutMs: 1_500 });
  const session = await harness.doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: sandbox.defaultWorkingDirectory, observability: { report: (d) => kit.diagnostics.push(d) } });
  const stateDir = join(sandbox.defaultWorkingDirectory, '.harness-bridge', 'sessions', `mcp-${sessionId}`);
  const kills: Array<Promise<number>> = [];
  const answers: Array<PromiseLike<unknown>> = [];
  const kill = () => {
    figures.mcp.kills++;
    kills.push(killBridge(stateDir));
  };
  let control!: HarnessV1PromptControl;
  const parts: HarnessV1StreamPart[] = [];
  let secondKillArmed = twice;
  control = await session.doPromptTurn({
    prompt: 'call',
    tools: [echoUpperTool],
    emit: (part) => {
      parts.push(part);
      // Once the CLI has listed the tools (its spawn journaled, its call 300 ms away): a kill before the spawn would take the rerun rung.
      if (part.type === 'stream-start' && point === 'before-call') {
        void until(() => readFileSync(join(stateDir, 'journal.ndjson'), 'utf8').includes('tools/list'), `${where}: tools/list`).then(kill);
      }
      if (part.type !== 'tool-call') return;
      if (point === 'asked') kill();
      const submit = () => control.submitToolResult({ toolCallId: part.toolCallId, output: answer });
      answers.push(point === 'asked' ? kills[0]!.then(submit) : Promise.resolve(submit()));
      if (point === 'answered') kill();
      if (secondKillArmed && point !== 'answered') {
        secondKillArmed = false;
        void until(() => revivals(sessionId).length >= 1, `${where}: the first revival`).then(kill);
      }
    },
  });
  await control.done;
  await Promise.all(answers);
  await until(() => kills.length > 0, `${where}: the kill happened`);
  for (let k = 0; k < kills.length; k++) {
    const at = await kills[k]!;
    await until(() => revivals(sessionId).length >= k + 1, `${where}: revival ${k + 1}`);
    figures.recoverMs.push(revivals(sessionId)[k]!.timestamp! - at);
  }
  const records = await journal(stateDir);
  const read = records.filter((r) => r.kind === 'stdout' && String(r.data.text).includes('"step":"tools/call"')).map((r) => String(r.data.text));
  const calls = records.filter((r) => r.kind === 'tool-call');
  const results = records.filter((r) => r.kind === 'tool-result');
  if (read.filter((line) => line.includes(answer)).length === 0) figures.mcp.lost++;
  if (read.length > 1 || calls.length > 1 || results.length > 1) figures.mcp.doubled++;
  expect(read, `${where}: the CLI read one answer, the host's`).toHaveLength(1);
  expect(read[0], where).toContain(answer);
  expect([calls.length, results.length], `${where}: one tool-call and one tool-result journaled`).toEqual([1, 1]);
  expect(parts.filter((p) => p.type === 'finish'), `${where}: one finish`).toHaveLength(1);
  expect(parts.at(-1), `${where}: the CLI exited 0`).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
  await session.doDestroy();
}

describe('self-heal: bridge SIGKILLs mid-turn, no application-side recovery', () => {
  it(`${schedules} seeded schedules: each turn recovers in its own stream, answers once, one finish`, { timeout: schedules * 60_000 }, async () => {
    const random = seeded(seed);
    for (let n = 1; n <= schedules; n++) {
      try {
        await schedule(n, random);
      } catch (error) {
        throw new Error(`self-heal failed at schedule ${n} (HB_SELF_HEAL_SEED=${seed}): ${(error as Error).message}`, { cause: error });
      }
      figures.schedules++;
    }
    expect(figures.lost + figures.doubled, 'lost or doubled answers').toBe(0);
    expect(figures.recovered).toBe(schedules);
  });

  it(`${mcpSchedules} seeded MCP schedules: a host tool answered over MCP around the kill reaches the CLI once`, { timeout: mcpSchedules * 60_000 }, async () => {
    const random = seeded(seed ^ 0x5a5a);
    for (let n = 1; n <= mcpSchedules; n++) {
      try {
        await mcpSchedule(n, random);
      } catch (error) {
        throw new Error(`self-heal mcp failed at schedule ${n} (HB_SELF_HEAL_SEED=${seed}): ${(error as Error).message}`, { cause: error });
      }
      figures.mcp.schedules++;
    }
    expect(figures.mcp.lost + figures.mcp.doubled, 'lost or doubled answers').toBe(0);
  });
});
