// The REAL HarnessAgent of @ai-sdk/harness 1.0.x (`@ai-sdk/harness/agent`)
// driving createBridgeHarness(fixture adapter) on our local sandbox provider:
// stream and generate; suspendTurn → createSession({ continueFrom }) →
// continueStream in a new agent and in a second node process; stop/detach →
// createSession({ resumeFrom }); destroy; compact; a JSON output refused;
// aborted and CLI-interrupted turns through useChat's path; per-turn
// instructions, skills and model; the SDK's bootstrap marker; a basic
// SandboxSession. Every part a session emits is checked against the SDK's own
// stream-part schema. Nothing waits on time: the `gate` tool holds the CLI at
// its tool call, so a suspend or abort lands mid-turn by construction.
import { spawn } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessCapabilityUnsupportedError } from '@ai-sdk/harness';
import { HarnessAgent, prepareHarnessSandboxTemplate, prepareSandboxForHarness } from '@ai-sdk/harness/agent';
import { Output } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { applyBootstrap, sdkRecipeIdentity } from '../../bootstrap/index.ts';
import type { CliAdapter, LaunchContext } from '../../host/adapter-kit/adapter.ts';
import { defineCliAdapter } from '../../host/adapter-kit/adapter.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { createAgentKit, fixtureLines, gateTool, openGate, throughUseChat, uiText, type AgentKit } from './harness-agent-helpers.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

let kit: AgentKit;
beforeAll(async () => {
  kit = await createAgentKit('sdk');
});
afterAll(async () => {
  await kit?.cleanup();
});

const agentOf = <T extends Record<string, unknown>>(extra: T = {} as T) =>
  new HarnessAgent({ harness: kit.harness(), sandbox: kit.provider, ...extra });

async function streamedText(result: { textStream: AsyncIterable<string> }): Promise<string> {
  let text = '';
  for await (const delta of result.textStream) text += delta;
  return text;
}

function expectAllPartsValid(): void {
  const refused = kit.parts.filter((entry) => !entry.valid).map((entry) => entry.part);
  expect(refused, 'parts the SDK stream-part schema refuses').toEqual([]);
  expect(kit.parts.filter((entry) => entry.part.type === 'finish' && (entry.part.finishReason.unified as string) === 'interrupted')).toEqual([]);
}

