// End to end: the real Claude Code 2.1.328 driven through createBridgeHarness(claudeCodeAdapter)
// on the local sandbox provider, against the scripted model server. Every command the sandbox
// runs (the bridge, and so Claude) joins the model server's loopback-only network namespace
// (nsenter); the host reaches the bridge through a unix-socket forwarder, so nothing can leave
// the machine. Without root/unshare the namespace is skipped and the reason printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCliAdapter } from '../../host/adapter.ts';
import { adapterConformance, type AdapterConformanceContext } from '../../host/conformance/adapter.ts';
import { claudeCodeAdapter } from '../../host/adapters/claude-code.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider } from '../../host/sandbox/local.ts';
import type { HarnessV1NetworkSandboxSession, SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1PermissionMode, HarnessV1ResumeState, HarnessV1Session, HarnessV1Skill } from '../../protocol/harness-v1/session.ts';
import { streamPartSchema } from '../../protocol/harness-v1/stream-part-schema.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { ensureCli } from '../../scripts/install-clis.mjs';
import { startIsolatedModelServer, type IsolatedModelServer } from '../model-server/netns.ts';

type Part = HarnessV1StreamPart;
const unixForward = fileURLToPath(new URL('../fixtures/unix-forward.mjs', import.meta.url));
const ofType = <T extends Part['type']>(parts: Part[], type: T) => parts.filter((p): p is Extract<Part, { type: T }> => p.type === type);
const textOf = (parts: Part[]) => ofType(parts, 'text-delta').map((p) => p.delta).join('');

let root: string;
let bin: string;
let model: IsolatedModelServer;
let provider: LocalSandboxProvider;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-e2e-claude-'));
  bin = (await ensureCli('claude-code')).binPath;
  model = await startIsolatedModelServer({ logFile: join(root, 'requests.jsonl') });
  if (!model.isolated) console.warn(`claude-code e2e: running WITHOUT a network namespace: ${model.reason}`);
  provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
}, 300_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await model?.close();
  await rm(root, { recursive: true, force: true });
});

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Reaches a port inside the namespace from here: unix-forward inside, a TCP listener outside. */
const forwards = new Map<number, Promise<number>>();
function forward(port: number): Promise<number> {
  if (!model.isolated) return Promise.resolve(port);
  let found = forwards.get(port);
  if (found) return found;
  found = (async () => {
    const socket = join(root, `fwd-${port}.sock`);
    const w = model.wrap(process.execPath, [unixForward, socket, String(port)]);
    const child: ChildProcess = spawn(w.cmd, w.args, { stdio: ['ignore', 'pipe', 'inherit'] });
    cleanups.push(() => void child.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`unix-forward exited (${code})`)));
    });
    const open = new Set<Socket>();
    const server: Server = createServer((inbound) => {
      const outbound = connect(socket);
      open.add(inbound).add(outbound);
      inbound.once('close', () => open.delete(inbound));
      outbound.once('close', () => open.delete(outbound));
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('error', () => outbound.destroy()); // either side failing ends the pair
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      for (const socketToClose of open) socketToClose.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    return address.port;
  })();
  forwards.set(port, found);
  return found;
}

/** The local sandbox session with every command run inside the model server's namespace. */
function inNamespace(session: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession {
  if (!model.isolated) return session;
  const nsenter = (command: string) => {
    const w = model.wrap('sh', ['-c', command]);
    return `exec ${[w.cmd, ...w.args].map(quote).join(' ')}`;
  };
  const restricted = session.restricted();
  const wrapped: SandboxSession = {
    ...restricted,
    spawn: ((options) => restricted.spawn({ ...options, command: nsenter(options.command) })) as SandboxSession['spawn'],
    run: (options) => restricted.run({ ...options, command: nsenter(options.command) }),
  };
  return {
    ...session,
    spawn: wrapped.spawn,
    run: wrapped.run,
    restricted: () => wrapped,
    getPortUrl: async ({ port, protocol }) => `${protocol ?? 'http'}://127.0.0.1:${await forward(port)}`,
  };
}

/** What a fresh host process builds: the adapter over the host-installed CLI (no npm inside the namespace). */
function harness() {
  const { kind: _kind, install: _install, ...definition } = claudeCodeAdapter({
    binPath: bin,
    extraEnv: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'sk-test' },
  });
  return createBridgeHarness(defineCliAdapter(definition), { probeTimeoutMs: 3_000 });
}

type Opened = { session: HarnessV1Session; workDir: string; sandbox: HarnessV1NetworkSandboxSession };

