// The kit's adapter conformance list, run against the fixture adapter over
// the fixture CLI through createBridgeHarness and the local sandbox provider —
// and against an adapter whose CLI never runs (`sh -c 'echo boom >&2; exit 1'`),
// which must fail the list, saying why; and each outcome case (host tools
// changed between turns, an approval denial, stream-start's modelId, abort,
// the start error) against a fixture adapter broken in just what it checks.
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCliAdapter, type CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { readJsonLine, createLineBuffers, type LineBuffers } from '../../host/adapter-kit/json-lines.ts';
import { createStreamState, partWriter, type StreamState } from '../../host/adapter-kit/part-writer.ts';
import {
  adapterConformance,
  cannotStartMessage,
  cliThatCannotStart,
  deniedReason,
  type AdapterConformanceContext,
} from '../../host/testing/conformance/adapter-conformance.ts';
import { ConformanceFailure } from '../../host/testing/conformance/sandbox-provider-conformance.ts';
import { createBridgeHarness, type BridgeHarnessSettings } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider, type LocalSandboxSession } from '../../host/sandbox/local/provider.ts';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import { hostedExecSession } from '../fixtures/hosted-sandbox.ts';
import { z } from 'zod';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';

let root: string;
let provider: LocalSandboxProvider;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-conformance-'));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
  await chmod(root, 0o755); // a root bridge runs the CLI under its own uid, which must reach the sandboxes
  provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/**
 * Runs one case against `adapter` with the fixture's prompts; cleanups run whatever happens. `over`: the
 * sandbox session as the harness sees it (a hosted exec API over the local one) with the harness settings it needs.
 */
