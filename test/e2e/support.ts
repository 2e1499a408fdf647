// What every real-CLI E2E suite needs, whatever the adapter: the scripted model server in its own
// loopback-only network namespace (answering to model.test), the local sandbox provider with every
// sandbox command joined to that namespace (nsenter) and a network policy allowing the scripted
// model only (the bridge isolates the CLI: docs/security.md), the bridge reached through a unix-socket forwarder, sessions opened
// through createBridgeHarness as a fresh host process would, and turn helpers. The adapter and the
// cases are the caller's (test/e2e/cases.ts holds the shared list). Without root/unshare the
// namespace is skipped and the reason printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import type { CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { cliThatCannotStart, type AdapterConformanceContext } from '../../host/testing/conformance/adapter-conformance.ts';
import type { ConformanceOutcome } from '../../host/testing/conformance/sandbox-provider-conformance.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import type { HarnessV1NetworkSandboxSession, SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1, HarnessV1PermissionMode, HarnessV1ResumeState, HarnessV1Session, HarnessV1Skill } from '../../protocol/harness-v1/session.ts';
import { streamPartSchema } from '../../protocol/harness-v1/stream-part-schema.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { startIsolatedModelServer, type IsolatedModelServer } from '../model-server/netns.ts';
import type { RecordedRequest } from '../model-server/server.ts';
import { postMortem } from './post-mortem.ts';
import type { HarnessV1NetworkSandboxSession as SdkNetworkSandboxSession, HarnessV1SandboxProvider as SdkSandboxProvider } from '@ai-sdk/harness';

export type Part = HarnessV1StreamPart;
export type Control = Awaited<ReturnType<HarnessV1Session['doPromptTurn']>>;
export type Opened = { session: HarnessV1Session; workDir: string; sandbox: HarnessV1NetworkSandboxSession };

export const ofType = <T extends Part['type']>(parts: Part[], type: T) => parts.filter((p): p is Extract<Part, { type: T }> => p.type === type);
export const textOf = (parts: Part[]) => ofType(parts, 'text-delta').map((p) => p.delta).join('');

const unixForward = fileURLToPath(new URL('../fixtures/unix-forward.mjs', import.meta.url));
/** The scripted model's name inside the namespace (test/model-server/netns.ts maps it to loopback). */
export const scriptedModelHost = 'model.test';
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Adapter options a case can choose per session (a fresh harness is built with them). Unset: the adapter's default. */
export type E2eVariant = { readonly survive?: boolean };

export type E2eEnv = {
  /** Valid inside tests (set by beforeAll). */
  readonly model: IsolatedModelServer;
  /** A new harness, as a fresh host process builds it. */
  harness(variant?: E2eVariant): HarnessV1;
  open(sessionId: string, permissionMode?: HarnessV1PermissionMode, resumeFrom?: HarnessV1ResumeState, skills?: HarnessV1Skill[], variant?: E2eVariant): Promise<Opened>;
  /** The model requests on this CLI's API path, from index `since` on. */
  requests(since?: number): RecordedRequest[];
  /**
   * A conformance context over this env (cleanups run by the caller). Its sandboxes' stops go to `deferStop`, which the
   * caller runs after the case's own cleanups (the sessions' doDestroy), as test/host/adapter-conformance.test.ts does:
   * a session destroyed after its sandbox was stopped waits ~10 s for a bridge that is gone.
   */
  conformance(prompts: AdapterConformanceContext['prompts'], defer: (cleanup: () => unknown) => void, deferStop: (stop: () => unknown) => void): AdapterConformanceContext;
  /** The running case failed with `error` while its sessions still exist: prints the post-mortem and leads the message with its digest. */
  failedCase(error: unknown): void;
  /**
   * A sandbox provider for the real HarnessAgent (@ai-sdk/harness 1.0.x): the local provider's sessions, every
   * command run inside the namespace and ports reached through the forwarder; stopped when the suite ends.
   */
  agentSandbox(): SdkSandboxProvider;
  /** Where the local provider keeps session directories (`<root>/<sessionId>`). */
  sandboxRoot(): string;
};

/**
 * Registers beforeAll/afterAll for one suite. `adapter` builds the adapter each time a harness is
 * made (a fresh host process), given the installed CLI's bin path and the model server's URL.
 */
