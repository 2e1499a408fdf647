// Launch `start` (the per-process handshake) and `stdinSecrets` at the real supervisor with a real
// child: the handshake is written to every spawned process and never to a reused one; the turn's
// input waits for the step's `until` line even when the CLI answers late; placeholders reach the
// CLI substituted while the stdin records keep them (docs/bridge-internals.md#process-start).
// Through the built bridge: an input frame the handshake holds is acked only once written and
// journaled, and gets `no-process` when the CLI exits first.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor } from '../../bridge/supervisor/supervisor.ts';
import { launchSpecSchema, type LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { JournalRecord, RecordDraft } from '../../protocol/v1/journal-record.ts';
import { tempDir, type TestClient } from './helpers.ts';
import { killedBridges } from './killed-bridges.ts';

// Echoes each stdin line as {"got": line}; answers {"id":…,"method":"slow"} later (after the next
// lines are read), so an ungated write would overtake the answer.
const CLI = `
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  console.log(JSON.stringify({ got: line }));
  let msg; try { msg = JSON.parse(line); } catch { return; }
  if (msg.method === 'slow') setTimeout(() => console.log(JSON.stringify({ id: msg.id, result: {} })), 300);
  if (msg.method === 'prompt') console.log(JSON.stringify({ id: msg.id, done: true }));
});`;

function launch(): LaunchSpec {
  return launchSpecSchema.parse({
    argv: [process.execPath, '-e', CLI],
    env: { SECRET_TOKEN: 'tok-"1"' },
    stdin: 'pipe',
    lifetime: 'session',
    turnEnd: [{ json: { path: ['done'], equals: true } }],
    start: [{ input: '{"id":"init","method":"slow","token":"${SECRET_TOKEN}"}\n', until: [{ path: ['id'], equals: 'init' }] }],
    stdinSecrets: ['SECRET_TOKEN'],
  });
}

let supervisor: Supervisor | null = null;
afterEach(async () => {
  await supervisor?.stop(1000);
  supervisor = null;
});

function run() {
  const drafts: RecordDraft[] = [];
  let wake: (() => void) | null = null;
  supervisor = new Supervisor({ emit: (d) => (drafts.push(d), wake?.()) });
  const turnEnd = (turnId: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hang guard: ${drafts.map((d) => d.kind).join(',')}`)), 20_000);
      const check = () => {
        if (drafts.some((d) => d.kind === 'turn-end' && d.turnId === turnId)) (clearTimeout(timer), resolve());
      };
      wake = check;
      check();
    });
  const out = (turnId: string) => drafts.filter((d) => d.kind === 'stdout' && d.turnId === turnId).map((d) => JSON.parse((d.data as { text: string }).text) as Record<string, unknown>);
  const stdin = (turnId: string) => drafts.filter((d) => d.kind === 'stdin' && d.turnId === turnId).map((d) => (d.data as { text: string }).text);
  return { drafts, turnEnd, out, stdin, sup: supervisor };
}

describe('launch start (per-process handshake) and stdinSecrets', () => {
  it('writes the handshake to a spawned process first and holds the turn input (and input frames) until its answer', async () => {
    const { turnEnd, out, stdin, sup } = run();
    const l = launch();
    expect((await sup.start('t1', l, '{"id":"p1","method":"prompt0"}\n')).ok).toBe(true);
    // An input frame while the handshake is pending is held too, after the turn's input.
    const held = sup.write('t1', '{"id":"p2","method":"prompt"}\n');
    expect(held).toBeInstanceOf(Promise); // settled once written, not now
    await turnEnd('t1');
    expect(await held).toEqual({ ok: true });
    const lines = out('t1');
    const answered = lines.findIndex((l) => l.id === 'init' && 'result' in l);
    const gotPrompt = lines.findIndex((l) => typeof l.got === 'string' && l.got.includes('"p1"'));
    const gotFrame = lines.findIndex((l) => typeof l.got === 'string' && l.got.includes('"p2"'));
    expect(answered).toBeGreaterThan(-1);
    expect(gotPrompt).toBeGreaterThan(answered);
    expect(gotFrame).toBeGreaterThan(gotPrompt);
    // The CLI got the value; the journal keeps the placeholder.
    expect(lines[0]).toEqual({ got: '{"id":"init","method":"slow","token":"tok-\\"1\\""}' });
    expect(stdin('t1')).toEqual(['{"id":"init","method":"slow","token":"${SECRET_TOKEN}"}\n', '{"id":"p1","method":"prompt0"}\n', '{"id":"p2","method":"prompt"}\n']);
    console.log(`[figures] process-start: handshake line answered at stdout #${answered}, held turn input read at #${gotPrompt}, held input frame at #${gotFrame}`);
  });

  it('a reused live process gets no second handshake; a respawn gets it again', async () => {
    const { turnEnd, stdin, sup } = run();
    await sup.start('t1', launch(), '{"id":"p1","method":"prompt"}\n');
    await turnEnd('t1');
    await sup.start('t2', launch(), '{"id":"p2","method":"prompt"}\n');
    await turnEnd('t2');
    expect(stdin('t2')).toEqual(['{"id":"p2","method":"prompt"}\n']);
    const other = launchSpecSchema.parse({ ...launch(), env: { SECRET_TOKEN: 'other' } }); // another env: a new process
    await sup.start('t3', other, '{"id":"p3","method":"prompt"}\n');
    await turnEnd('t3');
    expect(stdin('t3')[0]).toContain('"id":"init"');
  });
});

