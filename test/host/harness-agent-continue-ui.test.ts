// A continued turn in the user's view (docs/guarantees.md#ui): the REAL
// HarnessAgent of @ai-sdk/harness 1.0.x, its toUIMessageStream, and `ai`'s
// readUIMessageStream with terminateOnError. A `LINES:40 INTERVAL:40` turn is
// suspended after its 6th delta, inside its text block, and continued by a
// fresh HarnessAgent, in this process and in a second node process (and the
// session detached there instead, resumed with resumeFrom, continued). The
// continuation starts inside the block whose text-start went to the first
// stream: the kit re-opens it, so every chunk folds (no "text-delta for
// missing text part"), every chunk passes uiMessageChunkSchema, and the
// message folded from both streams is the uninterrupted turn's message.
// The cut is placed by construction: the fixture CLI holds right after its
// 6th delta (--hold-after) until the test, having suspended, lets it go.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import type { UIMessage, UIMessageChunk } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCliAdapter, type CliAdapter } from '../../host/adapter-kit/adapter.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { createAgentKit, fixtureLines, type AgentKit } from './harness-agent-helpers.ts';
import { foldUI, uiText, uiView } from './ui-fold.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const prompt = 'continued in the UI LINES:40 INTERVAL:40';
const heldAfter = 6;

let kit: AgentKit;
let uninterrupted: UIMessage;
beforeAll(async () => {
  kit = await createAgentKit('continue-ui');
  const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider });
  const session = await agent.createSession();
  const folded = await foldUI((await agent.stream({ session, prompt })).toUIMessageStream());
  expect(folded.error).toBeUndefined();
  expect(folded.invalid).toEqual([]);
  uninterrupted = folded.message!;
  expect(uiText(uninterrupted)).toBe(fixtureLines(prompt, 40));
  await session.destroy();
});
afterAll(async () => {
  await kit?.cleanup();
});

/** The fixture, its CLI held right after its `after`-th delta until `holdFile` exists. */
function heldFixture(holdFile: string, after: number): CliAdapter<any> {
  const base = fixtureAdapter() as CliAdapter<any>;
  return defineCliAdapter<any>({
    ...base,
    launch: (ctx) => {
      const spec = base.launch(ctx);
      return { ...spec, argv: [...spec.argv, '--hold-after', String(after), '--hold-file', holdFile] };
    },
  });
}

/** Passes chunks on, calling `at` once the `n`-th text-delta went by. */
function onTextDelta(n: number, at: () => void): TransformStream<UIMessageChunk, UIMessageChunk> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, out) {
      out.enqueue(chunk);
      if (chunk.type === 'text-delta' && ++seen === n) at();
    },
  });
}

/** The first slice: the turn streamed until the CLI holds after its 6th delta, then suspended (or the session detached). */
async function firstSlice(name: string, how: 'suspend' | 'detach' = 'suspend'): Promise<{ sessionId: string; state: unknown; head: UIMessage; holdFile: string; partsFrom: number }> {
  const holdFile = join(kit.root, `${name}.go`);
  const agent = new HarnessAgent({ harness: kit.harness(heldFixture(holdFile, heldAfter)), sandbox: kit.provider });
  const session = await agent.createSession();
  const result = await agent.stream({ session, prompt });
  let suspending: Promise<unknown> | undefined;
  const folded = await foldUI(result.toUIMessageStream().pipeThrough(onTextDelta(heldAfter, () => (suspending = how === 'suspend' ? session.suspendTurn() : session.detach()))));
  expect(folded.error, 'the first slice folds').toBeUndefined();
  expect(folded.invalid).toEqual([]);
  expect(uiText(folded.message)).toBe(fixtureLines(prompt, heldAfter));
  const state = await suspending;
  expect((state as { type: string }).type).toBe(how === 'suspend' ? 'continue-turn' : 'resume-session');
  await writeFile(holdFile, ''); // the CLI goes on while no host is attached; the bridge journals the rest
  return { sessionId: session.sessionId, state, head: folded.message!, holdFile, partsFrom: kit.parts.length };
}

describe('a turn suspended inside its text block and continued, through the real HarnessAgent and readUIMessageStream', () => {
  it('continued by a fresh HarnessAgent in this process: the folded message is the uninterrupted one, every chunk valid', async () => {
    const { sessionId, state, head, partsFrom } = await firstSlice('same-process');
    const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider });
    const session = await agent.createSession({ sessionId, continueFrom: state as never });
    const rest = await foldUI((await agent.continueStream({ session })).toUIMessageStream(), head);
    const continued = kit.parts.slice(partsFrom).map((entry) => entry.part);
    expect(rest.error, 'readUIMessageStream folds the continuation').toBeUndefined();
    expect(rest.invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
    expect(firstTextPart(continued)?.type, 'the continuation re-opens the block').toBe('text-start');
    expect(uiView(rest.message)).toEqual(uiView(uninterrupted));
    expect(uiText(rest.message)).toBe(fixtureLines(prompt, 40));
    expect(kit.parts.filter((entry) => !entry.valid)).toEqual([]);
    await session.destroy();
  });

  it('the session detached mid-block, resumed by a fresh HarnessAgent (resumeFrom) and continued: the same message', async () => {
    const { sessionId, state, head } = await firstSlice('detached', 'detach');
    const agent = new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider });
    const session = await agent.createSession({ sessionId, resumeFrom: state as never });
    const rest = await foldUI((await agent.continueStream({ session })).toUIMessageStream(), head);
    expect(rest.error, 'readUIMessageStream folds the continuation').toBeUndefined();
    expect(rest.invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
    expect(uiView(rest.message)).toEqual(uiView(uninterrupted));
    expect(uiText(rest.message)).toBe(fixtureLines(prompt, 40));
    await session.destroy();
  });

  it('continued by a fresh HarnessAgent in a second node process: the same message', async () => {
    const { sessionId, state, head } = await firstSlice('second-process');
    const stateFile = join(kit.root, 'continue-ui-state.json');
    await writeFile(stateFile, JSON.stringify({ sessionId, state, head }));
    const child = await runChild([join(repoRoot, 'test/host/harness-agent-continue-ui-child.ts'), kit.root, stateFile]);
    expect(child.error, 'readUIMessageStream folds the continuation in the child').toBeNull();
    expect(child.invalid).toEqual([]);
    expect(child.invalidParts).toEqual([]);
    expect(uiView(child.message)).toEqual(uiView(uninterrupted));
    expect(uiText(child.message)).toBe(fixtureLines(prompt, 40));
  });
});

function firstTextPart(parts: HarnessV1StreamPart[]): HarnessV1StreamPart | undefined {
  return parts.find((part) => part.type.startsWith('text-'));
}

type ChildReport = { message: UIMessage; invalid: unknown[]; invalidParts: unknown[]; error: string | null };

function runChild(args: string[]): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(repoRoot, 'node_modules/.bin/tsx'), args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`child exited ${code}\n${err}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildReport);
      } catch (error) {
        reject(new Error(`child printed no report: ${out}\n${err} (${String(error)})`));
      }
    });
  });
}