export function useE2eEnv(options: {
  name: string;
  install(): Promise<{ binPath: string }>;
  adapter(bin: string, modelUrl: string, variant: E2eVariant): CliAdapter<any>;
  /** The API path this CLI's model requests hit (/v1/messages, /v1/chat/completions, /v1/responses). */
  requestPath: string;
  /** The model server's `--profile` values (reference names or module paths); default the reference profiles. */
  profiles?: ReadonlyArray<string>;
}): E2eEnv {
  let root = '';
  let bin = '';
  let model: IsolatedModelServer | undefined;
  let provider: LocalSandboxProvider;
  const cleanups: Array<() => Promise<void> | void> = [];
  const forwards = new Map<number, Promise<number>>();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), `hb-e2e-${options.name}-`));
    await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
    bin = (await options.install()).binPath;
    // The scripted model answers to model.test inside the namespace: each sandbox's network policy allows that name only.
    model = await startIsolatedModelServer({ logFile: join(root, 'requests.jsonl'), hostName: scriptedModelHost, ...(options.profiles ? { profiles: options.profiles } : {}) });
    if (!model.isolated) console.warn(`${options.name} e2e: running WITHOUT a network namespace: ${model.reason}`);
    provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
  }, 300_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await model?.close();
    // HB_E2E_KEEP=1 keeps the sandboxes (journals, bridge logs) of a run for a post-mortem.
    if (root && process.env.HB_E2E_KEEP !== '1') await rm(root, { recursive: true, force: true });
    else if (root) console.log(`${options.name} e2e: kept ${root}`);
  });

  // A failed case prints its bridges' warnings and the model's requests (post-mortem.ts): the sandboxes go with the suite.
  // A conformance case destroys its sessions (their logs) before it ends: it tells its post-mortem first (failedCase).
  let current = { since: 0, from: 0, told: false };
  const tell = (error?: unknown): void => {
    const requestsLog = join(root, 'requests.jsonl');
    const { text, digest } = postMortem(root, current.since, requestsLog, current.from);
    current.told = true;
    console.error(`[post-mortem] ${text}`);
    if (error instanceof Error) error.message = `[${digest}] ${error.message}`;
  };
  beforeEach(({ onTestFailed }) => {
    const requestsLog = join(root, 'requests.jsonl');
    // The log holds every request body: read its tail only.
    current = { since: Date.now(), from: existsSync(requestsLog) ? statSync(requestsLog).size : 0, told: false };
    const mine = current;
    onTestFailed(() => {
      if (!mine.told) tell();
    });
  });

  const isolated = () => {
    if (!model) throw new Error('the e2e env is used before beforeAll ran');
    return model;
  };

  /** Reaches a port inside the namespace from here: unix-forward inside, a TCP listener outside. */
  function forward(port: number): Promise<number> {
    const m = isolated();
    if (!m.isolated) return Promise.resolve(port);
    let found = forwards.get(port);
    if (found) return found;
    found = (async () => {
      const socket = join(root, `fwd-${port}.sock`);
      const w = m.wrap(process.execPath, [unixForward, socket, String(port)]);
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
        for (const s of open) s.destroy();
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
    const m = isolated();
    if (!m.isolated) return session;
    const nsenter = (command: string, workingDirectory: string | undefined) => {
      const w = m.wrap('sh', ['-c', command], resolve(session.defaultWorkingDirectory, workingDirectory ?? '.'));
      return `exec ${[w.cmd, ...w.args].map(quote).join(' ')}`;
    };
    const restricted = session.restricted();
    const wrapped: SandboxSession = {
      ...restricted,
      spawn: ((o) => restricted.spawn({ ...o, command: nsenter(o.command, o.workingDirectory) })) as SandboxSession['spawn'],
      run: (o) => restricted.run({ ...o, command: nsenter(o.command, o.workingDirectory) }),
    };
    return {
      ...session,
      spawn: wrapped.spawn,
      run: wrapped.run,
      restricted: () => wrapped,
      getPortEndpoint: async ({ port, protocol }) => ({ url: `${protocol ?? 'http'}://127.0.0.1:${await forward(port)}` }),
      getPortUrl: async ({ port, protocol }) => `${protocol ?? 'http'}://127.0.0.1:${await forward(port)}`,
    };
  }

  async function sandbox(sessionId: string, resume: boolean, defer: (cleanup: () => unknown) => void) {
    const raw = resume ? await provider.resumeSession({ sessionId }) : await provider.createSession({ sessionId });
    defer(() => raw.stop());
    // The CLI (isolated by the bridge, issue 21) may reach the scripted model and nothing else; kept across resumes.
    if (!resume && isolated().hostName !== undefined) await raw.setNetworkPolicy({ mode: 'custom', allowedHosts: [isolated().hostName!] });
    const wrapped = inNamespace(raw);
    const workDir = join(wrapped.defaultWorkingDirectory, `${options.name}-${sessionId}`);
    await mkdir(workDir, { recursive: true });
    return { sandbox: wrapped, workDir };
  }

  // Every case runs under the default isolation and the policy above; a surviving CLI's connections go through its
  // keeper's egress proxy, which outlives the bridge (docs/security.md#survive-namespace).
  const harness = (variant: E2eVariant = {}) => createBridgeHarness(options.adapter(bin, isolated().url, variant), { probeTimeoutMs: 3_000 });

  return {
    get model() {
      return isolated();
    },
    harness,
    async open(sessionId, permissionMode = 'allow-all', resumeFrom, skills, variant) {
      const { sandbox: box, workDir } = await sandbox(sessionId, resumeFrom !== undefined, (c) => void cleanups.push(c as () => void));
      const session = await harness(variant).doStart({
        sessionId,
        sandboxSession: box,
        sessionWorkDir: workDir,
        permissionMode,
        ...(resumeFrom ? { resumeFrom } : {}),
        ...(skills ? { skills } : {}),
      });
      return { session, workDir, sandbox: box };
    },
    requests: (since = 0) => isolated().requests().filter((r) => r.path === options.requestPath).slice(since),
    sandboxRoot: () => provider.root,
    agentSandbox: () => {
      // inNamespace keeps every member of the local session (getPortEndpoint and destroy included): an SDK network session.
      const wrap = (raw: Awaited<ReturnType<LocalSandboxProvider['createSession']>>) => {
        cleanups.push(() => raw.stop());
        return inNamespace(raw) as SdkNetworkSandboxSession;
      };
      return {
        specificationVersion: 'harness-sandbox-v1',
        providerId: 'local-e2e',
        createSession: async (o) => wrap(await provider.createSession(o)),
        resumeSession: async (o) => wrap(await provider.resumeSession(o)),
      };
    },
    conformance: (prompts, defer, deferStop) => ({
      harness: () => harness(),
      harnessWithFailingStart: () => createBridgeHarness(cliThatCannotStart(options.adapter(bin, isolated().url, {})), { probeTimeoutMs: 3_000 }),
      createSandbox: (id) => sandbox(id, false, deferStop),
      resumeSandbox: (id) => sandbox(id, true, deferStop),
      prompts,
      defer,
    }),
    failedCase: tell,
  };
}

/** Runs a turn to its end; `onPart` gets the control handle once doPromptTurn has returned it. */
export async function turn(session: HarnessV1Session, prompt: string, onPart?: (part: Part, control: Control | undefined) => unknown) {
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

export function expectValid(parts: Part[], where: string): void {
  for (const [i, part] of parts.entries()) expect(streamPartSchema.safeParse(part).success, `${where}: part ${i} ${part.type}`).toBe(true);
  expect(parts[0]?.type, `${where}: starts with stream-start`).toBe('stream-start');
  expect(parts.at(-1)?.type, `${where}: ends with finish`).toBe('finish');
}

/**
 * Runs one conformance case on a context `build` makes from where its cleanups go and where its sandboxes' stops go;
 * the stops run after the cleanups (a session destroyed after its sandbox stopped waits for a bridge that is gone).
 * A case that says it cannot apply is skipped with its reason.
 */
export async function runConformanceCase<C>(
  run: (ctx: C) => Promise<ConformanceOutcome>,
  build: (defer: (cleanup: () => unknown) => void, deferStop: (stop: () => unknown) => void) => C,
  context: { skip(note?: string): void },
  /** Told of a failure before the case's cleanups run (they destroy its sessions and their logs). */
  onFailure?: (error: unknown) => void,
): Promise<void> {
  const cleanups: Array<() => unknown> = [];
  const stops: Array<() => unknown> = [];
  try {
    const outcome = await run(build((cleanup) => void cleanups.push(cleanup), (stop) => void stops.push(stop)));
    if (outcome.status === 'skip') context.skip(outcome.reason);
  } catch (error) {
    onFailure?.(error);
    throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    for (const stop of stops.reverse()) await stop();
  }
}