describe('HarnessAgent (@ai-sdk/harness 1.0.x) over createBridgeHarness', () => {
  it('runs a turn via stream and one via generate on one session; every part passes the SDK schema', async () => {
    const agent = agentOf();
    const session = await agent.createSession();
    const streamed = await agent.stream({ session, prompt: 'hello LINES:3' });
    expect(await streamedText(streamed)).toBe(fixtureLines('hello LINES:3', 3));
    expect(await streamed.finishReason).toBe('stop');
    const generated = await agent.generate({ session, prompt: 'again LINES:2' });
    expect(generated.text).toBe(fixtureLines('again LINES:2', 2));
    expect(generated.finishReason).toBe('stop');
    expect(session.isResume).toBe(false);
    await session.destroy();
    expectAllPartsValid();
  });

  it('suspendTurn mid-turn → a new agent continues it from continueFrom: every line once, in order, the tool run once', async () => {
    const { gate, open, state: gateState } = gateTool();
    const first = agentOf({ tools: { gate } });
    const session = await first.createSession();
    const prompt = 'count LINES:30 TOOL:gate';
    const result = await first.stream({ session, prompt });
    let head = '';
    let suspending: Promise<unknown> | undefined;
    let deltas = 0;
    for await (const delta of result.textStream) {
      head += delta;
      // After the 5th delta: the CLI is at most at its tool call, where the gate holds it until we open it.
      if (++deltas === 5) {
        suspending = session.suspendTurn();
        open();
      }
    }
    const state = (await suspending) as { type: string };
    expect(state.type).toBe('continue-turn');

    const second = agentOf({ tools: { gate: openGate } });
    const continued = await second.createSession({ sessionId: session.sessionId, continueFrom: state as never });
    expect(continued.isResume).toBe(true);
    const rest = await second.continueStream({ session: continued });
    const tail = await streamedText(rest);
    expect(head + tail, 'the slices concatenate to the uninterrupted text').toBe(fixtureLines(prompt, 30));
    expect(await rest.finishReason).toBe('stop');
    expect(gateState.calls, 'the first slice ran the tool at most once').toBeLessThanOrEqual(1);
    const next = await second.generate({ session: continued, prompt: 'after LINES:1' });
    expect(next.text).toBe(fixtureLines('after LINES:1', 1));
    await continued.destroy();
    expectAllPartsValid();
  });

  it('suspendTurn in this process, continueStream in a second node process: no gap, no duplicate', async () => {
    const { gate, open } = gateTool();
    const agent = agentOf({ tools: { gate } });
    const session = await agent.createSession();
    const prompt = 'cross LINES:20 TOOL:gate';
    const result = await agent.stream({ session, prompt });
    let head = '';
    let suspending: Promise<unknown> | undefined;
    let deltas = 0;
    for await (const delta of result.textStream) {
      head += delta;
      if (++deltas === 3) {
        suspending = session.suspendTurn();
        open();
      }
    }
    const stateFile = join(kit.root, 'cross-state.json');
    await writeFile(stateFile, JSON.stringify({ sessionId: session.sessionId, state: await suspending }));
    const child = await runChild([join(repoRoot, 'test/host/harness-agent-child.ts'), kit.root, stateFile]);
    expect(child.invalid, 'parts the SDK schema refused in the child').toEqual([]);
    expect(head + child.text).toBe(fixtureLines(prompt, 20));
    expect(child.finishReason).toBe('stop');
    expect(child.isResume).toBe(true);
    expect(child.detached.type).toBe('resume-session');

    // The session the child detached from is resumed here and takes another turn.
    const resumed = await agent.createSession({ sessionId: session.sessionId, resumeFrom: child.detached as never });
    expect((await agent.generate({ session: resumed, prompt: 'back LINES:1' })).text).toBe(fixtureLines('back LINES:1', 1));
    await resumed.destroy();
  });

  it.each(['stop', 'detach'] as const)('%s → createSession({ resumeFrom }) in a new agent → the next turn runs on the same CLI thread', async (how) => {
    const agent = agentOf();
    const session = await agent.createSession();
    await agent.generate({ session, prompt: `before ${how} LINES:1` });
    const state = how === 'stop' ? await session.stop() : await session.detach();
    expect(state.type).toBe('resume-session');
    expect(state).not.toHaveProperty('continueFrom');
    const data = state.data as { threadId: string; bridgeId: string };

    const again = agentOf();
    const resumed = await again.createSession({ sessionId: session.sessionId, resumeFrom: state });
    expect(resumed.isResume).toBe(true);
    const next = await again.generate({ session: resumed, prompt: `after ${how} LINES:2` });
    expect(next.text).toBe(fixtureLines(`after ${how} LINES:2`, 2));
    const after = await resumed.detach();
    expect((after.data as { threadId: string }).threadId, 'the same CLI thread').toBe(data.threadId);
    const sameBridge = (after.data as { bridgeId: string }).bridgeId === data.bridgeId;
    expect(sameBridge, how === 'detach' ? 'detach: the live bridge was attached to' : 'stop: a new bridge replayed the journal').toBe(how === 'detach');
    const last = await again.createSession({ sessionId: session.sessionId, resumeFrom: after });
    await last.destroy();
  });

  it('detach with a turn in flight returns a resume-session nesting the continueFrom; the resumed session continues the turn', async () => {
    const held = gateTool();
    const heldAgent = agentOf({ tools: { gate: held.gate } });
    const heldSession = await heldAgent.createSession();
    const prompt = 'parked LINES:2 TOOL:gate';
    const result = await heldAgent.stream({ session: heldSession, prompt });
    const reading = streamedText(result);
    await held.entered;
    const detaching = heldSession.detach();
    held.open();
    const state = await detaching;
    const head = await reading;
    expect(state.type).toBe('resume-session');
    expect(state.continueFrom?.type).toBe('continue-turn');

    const resumedAgent = agentOf({ tools: { gate: openGate } });
    const resumed = await resumedAgent.createSession({ sessionId: heldSession.sessionId, resumeFrom: state });
    const rest = await resumedAgent.continueStream({ session: resumed });
    expect(head + (await streamedText(rest))).toBe(fixtureLines(prompt, 2));
    expect(await rest.finishReason).toBe('stop');
    await resumed.destroy();
    expectAllPartsValid();
  });

  it('stop with a turn in flight (the agent suspends, then stops the sandbox) → resumeFrom → continueStream ends the stopped turn: nothing shown again, nothing re-run, the tool not run again', async () => {
    const held = gateTool();
    const agent = agentOf({ tools: { gate: held.gate } });
    const session = await agent.createSession();
    const prompt = 'stopped mid-turn LINES:3 TOOL:gate';
    const result = await agent.stream({ session, prompt });
    const reading = streamedText(result);
    await held.entered;
    const stopping = session.stop();
    held.open();
    const state = await stopping;
    expect(await reading).toBe(fixtureLines(prompt, 3));
    expect(state.continueFrom?.pendingToolResults?.map((pending) => pending.completedResult?.output)).toEqual(['opened']);

    const calls = { count: 0 };
    const resumedAgent = agentOf({ tools: { gate: { ...openGate, execute: async () => (calls.count++, 'again') } } });
    const resumed = await resumedAgent.createSession({ sessionId: session.sessionId, resumeFrom: state });
    const partsBefore = kit.parts.length;
    const rest = await resumedAgent.continueStream({ session: resumed });
    const tail = await streamedText(rest);
    expect(tail, 'the stopped turn is not re-driven: its lines are not printed again').toBe('');
    expect(await rest.finishReason, 'the stopped turn ends').toBe('other');
    expect(calls.count, 'the tool is not run again').toBe(0);
    const starts = kit.parts.slice(partsBefore).filter((entry) => entry.part.type === 'stream-start');
    expect(starts, 'no rerun turn started').toEqual([]);
    expect((await resumedAgent.generate({ session: resumed, prompt: 'next LINES:1' })).text).toBe(fixtureLines('next LINES:1', 1));
    await resumed.destroy();
    expectAllPartsValid();
  });

  it('destroy removes the sandbox directory and stops its bridge', async () => {
    const agent = agentOf();
    const session = await agent.createSession();
    await agent.generate({ session, prompt: 'doomed LINES:1' });
    const dir = join(kit.provider.root, session.sessionId);
    expect((await stat(dir)).isDirectory()).toBe(true);
    await session.destroy();
    expect(await stat(dir).catch(() => null), 'the sandbox dir is gone').toBeNull();
  });

  it('compact on an adapter that cannot compact rejects with HarnessCapabilityUnsupportedError (the SDK class recognises ours); the session carries on', async () => {
    const agent = agentOf();
    const session = await agent.createSession();
    await agent.generate({ session, prompt: 'first LINES:1' });
    const error = await session.compact('keep it short').then(() => undefined, (e: unknown) => e);
    expect(HarnessCapabilityUnsupportedError.isInstance(error)).toBe(true);
    expect((await agent.generate({ session, prompt: 'still here LINES:1' })).finishReason).toBe('stop');
    await session.destroy();
  });

  it('a JSON output (responseFormat json) is refused with HarnessCapabilityUnsupportedError, never ignored; a text turn still runs', async () => {
    const agent = agentOf({ output: Output.object({ schema: z.object({ answer: z.string() }) }) });
    const session = await agent.createSession();
    const error = await agent.generate({ session, prompt: 'answer in JSON' }).then(() => undefined, (e: unknown) => e);
    expect(HarnessCapabilityUnsupportedError.isInstance(error), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/JSON response format/);
    await session.destroy();
    const plain = agentOf();
    const textSession = await plain.createSession();
    expect((await plain.generate({ session: textSession, prompt: 'text LINES:1' })).finishReason).toBe('stop');
    await textSession.destroy();
  });

  it('an aborted turn through toUIMessageStream + readUIMessageStream (useChat): every chunk validates, the last one arrives; the session takes another turn', async () => {
    const { gate, entered } = gateTool();
    const agent = agentOf({ tools: { gate } });
    const session = await agent.createSession();
    const controller = new AbortController();
    const result = await agent.stream({ session, prompt: 'abort me LINES:2 TOOL:gate', abortSignal: controller.signal });
    void entered.then(() => controller.abort()); // the CLI waits at the tool call: the abort lands mid-turn
    const { chunks, invalid, message } = await throughUseChat(result.toUIMessageStream());
    expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
    expect((chunks.at(-1) as { type: string }).type).toBe('abort');
    expect(uiText(message)).toBe(fixtureLines('abort me LINES:2 TOOL:gate', 2));
    expect((await agent.generate({ session, prompt: 'next LINES:1' })).text).toBe(fixtureLines('next LINES:1', 1));
    await session.destroy();
    expectAllPartsValid();
  });

  it('a turn the CLI itself interrupts finishes unified "other" (raw "interrupted"): useChat takes its finish chunk', async () => {
    // The tool result INTERRUPT is encoded as the fixture's interrupt line: the CLI ends the turn interrupted, no host abort.
    const base = fixtureAdapter();
    const interrupting = defineCliAdapter({
      ...base,
      encodeToolResult: (result, state) => (result.output === 'INTERRUPT' ? '{"type":"interrupt"}\n' : base.encodeToolResult!(result, state)),
    });
    const agent = new HarnessAgent({
      harness: kit.harness(interrupting),
      sandbox: kit.provider,
      tools: { gate: { ...openGate, execute: async () => 'INTERRUPT' } },
    });
    const session = await agent.createSession();
    const result = await agent.stream({ session, prompt: 'cut short LINES:2 TOOL:gate' });
    const { chunks, invalid } = await throughUseChat(result.toUIMessageStream());
    expect(invalid, 'chunks uiMessageChunkSchema refused').toEqual([]);
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'other' });
    expect(await result.finishReason).toBe('other');
    expect(await result.rawFinishReason).toBe('interrupted');
    await session.destroy();
    expectAllPartsValid();
  });

  it('per-turn settings: instructions once and again when they change, skills written and replaced, the model in the launch', async () => {
    const launches: LaunchContext[] = [];
    const base = fixtureAdapter();
    const adapter: CliAdapter<any> = defineCliAdapter({
      ...base,
      launch: (ctx) => (launches.push(ctx), base.launch(ctx)),
      skillFiles: (skills, dir) => skills.flatMap((skill) => [{ path: posix.join(dir, 'skills', skill.name, 'SKILL.md'), content: skill.content }, ...(skill.files ?? []).map((file) => ({ path: posix.join(dir, 'skills', skill.name, file.path), content: file.content }))]),
    });
    const skillA = { name: 'alpha', description: 'a', content: 'ALPHA', files: [{ path: 'ref.md', content: 'REF' }] };
    const skillB = { name: 'beta', description: 'b', content: 'BETA' };
    const first = new HarnessAgent({ harness: kit.harness(adapter), sandbox: kit.provider, instructions: 'BE BRIEF', skills: [skillA], model: 'fixture-large' });
    const session = await first.createSession();
    const one = await first.generate({ session, prompt: 'one LINES:1' });
    expect(one.text, 'instructions on the first prompt').toBe(fixtureLines('one LINES:1', 1, 'BE BRIEF'));
    const two = await first.generate({ session, prompt: 'two LINES:1' });
    expect(two.text, 'the same instructions are not sent again').toBe(fixtureLines('two LINES:1', 1));
    const workDir = join(kit.provider.root, session.sessionId, `fixture-${session.sessionId}`);
    expect(await readFile(join(workDir, 'skills/alpha/SKILL.md'), 'utf8')).toBe('ALPHA');
    expect(await readFile(join(workDir, 'skills/alpha/ref.md'), 'utf8')).toBe('REF');
    expect(launches.at(-1)?.modelId).toBe('fixture-large');

    // Another agent (other settings) on the same session: new instructions are sent once; the skill set is replaced.
    const state = await session.detach();
    const second = new HarnessAgent({ harness: kit.harness(adapter), sandbox: kit.provider, instructions: 'BE THOROUGH', skills: [skillB], model: 'fixture-small' });
    const resumed = await second.createSession({ sessionId: session.sessionId, resumeFrom: state });
    const three = await second.generate({ session: resumed, prompt: 'three LINES:1' });
    expect(three.text).toBe(fixtureLines('three LINES:1', 1, 'BE THOROUGH'));
    expect(await readdir(join(workDir, 'skills'))).toEqual(['beta']);
    expect(launches.at(-1)?.modelId).toBe('fixture-small');
    await resumed.destroy();
  });

  it("the SDK's bootstrap marker is respected: a recipe the agent applied is not applied again by doStart, nor one we applied by the agent", async () => {
    const counting = defineCliAdapter({ ...fixtureAdapter(), install: { commands: [{ command: 'echo applied >> applied.log' }] } });
    const harness = kit.harness(counting);
    const recipe = await harness.getBootstrap!();
    const agent = new HarnessAgent({ harness, sandbox: kit.provider });
    const appliedLines = async (sessionId: string) =>
      (await readFile(join(kit.provider.root, sessionId, recipe.bootstrapDir, 'applied.log'), 'utf8')).split('\n').filter(Boolean).length;

    // The agent: onFirstCreate (template) + applyBootstrapRecipe, then our doStart's apply: one run.
    const session = await agent.createSession();
    expect(await appliedLines(session.sessionId)).toBe(1);
    const sdkMarker = join(kit.provider.root, session.sessionId, recipe.bootstrapDir, `.bootstrap-${sdkRecipeIdentity(recipe)}.ok`);
    expect((await stat(sdkMarker)).isFile(), 'the marker the agent wrote has the name sdkRecipeIdentity predicts').toBe(true);
    expect((await agent.generate({ session, prompt: 'bootstrapped LINES:1' })).finishReason).toBe('stop');
    await session.destroy();

    // Ours first (a caller's own sandbox), then the SDK's prepareSandboxForHarness: still one run.
    const own = await kit.provider.createSession({ sessionId: 'own-bootstrap' });
    const applied = await applyBootstrap(own.restricted(), recipe);
    expect(applied.applied).toBe(true);
    await prepareSandboxForHarness({ session: own.restricted(), harnesses: [harness] });
    expect(await appliedLines('own-bootstrap')).toBe(1);
    await own.destroy();

    // The SDK's template prewarm, then two sessions from it: each starts with the one run the template holds.
    const prewarmed = kit.harness(defineCliAdapter({ ...counting, install: { commands: [{ command: 'echo prewarmed >> applied.log' }] } }));
    await prepareHarnessSandboxTemplate({ harness: prewarmed, sandboxProvider: kit.provider });
    const fromTemplate = new HarnessAgent({ harness: prewarmed, sandbox: kit.provider });
    for (let i = 0; i < 2; i++) {
      const templated = await fromTemplate.createSession();
      expect(await appliedLines(templated.sessionId), `session ${i} from the template`).toBe(1);
      await templated.destroy();
    }
  });

  it('a basic SandboxSession whose spawn gives no stdin is refused with HarnessCapabilityUnsupportedError unless resolvePort says how to reach its ports; with it, turns run', async () => {
    const box = await kit.provider.createSession({ sessionId: 'basic-box' });
    try {
      // With stdin on its spawn the exec transport would carry it (test/host/exec-transport.test.ts); without, nothing can.
      const basic = box.restricted();
      const noStdin = { ...basic, spawn: (options: Parameters<typeof basic.spawn>[0]) => basic.spawn({ ...options, stdin: false }) };
      const refusing = new HarnessAgent({ harness: kit.harness() });
      const error = await refusing.createSession({ sandboxSession: noStdin }).then(() => undefined, (e: unknown) => e);
      expect(HarnessCapabilityUnsupportedError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(/getPortEndpoint/);

      const loopback = new HarnessAgent({
        harness: kit.harness(fixtureAdapter(), { resolvePort: async ({ port }) => ({ url: `ws://127.0.0.1:${port}` }) }),
      });
      const session = await loopback.createSession({ sandboxSession: box.restricted() });
      const result = await loopback.generate({ session, prompt: 'basic LINES:2' });
      expect(result.text).toBe(fixtureLines('basic LINES:2', 2));
      await session.destroy(); // the caller owns the sandbox: the agent leaves it
      expect((await stat(box.defaultWorkingDirectory)).isDirectory()).toBe(true);
    } finally {
      await box.destroy();
    }
  });
});

type ChildReport = { text: string; finishReason: string; invalid: unknown[]; isResume: boolean; detached: { type: string } };

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