async function open(
  sessionId: string,
  permissionMode: HarnessV1PermissionMode = 'allow-all',
  resumeFrom?: HarnessV1ResumeState,
  skills?: HarnessV1Skill[],
): Promise<Opened> {
  const raw = resumeFrom ? await provider.resumeSession({ sessionId }) : await provider.createSession({ sessionId });
  cleanups.push(() => raw.stop());
  const sandbox = inNamespace(raw);
  const workDir = join(sandbox.defaultWorkingDirectory, `claude-code-${sessionId}`);
  await mkdir(workDir, { recursive: true });
  const session = await harness().doStart({
    sessionId,
    sandboxSession: sandbox,
    sessionWorkDir: workDir,
    permissionMode,
    ...(resumeFrom ? { resumeFrom } : {}),
    ...(skills ? { skills } : {}),
  });
  return { session, workDir, sandbox };
}

type Control = Awaited<ReturnType<HarnessV1Session['doPromptTurn']>>;

/** Runs a turn to its end; `onPart` gets the control handle once doPromptTurn has returned it. */
async function turn(session: HarnessV1Session, prompt: string, onPart?: (part: Part, control: Control | undefined) => unknown) {
  const parts: Part[] = [];
  const holder: { control?: Control } = {};
  holder.control = await session.doPromptTurn({
    prompt,
    emit: (part) => {
      parts.push(part);
      void onPart?.(part, holder.control);
    },
  });
  await holder.control.done;
  return { parts, control: holder.control };
}

function expectValid(parts: Part[], where: string): void {
  for (const [i, part] of parts.entries()) expect(streamPartSchema.safeParse(part).success, `${where}: part ${i} ${part.type}`).toBe(true);
  expect(parts[0]?.type, `${where}: starts with stream-start`).toBe('stream-start');
  expect(parts.at(-1)?.type, `${where}: ends with finish`).toBe('finish');
}

const requestsSince = (n: number) => model.requests().filter((r) => r.path === '/v1/messages').slice(n);
const requestCount = () => model.requests().filter((r) => r.path === '/v1/messages').length;