async function runCase(
  testCase: (typeof adapterConformance)[number],
  adapter: () => CliAdapter<any>,
  over?: { wrap: (sandbox: LocalSandboxSession) => HarnessV1NetworkSandboxSession; settings: BridgeHarnessSettings },
) {
  const cleanups: Array<() => unknown> = [];
  const open = async (sessionId: string, resume: boolean) => {
    const local = resume ? await provider.resumeSession({ sessionId }) : await provider.createSession({ sessionId });
    cleanups.unshift(() => local.stop()); // sandboxes stop last, after the sessions' own cleanup
    const workDir = join(local.defaultWorkingDirectory, `fixture-${sessionId}`);
    await mkdir(workDir, { recursive: true });
    return { sandbox: over ? over.wrap(local) : local, workDir };
  };
  const settings: BridgeHarnessSettings = { probeTimeoutMs: 1_500, ...over?.settings };
  const ctx: AdapterConformanceContext = {
    harness: () => createBridgeHarness(adapter(), settings),
    harnessWithFailingStart: () => createBridgeHarness(cliThatCannotStart(adapter()), settings),
    createSandbox: (id) => open(id, false),
    resumeSandbox: (id) => open(id, true),
    prompts: {
      text: 'hello LINES:2',
      textReply: 'hello LINES:2 #0\nhello LINES:2 #1\n',
      long: 'long LINES:60 INTERVAL:5',
      minParts: 40,
      hostTool: { prompt: 'tool LINES:1 TOOL:lookup', tools: [{ name: 'lookup' }], output: { ok: true } },
      approval: { prompt: 'deny me LINES:1 APPROVE:bash', reply: `deny me LINES:1 APPROVE:bash #denied bash: ${deniedReason}\n` },
    },
    modelId: 'fixture',
    defer: (cleanup) => void cleanups.push(cleanup),
  };
  try {
    return await testCase.run(ctx);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

describe('adapter conformance: fixture adapter', () => {
  for (const testCase of adapterConformance) {
    it(testCase.name, async (context) => {
      const outcome = await runCase(testCase, () => fixtureAdapter());
      if (outcome.status === 'skip') context.skip(outcome.reason);
    });
  }
});

// The same list through a simulated hosted exec API (output as strings, each stdin write delayed and
// rate-limited: test/fixtures/hosted-sandbox.ts), with the exec transport's base64 lines and batched writes.
describe('adapter conformance: fixture adapter over a hosted exec API (base64 lines, batched writes)', () => {
  const hosted = { wrap: (sandbox: LocalSandboxSession) => hostedExecSession(sandbox).session, settings: { execTransport: { framing: 'base64-lines', batchWritesMs: 2 } } } as const;
  for (const testCase of adapterConformance) {
    it(testCase.name, async (context) => {
      const outcome = await runCase(testCase, () => fixtureAdapter(), hosted);
      if (outcome.status === 'skip') context.skip(outcome.reason);
    });
  }
});

/**
 * An adapter over a CLI that never runs: it prints `boom` on stderr and exits 1. Its translator is
 * honest (stderr becomes raw parts, the exit an error part and finish error), so every check that
 * looks only at the stream's shape would pass it.
 */
function boomAdapter(): CliAdapter<{ lines: LineBuffers; stream: StreamState }> {
  return defineCliAdapter({
    harnessId: 'boom',
    builtinTools: {},
    launch: (ctx) => ({
      argv: ['sh', '-c', 'echo boom >&2; exit 1'],
      cwd: ctx.sessionWorkDir,
      stdin: 'pipe',
      lifetime: 'session',
      turnEnd: [{ stream: 'stdout', prefix: '{"type":"result"' }],
    }),
    encodePrompt: ({ text }) => `${JSON.stringify({ type: 'prompt', text })}\n`,
    threadId: () => undefined,
    translator: {
      init: () => ({ lines: createLineBuffers(), stream: createStreamState() }),
      step: (state, record) => {
        const parts: Parameters<typeof partWriter>[1] = [];
        const out = partWriter(state.stream, parts);
        if (record.kind === 'turn-end') out.endTurn(record, 'boom');
        const line = readJsonLine(state.lines, record, z.unknown());
        if (line) out.raw(line.stream === 'stderr' ? { stderr: line.json } : line.json);
        return { state, parts };
      },
    },
  });
}

describe('adapter conformance: a CLI that never runs fails the list', () => {
  it('the text turn fails, naming the CLI\'s stderr and its exit; so do the cases that run a turn', async () => {
    const outcomes: Record<string, string> = {};
    for (const testCase of adapterConformance) {
      try {
        const outcome = await runCase(testCase, boomAdapter);
        outcomes[testCase.name] = outcome.status;
      } catch (error) {
        expect(error, `${testCase.name}: fails with a ConformanceFailure, not a crash`).toBeInstanceOf(ConformanceFailure);
        outcomes[testCase.name] = `fail: ${(error as Error).message}`;
      }
    }
    const [text, model, two, suspend, detach, stop, foreign, abort, tool, toolsChanged, deny, cannotStart] = adapterConformance.map((c) => outcomes[c.name]!);
    expect(text).toMatch(/^fail: text turn: finished error \(raw "exit"\), expected stop; the host saw: .*raw part: \{"stderr":"boom"\}/);
    expect(text).toMatch(/error part: boom ended the turn without a result \(exit, code 1\)/);
    for (const outcome of [model, two, suspend, detach, stop, abort, tool, toolsChanged, deny]) expect(outcome).toMatch(/^fail: /);
    expect(model, 'the modelId case fails too: the boom adapter names no model').toMatch(/stream-start carries no modelId|expected "fixture"/);
    expect(foreign, 'refusing a foreign payload needs no CLI').toBe('pass');
    expect(cannotStart, 'its start error does reach the host').toBe('pass');
    const passed = Object.values(outcomes).filter((outcome) => outcome === 'pass');
    expect(passed.length, 'was 5 of 8 when the checks looked only at the shape').toBe(2);
    expect(Object.keys(outcomes)).toHaveLength(12);
  }, 600_000); // twelve cases in a row, ~50 s on a loaded CI box: a hang guard

  it('an adapter with a thread-start exchange (a JSON-RPC CLI such as Codex) reports its start error too', async () => {
    const threadStarting = () => {
      const { kind: _kind, ...definition } = fixtureAdapter();
      return defineCliAdapter({ ...definition, encodeThreadStart: () => `${JSON.stringify({ type: 'prompt', text: 'thread', lines: 0 })}\n` });
    };
    const cannotStart = adapterConformance.find((c) => c.name.startsWith('a CLI that cannot start'))!;
    expect(await runCase(cannotStart, threadStarting)).toEqual({ status: 'pass' });
    const text = adapterConformance[0]!;
    expect(await runCase(text, threadStarting), 'the same adapter with a CLI that starts').toEqual({ status: 'pass' });
  }, 60_000);

  it(`cliThatCannotStart keeps the launch spec but argv, which prints "${cannotStartMessage}" and exits 3`, () => {
    const ctx = { mode: 'fresh', threadId: undefined, prompt: 'p', sessionWorkDir: '/w', bootstrapDir: '/b', stateDir: '/s', permissionMode: 'allow-all', tools: [], mcp: undefined, modelId: undefined } as const;
    const original = fixtureAdapter().launch(ctx);
    const broken = cliThatCannotStart(fixtureAdapter()).launch(ctx);
    expect({ ...broken, argv: original.argv }).toEqual(original);
    expect(broken.argv).toEqual(['sh', '-c', `echo '${cannotStartMessage}' >&2; exit 3`]);
    expect(cliThatCannotStart(fixtureAdapter(), "it's broken").launch(ctx).argv[2]).toBe(`echo 'it'\\''s broken' >&2; exit 3`);
  });
});

/** The case named `prefix…`; runs it against `adapter` and returns its outcome, or the failure's message. */
async function outcomeOf(prefix: string, adapter: () => CliAdapter<any>): Promise<string> {
  const testCase = adapterConformance.find((c) => c.name.startsWith(prefix));
  if (!testCase) throw new Error(`no conformance case starts with "${prefix}"`);
  try {
    return (await runCase(testCase, adapter)).status;
  } catch (error) {
    expect(error, `${prefix}: a ConformanceFailure, not a crash`).toBeInstanceOf(ConformanceFailure);
    return `fail: ${(error as Error).message}`;
  }
}

/** The fixture adapter with some of its definition replaced. */
function brokenFixture(change: (definition: Omit<CliAdapter<any>, 'kind'>) => Partial<Omit<CliAdapter<any>, 'kind'>>, options: Parameters<typeof fixtureAdapter>[0] = {}) {
  return () => {
    const { kind: _kind, ...definition } = fixtureAdapter(options);
    return defineCliAdapter<any>({ ...definition, ...change(definition) });
  };
}

describe('adapter conformance: each outcome case fails an adapter that breaks what it checks', () => {
  it('host tools changed between turns: a CLI that keeps the tool list it was spawned with passes (the kit respawns it); claiming it re-lists them (reListsHostTools) fails', async () => {
    expect(await outcomeOf('host tools changed between turns', () => fixtureAdapter({ hostToolsAtSpawn: true }))).toBe('pass');
    const claiming = brokenFixture(() => ({ reListsHostTools: true }), { hostToolsAtSpawn: true });
    const outcome = await outcomeOf('host tools changed between turns', claiming);
    expect(outcome).toMatch(/^fail: second turn \(its own host tool\): expected exactly one host tool-call part, got 0; the text reads .*no tool lookup \(this process knows conformance_first_turn_only\)/);
  }, 60_000);

  it('an approval denial: an adapter that answers every approval with "approved" fails (the tool ran)', async () => {
    const approving = brokenFixture((definition) => ({ encodeApproval: (answer, state) => definition.encodeApproval!({ ...answer, approved: true }, state) }));
    expect(await outcomeOf('an approval denial reaches the CLI', approving)).toMatch(/^fail: the denied call approve-1 ran: its result "\\"ran bash\\"" is no error/);
    const reasonless = brokenFixture((definition) => ({ encodeApproval: ({ reason: _reason, ...answer }, state) => definition.encodeApproval!(answer, state) }));
    expect(await outcomeOf('an approval denial reaches the CLI', reasonless), 'an adapter that drops the reason: the model never hears it').toMatch(
      /^fail: after the denial the reply reads .*denied bash: no reason given.*the denial did not reach the model/,
    );
  }, 60_000);

  it('stream-start names the model: a translator whose stream-start names none fails', async () => {
    const anonymous = brokenFixture((definition) => ({
      translator: {
        ...definition.translator,
        step: (state, record) => {
          const out = definition.translator.step(state, record);
          return { state: out.state, parts: out.parts.map((part) => (part.type === 'stream-start' ? { type: 'stream-start' as const } : part)) };
        },
      },
    }));
    expect(await outcomeOf('stream-start names the model', anonymous)).toBe('fail: stream-start\'s modelId is undefined, expected "fixture"');
  }, 60_000);

  it('abort: an adapter whose interrupt the CLI does not understand fails (the turn streams on to its end)', async () => {
    const deaf = brokenFixture((definition) => ({
      launch: (ctx) => {
        const spec = definition.launch(ctx);
        return { ...spec, argv: spec.argv.filter((arg) => arg !== '--sigint-interrupts'), interrupt: { input: '{"type":"not-an-interrupt"}\n' } };
      },
    }));
    expect(await outcomeOf('abortSignal interrupts the CLI', deaf)).toBe('fail: the aborted turn still finished stop: the abort did not interrupt the CLI');
  }, 60_000);

  it('a CLI that cannot start: an adapter that drops the CLI\'s stderr fails (the host is not told why)', async () => {
    const quiet = brokenFixture((definition) => ({
      translator: { ...definition.translator, step: (state, record) => (record.kind === 'stderr' ? { state, parts: [] } : definition.translator.step(state, record)) },
    }));
    expect(await outcomeOf('a CLI that cannot start', quiet)).toMatch(/^fail: the CLI printed "harness-bridge conformance: this CLI cannot start" on stderr and exited 3, but the host was not told/);
  }, 60_000);
});
