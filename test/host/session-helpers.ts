// Shared setup for host-kit tests: a local sandbox under a temp root, the
// fixture adapter's harness, and helpers to run a turn and collect its parts.
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessV1Diagnostic } from '../../protocol/harness-v1/diagnostics.ts';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1PromptControl, HarnessV1ResumeState, HarnessV1Session } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createBridgeHarness, type BridgeHarness, type BridgeHarnessSettings } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';

export type Kit = {
  root: string;
  provider: LocalSandboxProvider;
  diagnostics: HarnessV1Diagnostic[];
  /** A new harness instance: what a fresh host process would build. */
  harness(settings?: BridgeHarnessSettings): BridgeHarness;
  /** A new sandbox session + harness session. */
  start(sessionId: string, options?: { settings?: BridgeHarnessSettings; wrap?: (s: HarnessV1NetworkSandboxSession) => HarnessV1NetworkSandboxSession }): Promise<Started>;
  /** What a fresh host process does with a resume payload. */
  resume(sessionId: string, state: HarnessV1ResumeState, options?: { settings?: BridgeHarnessSettings; wrap?: (s: HarnessV1NetworkSandboxSession) => HarnessV1NetworkSandboxSession }): Promise<Started>;
  cleanup(): Promise<void>;
};

export type Started = { sandbox: HarnessV1NetworkSandboxSession; session: HarnessV1Session; workDir: string };

/** `adapter`: another adapter than the fixture one (e.g. the chaos adapter, whose prompts can hold the CLI). */
export async function createKit(
  name: string,
  adapterOptions: Parameters<typeof fixtureAdapter>[0] = {},
  adapter: () => Parameters<typeof createBridgeHarness>[0] = () => fixtureAdapter(adapterOptions),
): Promise<Kit> {
  const root = await mkdtemp(join(tmpdir(), `hb-${name}-`));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
  const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
  const diagnostics: HarnessV1Diagnostic[] = [];
  const sandboxes: HarnessV1NetworkSandboxSession[] = [];
  const harness = (settings: BridgeHarnessSettings = {}) =>
    createBridgeHarness(adapter(), { probeTimeoutMs: 1_500, ...settings });
  const open = async (
    sessionId: string,
    sandbox: HarnessV1NetworkSandboxSession,
    resumeFrom: HarnessV1ResumeState | undefined,
    options: { settings?: BridgeHarnessSettings; wrap?: (s: HarnessV1NetworkSandboxSession) => HarnessV1NetworkSandboxSession } = {},
  ): Promise<Started> => {
    sandboxes.push(sandbox);
    const wrapped = options.wrap ? options.wrap(sandbox) : sandbox;
    const workDir = join(sandbox.defaultWorkingDirectory, `fixture-${sessionId}`);
    await mkdir(workDir, { recursive: true });
    const session = await harness(options.settings).doStart({
      sessionId,
      sandboxSession: wrapped,
      sessionWorkDir: workDir,
      observability: { report: (d) => diagnostics.push(d) },
      ...(resumeFrom ? { resumeFrom } : {}),
    });
    return { sandbox: wrapped, session, workDir };
  };
  return {
    root,
    provider,
    diagnostics,
    harness,
    start: async (sessionId, options) => open(sessionId, await provider.createSession({ sessionId }), undefined, options),
    resume: async (sessionId, state, options) => open(sessionId, await provider.resumeSession({ sessionId }), state, options),
    cleanup: async () => {
      // One stop per sandbox: every instance of it kills the same recorded groups, and a suite that resumes
      // hundreds of times would otherwise spend minutes scanning /proc for the same keepers.
      const byId = new Map(sandboxes.map((sandbox) => [sandbox.id, sandbox]));
      for (const sandbox of byId.values()) await sandbox.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** The session's connection to its bridge (null when it holds none): what a suspend must leave behind. */
export const channelOf = (session: HarnessV1Session): unknown => (session as unknown as { channel: unknown }).channel;

/** Runs a prompt turn to its end and returns every part it emitted. */
export async function runTurn(session: HarnessV1Session, prompt: string): Promise<HarnessV1StreamPart[]> {
  const parts: HarnessV1StreamPart[] = [];
  const control = await session.doPromptTurn({ prompt, emit: (part) => parts.push(part) });
  await control.done;
  return parts;
}

/** Starts a turn, collecting parts, and calls `onPart` after each one (it may suspend). */
export async function startTurn(
  session: HarnessV1Session,
  prompt: string,
  onPart?: (part: HarnessV1StreamPart, count: number, control: ControlLater) => void,
): Promise<{ parts: HarnessV1StreamPart[]; control: HarnessV1PromptControl }> {
  const parts: HarnessV1StreamPart[] = [];
  const later = controlLater();
  const control = later.resolve(
    await session.doPromptTurn({
      prompt,
      emit: (part) => {
        parts.push(part);
        onPart?.(part, parts.length, later);
      },
    }),
  );
  return { parts, control };
}

export type ControlLater = { use(act: (control: HarnessV1PromptControl) => unknown): void; resolve(control: HarnessV1PromptControl): HarnessV1PromptControl };

/**
 * A turn's control for its emit callback: parts can come before doPromptTurn / doContinueTurn resolves (the CLI's
 * records may reach the host before the start's ack), so a callback that answers a part waits for the control.
 */
export function controlLater(): ControlLater {
  let resolve!: (control: HarnessV1PromptControl) => void;
  const control = new Promise<HarnessV1PromptControl>((settle) => (resolve = settle));
  return {
    use: (act) => void control.then(act),
    resolve: (given) => {
      resolve(given);
      return given;
    },
  };
}

/** Deltas of a finished fixture turn joined, for quick content checks. */
export function textOf(parts: ReadonlyArray<HarnessV1StreamPart>): string {
  return parts.map((part) => (part.type === 'text-delta' ? part.delta : '')).join('');
}

/** A seeded PRNG (mulberry32) so schedules are reproducible from a printed seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