describe('claude-code through the bridge (real CLI)', () => {
  it('a text turn', async () => {
    const { session } = await open('text');
    const { parts } = await turn(session, 'SCENARIO:text say hi');
    expectValid(parts, 'text');
    expect(parts[0]).toMatchObject({ type: 'stream-start', modelId: 'claude-opus-5-5' });
    expect(textOf(parts)).toBe('Scripted reply 1 (text): you said "say hi".');
    expect(ofType(parts, 'text-delta').length, 'real deltas (partial messages)').toBeGreaterThan(1);
    expect(ofType(parts, 'finish')[0]!.finishReason.unified).toBe('stop');
    await session.doDestroy();
  }, 120_000);

  it('Bash + Write in one turn (allow-all)', async () => {
    const { session, workDir } = await open('bash-write');
    const { parts } = await turn(session, 'SCENARIO:multi run a command and write a file');
    expectValid(parts, 'bash-write');
    expect(ofType(parts, 'tool-call').map((c) => [c.toolName, c.providerExecuted])).toEqual([
      ['bash', true],
      ['write', true],
    ]);
    expect(ofType(parts, 'tool-result').map((r) => r.isError)).toEqual([false, false]);
    expect(ofType(parts, 'file-change')).toEqual([{ type: 'file-change', event: 'create', path: join(workDir, 'written.txt') }]);
    expect(await readFile(join(workDir, 'written.txt'), 'utf8')).toBe('hello from the scripted model\n');
    expect(await readFile(join(workDir, 'f.txt'), 'utf8')).toBe('hi\n');
    await session.doDestroy();
  }, 120_000);

  it('host tool round trip over the bridge MCP endpoint', async () => {
    const { session } = await open('mcp');
    const parts: Part[] = [];
    const tools = [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object' as const, properties: { text: { type: 'string' as const } }, required: ['text'] } }];
    const control = await session.doPromptTurn({
      prompt: 'SCENARIO:mcp call the host tool',
      tools,
      emit: (part) => {
        parts.push(part);
        if (part.type === 'tool-call' && !part.providerExecuted) {
          const input: unknown = JSON.parse(part.input);
          const text = typeof input === 'object' && input !== null && 'text' in input ? String(input.text) : '';
          void control.submitToolResult({ toolCallId: part.toolCallId, output: `HOST: ${text.toUpperCase()}` });
        }
      },
    });
    await control.done;
    expectValid(parts, 'mcp');
    const calls = ofType(parts, 'tool-call');
    expect(calls.map((c) => [c.toolName, c.providerExecuted ?? false]), 'exactly one host call, from the bridge record').toEqual([['echo_upper', false]]);
    expect(textOf(parts)).toContain('HOST: HELLO MCP');
    await session.doDestroy();
  }, 120_000);

  for (const approved of [true, false]) {
    it(`approval round trip (${approved ? 'approve' : 'deny'}) with allow-reads`, async () => {
      const { session, workDir } = await open(`approval-${approved}`, 'allow-reads');
      const parts: Part[] = [];
      const control = await session.doPromptTurn({
        prompt: 'SCENARIO:shell',
        emit: (part) => {
          parts.push(part);
          if (part.type === 'tool-approval-request') {
            void control.submitToolApproval!({ approvalId: part.approvalId, approved, ...(approved ? {} : { reason: 'host said no' }) });
          }
        },
      });
      await control.done;
      expectValid(parts, 'approval');
      const [call] = ofType(parts, 'tool-call');
      expect(ofType(parts, 'tool-approval-request')).toEqual([{ type: 'tool-approval-request', approvalId: expect.any(String), toolCallId: call!.toolCallId }]);
      const [result] = ofType(parts, 'tool-result');
      expect(result).toMatchObject({ toolCallId: call!.toolCallId, isError: !approved, result: approved ? 'hi' : 'host said no' });
      if (approved) expect(await readFile(join(workDir, 'f.txt'), 'utf8')).toBe('hi\n');
      else await expect(readFile(join(workDir, 'f.txt'), 'utf8')).rejects.toThrow();
      await session.doDestroy();
    }, 120_000);
  }

  it('two prompts in one session (one live process, the second sees the first)', async () => {
    const { session } = await open('two-prompts');
    const before = requestCount();
    const first = await turn(session, 'SCENARIO:text first prompt');
    const second = await turn(session, 'SCENARIO:text second prompt');
    expectValid(first.parts, 'first');
    expectValid(second.parts, 'second');
    expect(textOf(first.parts)).toBe('Scripted reply 1 (text): you said "first prompt".');
    expect(textOf(second.parts)).toBe('Scripted reply 2 (text): you said "second prompt".');
    const seen = JSON.stringify(requestsSince(before).at(-1)?.body);
    expect(seen).toContain('first prompt');
    await session.doDestroy();
  }, 120_000);

  it('instructions are applied once, on the first prompt', async () => {
    const { session } = await open('instructions');
    const before = requestCount();
    const parts: Part[] = [];
    const control = await session.doPromptTurn({ prompt: 'SCENARIO:text hello', instructions: 'INSTRUCTION-MARKER be brief', emit: (p) => parts.push(p) });
    await control.done;
    await turn(session, 'SCENARIO:text again');
    const lastUserText = (body: unknown) => {
      const messages = (body as { messages: Array<{ role: string; content: unknown }> }).messages.filter((m) => m.role === 'user');
      return JSON.stringify(messages.at(-1)?.content);
    };
    const [first, ...rest] = requestsSince(before);
    expect(lastUserText(first!.body)).toContain('INSTRUCTION-MARKER be brief');
    expect(lastUserText(rest.at(-1)!.body), 'the second prompt goes without the instructions').not.toContain('INSTRUCTION-MARKER');
    expect(lastUserText(rest.at(-1)!.body)).toContain('again');
    await session.doDestroy();
  }, 120_000);

  it('the is_error result: error part and finish error; the session carries on', async () => {
    const { session } = await open('error');
    const failed = await turn(session, 'SCENARIO:fail');
    expectValid(failed.parts, 'fail');
    expect(ofType(failed.parts, 'error')[0]!.error).toMatchObject({ message: 'API Error: 400 scripted failure' });
    expect(ofType(failed.parts, 'finish')[0]!.finishReason.unified).toBe('error');
    const next = await turn(session, 'SCENARIO:text after the error');
    expect(ofType(next.parts, 'finish')[0]!.finishReason.unified).toBe('stop');
    await session.doDestroy();
  }, 120_000);

  it('abort interrupts cleanly; the next prompt works in the same session', async () => {
    const { session } = await open('abort');
    const abort = new AbortController();
    const parts: Part[] = [];
    const control = await session.doPromptTurn({
      prompt: 'SCENARIO:slow INTERVAL:200 stream slowly',
      abortSignal: abort.signal,
      emit: (part) => {
        parts.push(part);
        if (part.type === 'text-delta') abort.abort();
      },
    });
    await expect(control.done).rejects.toThrow();
    expect(ofType(parts, 'finish').map((p) => p.finishReason.unified)).toEqual(['interrupted']);
    expect(ofType(parts, 'error')).toEqual([]);
    const next = await turn(session, 'SCENARIO:text after the interrupt');
    expect(textOf(next.parts)).toContain('after the interrupt');
    await session.doDestroy();
  }, 120_000);

  it('mid-turn user message reaches the model within the running turn', async () => {
    const { session } = await open('mid-turn');
    const before = requestCount();
    let sent = false;
    const { parts } = await turn(session, 'SCENARIO:chain do the chain', (part, control) => {
      if (part.type === 'tool-call' && !sent && control) {
        sent = true;
        return control.submitUserMessage?.('MIDTURN-MARKER also do this');
      }
      return undefined;
    });
    expectValid(parts, 'mid-turn');
    const bodies = requestsSince(before).map((r) => JSON.stringify(r.body));
    expect(bodies.some((b) => b.includes('MIDTURN-MARKER')), 'the model saw the mid-turn message').toBe(true);
    await session.doDestroy();
  }, 120_000);

  it('suspend mid-turn in one host instance, continue in another: the parts equal an uninterrupted run', async () => {
    const prompt = 'SCENARIO:slow CHUNKS:8 INTERVAL:150 slow for slices';
    const reference = await (async () => {
      const { session } = await open('slices-reference');
      const { parts } = await turn(session, prompt);
      await session.doDestroy();
      return parts;
    })();
    const { session } = await open('slices');
    const first: Part[] = [];
    let suspend!: (state: PromiseLike<HarnessV1ResumeState>) => void;
    const suspended = new Promise<PromiseLike<HarnessV1ResumeState>>((resolve) => (suspend = resolve));
    let asked = false;
    await session.doPromptTurn({
      prompt,
      emit: (part) => {
        first.push(part);
        if (!asked && part.type === 'text-delta' && first.filter((p) => p.type === 'text-delta').length === 3) {
          asked = true;
          suspend(session.doSuspendTurn());
        }
      },
    });
    const state = await (await suspended);
    const second: Part[] = [];
    const next = await open('slices', 'allow-all', state);
    const control = await next.session.doContinueTurn({ emit: (part) => second.push(part) });
    await control.done;
    // Ids derived from seq, the CLI's own uuids in raw parts and costs differ between two sessions; everything else must not.
    const normalize = (parts: Part[]) => JSON.parse(JSON.stringify(parts.map((p) => (p.type === 'raw' ? { type: 'raw' } : p))).replace(/"(text|thinking)-\d+(-\d+)?"/g, '"ID"').replace(/"costUsd":[\d.e-]+/g, '"costUsd":0'));
    expect(normalize([...first, ...second])).toEqual(normalize(reference));
    await next.session.doDestroy();
  }, 180_000);

  it('stop, then resume the thread in a new bridge: the model sees the earlier conversation', async () => {
    const { session } = await open('resume');
    await turn(session, 'SCENARIO:text remember the word apple');
    const state = await session.doStop();
    const before = requestCount();
    const next = await open('resume', 'allow-all', state);
    const { parts } = await turn(next.session, 'SCENARIO:text what was the word');
    expect(textOf(parts)).toBe('Scripted reply 2 (text): you said "what was the word".');
    expect(JSON.stringify(requestsSince(before)[0]?.body)).toContain('remember the word apple');
    await next.session.doDestroy();
  }, 180_000);

  it('detach between turns, re-attach from another host instance: same bridge (attach rung), same thread', async () => {
    const { session } = await open('detach');
    await turn(session, 'SCENARIO:text first prompt');
    const state = await session.doDetach();
    const next = await open('detach', 'allow-all', state);
    expect((next.session as unknown as { rungs: string[] }).rungs).toEqual(['attach']);
    const { parts } = await turn(next.session, 'SCENARIO:text second prompt');
    expect(textOf(parts)).toBe('Scripted reply 2 (text): you said "second prompt".');
    await next.session.doDestroy();
  }, 120_000);

  it('bridge SIGKILL mid-turn: replay rung, then the rerun rung re-drives the thread (marked recomputed) and finishes', async () => {
    const { session } = await open('sigkill');
    const first: Part[] = [];
    let kill!: (state: Promise<HarnessV1ResumeState>) => void;
    const killed = new Promise<Promise<HarnessV1ResumeState>>((resolve) => (kill = resolve));
    let asked = false;
    await session.doPromptTurn({
      prompt: 'SCENARIO:slow CHUNKS:10 INTERVAL:150 slow then killed',
      emit: (part) => {
        first.push(part);
        if (asked || part.type !== 'text-delta' || first.filter((p) => p.type === 'text-delta').length < 3) return;
        asked = true;
        kill(
          (async () => {
            const state = await session.doSuspendTurn();
            const stateDir = (state.data as { stateDir: string }).stateDir;
            const info: unknown = JSON.parse(await readFile(join(stateDir, 'bridge.json'), 'utf8'));
            process.kill((info as { pid: number }).pid, 'SIGKILL');
            return state;
          })(),
        );
      },
    });
    const state = await (await killed);
    const next = await open('sigkill', 'allow-all', state);
    const rest: Part[] = [];
    const control = await next.session.doContinueTurn({ emit: (part) => rest.push(part) });
    await control.done;
    expect((next.session as unknown as { rungs: string[] }).rungs).toEqual(['replay', 'rerun']);
    const all = [...first, ...rest];
    const marker = all.findIndex((p) => p.type === 'stream-start' && (p.warnings ?? []).some((w) => w.type === 'other' && /recomputed/.test(w.message)));
    expect(marker, 'the rerun is marked recomputed').toBeGreaterThan(0);
    expect(textOf(all.slice(0, marker)), 'everything journaled before the kill, once').toMatch(/^slow 1 slow 2 slow 3 /);
    expect(ofType(all.slice(0, marker), 'finish'), 'the killed turn does not finish on its own').toEqual([]);
    expect(all.at(-1)?.type).toBe('finish');
    expect(ofType(all.slice(marker), 'finish')[0]!.finishReason.unified).toBe('stop');
    await next.session.doDestroy();
  }, 180_000);

  it('doCompact between turns: /compact through the CLI; the next turn carries the compaction part', async () => {
    const { session } = await open('compact');
    await turn(session, 'SCENARIO:text a turn to compact');
    await session.doCompact();
    const { parts } = await turn(session, 'SCENARIO:text after compact');
    const [compaction] = ofType(parts, 'compaction');
    expect(compaction).toMatchObject({ type: 'compaction', trigger: 'manual' });
    expect(compaction!.summary).toMatch(/Scripted summary/);
    expect(textOf(parts)).toContain('after compact');
    await session.doDestroy();
  }, 120_000);

  it('skills are materialised where Claude discovers them', async () => {
    const skills = [{ name: 'greet-politely', description: 'SKILL-MARKER greet the user politely', content: 'Say hello politely.' }];
    const { session, workDir } = await open('skills', 'allow-all', undefined, skills);
    expect(await readFile(join(workDir, '.claude/skills/greet-politely/SKILL.md'), 'utf8')).toContain('SKILL-MARKER');
    const before = requestCount();
    await turn(session, 'SCENARIO:text hello');
    expect(JSON.stringify(requestsSince(before)[0]?.body), 'the model is told about the skill').toContain('SKILL-MARKER');
    await session.doDestroy();
  }, 120_000);
});

describe('adapter conformance: claude-code (real CLI)', () => {
  for (const testCase of adapterConformance) {
    it(testCase.name, async (context) => {
      const cleanups: Array<() => unknown> = [];
      const sandbox = async (sessionId: string, resume: boolean) => {
        const raw = resume ? await provider.resumeSession({ sessionId }) : await provider.createSession({ sessionId });
        cleanups.unshift(() => raw.stop()); // sandboxes stop last, after the sessions' own cleanup
        const wrapped = inNamespace(raw);
        const workDir = join(wrapped.defaultWorkingDirectory, `claude-code-${sessionId}`);
        await mkdir(workDir, { recursive: true });
        return { sandbox: wrapped, workDir };
      };
      const ctx: AdapterConformanceContext = {
        harness,
        createSandbox: (id) => sandbox(id, false),
        resumeSandbox: (id) => sandbox(id, true),
        prompts: {
          text: 'SCENARIO:text conformance',
          long: 'SCENARIO:slow CHUNKS:30 INTERVAL:60 conformance slices',
          minParts: 30,
          hostTool: {
            prompt: 'SCENARIO:mcp call the host tool',
            tools: [{ name: 'echo_upper', description: 'Echo in upper case', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }],
            output: 'HOST SAYS HI',
          },
        },
        defer: (cleanup) => void cleanups.push(cleanup),
      };
      try {
        const outcome = await testCase.run(ctx);
        if (outcome.status === 'skip') context.skip(outcome.reason);
      } finally {
        for (const cleanup of cleanups.reverse()) await cleanup();
      }
    }, 180_000);
  }
});
