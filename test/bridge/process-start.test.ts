// Launch `start` (the per-process handshake) and `stdinSecrets` at the real supervisor with a real
// child: the handshake is written to every spawned process and never to a reused one; the turn's
// input waits for the step's `until` line even when the CLI answers late; placeholders reach the
// CLI substituted while the stdin records keep them (docs/bridge-internals.md#process-start).
import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor } from '../../bridge/supervisor/supervisor.ts';
import { launchSpecSchema, type LaunchSpec } from '../../protocol/v1/launch-spec.ts';
import type { RecordDraft } from '../../protocol/v1/journal-record.ts';

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
    expect(sup.write('t1', '{"id":"p2","method":"prompt"}\n').ok).toBe(true);
    await turnEnd('t1');
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
