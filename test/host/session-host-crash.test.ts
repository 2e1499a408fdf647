// Host crash (issue 15 item 1): a host process dies mid-turn (SIGKILL, no suspend
// or detach). A new host takes the turn back from what the application kept:
// the latest checkpoint (onCheckpoint), or only an earlier detach state. Delivery
// resumes at the state's cursor; parts a lost host may have received already are
// marked re-delivered; a turn waiting on a host tool is answered by the new host.
// Without a state, doStart says session-live instead of a bridge refusal.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { repoRoot } from '../bridge/helpers.ts';
import { controlLater, createKit, runTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('host-crash');
});
afterAll(async () => {
  await kit.cleanup();
});

type Event = { part?: HarnessV1StreamPart; checkpoint?: HarnessV1ResumeState; detached?: HarnessV1ResumeState; done?: boolean };
const lines = (prompt: string, n: number) => Array.from({ length: n }, (_, i) => `${prompt} #${i}\n`);
const deltas = (parts: HarnessV1StreamPart[]) => parts.filter((p) => p.type === 'text-delta').map((p) => (p as { delta: string }).delta);
const marker = (p: HarnessV1StreamPart, edge: 'begin' | 'end') =>
  p.type === 'raw' && (p.rawValue as { harnessBridge?: { redelivered?: string } } | null)?.harnessBridge?.redelivered === edge;

/** Runs a host process until `until` says so, then SIGKILLs it; returns every event it printed. */
function crashHost(sessionId: string, mode: string, prompt: string, until: (events: Event[]) => boolean): Promise<Event[]> {
  return new Promise((resolve, reject) => {
    // node itself, tsx as a loader: SIGKILL must hit the host process (tsx's CLI would leave its node child running).
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test/host/crash-host-child.ts'), kit.root, sessionId, mode, prompt], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const events: Event[] = [];
    let buffer = '';
    let err = '';
    let killed = false;
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (killed) continue;
        events.push(JSON.parse(line) as Event);
        if (until(events)) {
          killed = true;
          child.kill('SIGKILL');
        }
      }
    });
    child.once('exit', () => (killed ? resolve(events) : reject(new Error(`host exited before the crash point\n${err}`))));
  });
}

describe('host crash', () => {
  const figures: string[] = [];
  afterAll(() => console.log(`[figures] host-crash ${figures.join(' ')}`));

  it('killed mid-turn: a new host resumes from the last checkpoint; the re-delivered range is marked; every part arrives', async () => {
    const prompt = 'crash LINES:300 INTERVAL:5';
    const events = await crashHost('mid-turn', 'fresh', prompt, (seen) =>
      seen.filter((e) => e.checkpoint).length >= 3 && seen.filter((e) => e.part?.type === 'text-delta').length >= 80,
    );
    const lastCheckpoint = events.map((e) => Boolean(e.checkpoint)).lastIndexOf(true);
    const checkpoint = events[lastCheckpoint]!.checkpoint!;
    const before = deltas(events.slice(0, lastCheckpoint).flatMap((e) => (e.part ? [e.part] : [])));
    const seenByLostHost = deltas(events.flatMap((e) => (e.part ? [e.part] : [])));
    expect(seenByLostHost).toEqual(lines(prompt, seenByLostHost.length));

    const resumed = await kit.resume('mid-turn', checkpoint);
    expect((resumed.session as unknown as { rungs: string[] }).rungs).toEqual(['attach']);
    const rest: HarnessV1StreamPart[] = [];
    const control = await resumed.session.doContinueTurn({ emit: (p) => rest.push(p) });
    await control.done;
    const begin = rest.findIndex((p) => marker(p, 'begin'));
    const end = rest.findIndex((p) => marker(p, 'end'));
    expect(begin, 'the re-delivered range is marked').toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(begin);
    expect(deltas(rest.slice(0, begin)), 'nothing before the range').toEqual([]);
    const marked = deltas(rest.slice(begin, end));
    // From the checkpoint on, every part once more; all the lost host had seen past the checkpoint is inside the marks.
    expect([...before, ...deltas(rest)]).toEqual(lines(prompt, 300));
    expect(marked.length).toBeGreaterThanOrEqual(seenByLostHost.length - before.length);
    expect(rest.at(-1)?.type).toBe('finish');
    figures.push(`mid-turn:lost-host-deltas=${seenByLostHost.length},checkpoint-deltas=${before.length},marked-redelivered=${marked.length},rung=attach`);
    await resumed.session.doDestroy();
  });

  it('the app kept only an earlier detach state: the turn started after it (waiting on a host tool) is taken over and answered', async () => {
    const prompt = 'second LINES:5 TOOL:lookup';
    const events = await crashHost('after-detach', 'after-detach', prompt, (seen) => seen.some((e) => e.part?.type === 'tool-call'));
    const detached = events.find((e) => e.detached)!.detached!;
    const resumed = await kit.resume('after-detach', detached);
    const busy = await Promise.resolve(resumed.session.doPromptTurn({ prompt: 'other', emit: () => undefined })).then(
      () => null,
      (e: unknown) => e as { code?: string },
    );
    expect(busy?.code, 'a new prompt while the taken-over turn runs').toBe('turn-busy');
    const rest: HarnessV1StreamPart[] = [];
    const later = controlLater();
    const control = later.resolve(
      await resumed.session.doContinueTurn({
        emit: (part) => {
          rest.push(part);
          if (part.type === 'tool-call') later.use((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: 'from the new host' }));
        },
      }),
    );
    await control.done;
    expect(deltas(rest)).toEqual(lines(prompt, 5));
    expect(rest.filter((p) => p.type === 'tool-call')).toHaveLength(1);
    expect(rest.findIndex((p) => marker(p, 'begin'))).toBeGreaterThanOrEqual(0);
    expect(rest.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'stop' } });
    expect(textOf(await runTurn(resumed.session, 'third LINES:1'))).toBe('third LINES:1 #0\n');
    figures.push('after-detach:taken-over=1,tool-answered=1');
    await resumed.session.doDestroy();
  });

  it('doStart without a state on a session whose bridge lives: session-live, naming what to pass', async () => {
    const events = await crashHost('no-state', 'fresh', 'x LINES:200 INTERVAL:20', (seen) => seen.some((e) => e.checkpoint));
    void events;
    const sandbox = await kit.provider.resumeSession({ sessionId: 'no-state' });
    const error = await Promise.resolve(
      kit.harness().doStart({ sessionId: 'no-state', sandboxSession: sandbox, sessionWorkDir: join(sandbox.defaultWorkingDirectory, 'fixture-no-state') }),
    ).then(
      () => null,
      (e: unknown) => e as { code?: string; message?: string },
    );
    await sandbox.stop(); // the crashed host's bridge: this sandbox was never handed to the kit's cleanup
    expect(error?.code).toBe('session-live');
    expect(error?.message).toMatch(/resumeFrom/);
    figures.push('no-state:session-live=1');
  });
});