// Echoes each stdin line as {"got": line}; answers {"id":"init"} once the file argv[1] exists, or
// exits 3 once argv[2] exists; a {"method":"prompt"} line ends the turn ({"done":true}).
const GATED_CLI = `
const fs = require('node:fs');
const [answerFile, exitFile] = process.argv.slice(1);
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  console.log(JSON.stringify({ got: line }));
  let msg; try { msg = JSON.parse(line); } catch { return; }
  if (msg.method === 'init') {
    const answer = () =>
      fs.existsSync(exitFile) ? process.exit(3) : fs.existsSync(answerFile) ? console.log(JSON.stringify({ id: 'init', result: {} })) : setTimeout(answer, 20);
    answer();
  }
  if (msg.method === 'prompt') console.log(JSON.stringify({ done: true }));
});`;

const HANDSHAKE = '{"id":"init","method":"init"}\n';
const HELD = '{"method":"held"}\n';

const { groups, bridgeOn } = killedBridges();

/** A bridge running turn t1 whose CLI has read the handshake and not answered it: the gate is closed. */
async function closedGate(): Promise<{ client: TestClient; answerFile: string; exitFile: string }> {
  const dir = tempDir();
  const answerFile = join(dir, 'answer-init');
  const exitFile = join(dir, 'exit');
  const { client } = await bridgeOn();
  const launch = launchSpecSchema.parse({
    argv: [process.execPath, '-e', GATED_CLI, answerFile, exitFile],
    stdin: 'pipe',
    lifetime: 'session',
    turnEnd: [{ json: { path: ['done'], equals: true } }],
    start: [{ input: HANDSHAKE, until: [{ path: ['id'], equals: 'init' }] }],
  });
  expect(await client.request({ type: 'start', id: 's', turnId: 't1', launch, input: '{"method":"hello"}\n' })).toMatchObject({ type: 'ack' });
  const spawn = await client.waitForRecord((r) => r.kind === 'spawn');
  if (spawn.kind === 'spawn') groups.push(spawn.data.pid);
  await client.waitForRecord((r) => r.kind === 'stdout' && r.data.text === JSON.stringify({ got: HANDSHAKE.trimEnd() }));
  // The input frame, then a later frame: its ack proves the input frame was handled (held), as frames are routed in order.
  client.send({ type: 'input', id: 'held', turnId: 't1', text: HELD });
  expect(await client.request({ type: 'diagnostics', id: 'later', enabled: false })).toMatchObject({ type: 'ack' });
  return { client, answerFile, exitFile };
}

const replies = (client: TestClient, id: string) => client.frames.filter((f) => (f.type === 'ack' || f.type === 'error') && f.id === id);
const stdinTexts = (records: JournalRecord[]) => records.flatMap((r) => (r.kind === 'stdin' ? [r.data.text] : []));

describe('an input frame held behind the handshake, through a bridge', () => {
  it('is acked once it is written and its stdin record journaled, not while held', { timeout: 60_000 }, async () => {
    const { client, answerFile } = await closedGate();
    expect(replies(client, 'held'), 'no ack while the handshake holds the input').toEqual([]);
    expect(stdinTexts(client.records())).not.toContain(HELD);
    writeFileSync(answerFile, '');
    const ack = await client.reply('held');
    const stdin = await client.waitForRecord((r) => r.kind === 'stdin' && r.data.text === HELD);
    expect(ack.type).toBe('ack');
    expect(ack.type === 'ack' ? ack.lastSeq : -1, 'the ack covers the stdin record').toBeGreaterThanOrEqual(stdin.seq);
    expect(await client.request({ type: 'input', id: 'p', turnId: 't1', text: '{"method":"prompt"}\n' })).toMatchObject({ type: 'ack' });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1');
    const got = client.records().flatMap((r) => (r.kind === 'stdout' && r.data.text.startsWith('{"got"') ? [r.data.text] : []));
    expect(got).toEqual([HANDSHAKE, '{"method":"hello"}\n', HELD, '{"method":"prompt"}\n'].map((line) => JSON.stringify({ got: line.trimEnd() })));
    console.log(`[figures] process-start: held input acked at lastSeq ${ack.type === 'ack' ? ack.lastSeq : '-'}, its stdin record seq ${stdin.seq}`);
  });

  it('gets no-process when the CLI exits before the handshake completes, and is never written', { timeout: 60_000 }, async () => {
    const { client, exitFile } = await closedGate();
    writeFileSync(exitFile, '');
    expect(await client.reply('held')).toMatchObject({ type: 'error', code: 'no-process' });
    await client.waitForRecord((r) => r.kind === 'turn-end' && r.turnId === 't1');
    expect(stdinTexts(client.records())).not.toContain(HELD);
    expect(replies(client, 'held')).toHaveLength(1);
  });

  it('gets no-process when the supervisor stops the process before the handshake completes', async () => {
    const { drafts, sup } = run();
    const dir = tempDir();
    const l = launchSpecSchema.parse({
      argv: [process.execPath, '-e', GATED_CLI, join(dir, 'never'), join(dir, 'never-either')],
      stdin: 'pipe',
      lifetime: 'session',
      start: [{ input: HANDSHAKE, until: [{ path: ['id'], equals: 'init' }] }],
    });
    expect((await sup.start('t1', l)).ok).toBe(true); // the handshake is written; its answer never comes
    const held = sup.write('t1', HELD);
    await sup.stop(1000);
    expect(await held).toMatchObject({ ok: false, code: 'no-process', message: expect.stringContaining('stopped') });
    expect(drafts.filter((d) => d.kind === 'stdin').map((d) => (d.data as { text: string }).text)).toEqual([HANDSHAKE]);
  });
});
