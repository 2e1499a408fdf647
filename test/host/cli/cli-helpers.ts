// Shared by the CLI tests: run `node dist/cli.mjs …` as a real process (bounded
// by a timeout), and make a real fixture session whose every channel is
// recorded (createBridgeHarness with recordDir), sliced across two host
// instances, so replay has something genuine to chew on.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HarnessV1NetworkSandboxSession } from '../../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState, HarnessV1Session } from '../../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { createBridgeHarness } from '../../../host/harness.ts';
import { parseResumeState } from '../../../host/session/resume-state.ts';
import { createLocalSandboxProvider } from '../../../host/sandbox/local/provider.ts';
import { fixtureAdapter } from '../../fixtures/fixture-adapter.ts';
import { joinSlices } from '../../../host/testing/every-cut.ts';

export const cliPath = fileURLToPath(new URL('../../../dist/cli.mjs', import.meta.url));

export type CliRun = { code: number | null; stdout: string; stderr: string };

/** Runs the bundled CLI; kills it after `timeoutMs`. */
export function runCli(
  args: ReadonlyArray<string>,
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string; wrap?: (cmd: string, args: string[]) => { cmd: string; args: string[] } } = {},
): Promise<CliRun> {
  const base = [cliPath, ...args];
  const { cmd, args: argv } = options.wrap ? options.wrap(process.execPath, base) : { cmd: process.execPath, args: base };
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, {
      env: { ...process.env, NO_COLOR: '', FORCE_COLOR: '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export type RecordedSession = {
  root: string;
  recordDir: string;
  stateDir: string;
  /** Every part the consumer got, both slices in order. */
  live: HarnessV1StreamPart[];
  /** The two slices joined as one stream: the start the second re-sends of a block cut open is dropped (joinSlices). */
  joined: HarnessV1StreamPart[];
  sandboxes: HarnessV1NetworkSandboxSession[];
};

/**
 * A fixture turn (`prompt`) started in one host instance, suspended after
 * `cutAfter` parts, continued in a fresh host instance that answers host tool
 * calls; every channel recorded into `<root>/recordings`. The bridge is
 * stopped at the end (its journal stays) unless `keepRunning`.
 */
export async function recordFixtureSession(name: string, prompt: string, cutAfter: number, options: { keepRunning?: boolean } = {}): Promise<RecordedSession> {
  const root = await mkdtemp(join(tmpdir(), `hb-cli-${name}-`));
  await chmod(root, 0o711); // a root bridge runs the CLI under a uid of its own (docs/security.md): it must pass through
  const recordDir = join(root, 'recordings');
  await mkdir(recordDir, { recursive: true });
  const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
  const sandboxes: HarnessV1NetworkSandboxSession[] = [];
  const open = async (state?: HarnessV1ResumeState): Promise<HarnessV1Session> => {
    const sandbox = state ? await provider.resumeSession({ sessionId: name }) : await provider.createSession({ sessionId: name });
    sandboxes.push(sandbox);
    const workDir = join(sandbox.defaultWorkingDirectory, 'work');
    await mkdir(workDir, { recursive: true });
    // A new harness per instance: what a fresh host process would build.
    return createBridgeHarness(fixtureAdapter(), { recordDir, probeTimeoutMs: 1_500 }).doStart({
      sessionId: name,
      sandboxSession: sandbox,
      sessionWorkDir: workDir,
      ...(state ? { resumeFrom: state } : {}),
    });
  };
  const live: HarnessV1StreamPart[] = [];
  const slices: HarnessV1StreamPart[][] = [[], []];
  const first = await open();
  let suspended: PromiseLike<HarnessV1ResumeState> | undefined;
  const control = await first.doPromptTurn({
    prompt,
    emit: (part) => {
      live.push(part);
      slices[0]!.push(part);
      if (live.length === cutAfter && !suspended) suspended = first.doSuspendTurn();
    },
  });
  await Promise.race([control.done, waitUntil(() => suspended !== undefined, 20_000)]);
  if (!suspended) throw new Error(`the turn ended before ${cutAfter} parts`);
  const state = await suspended;
  const second = await open(state);
  const next = await second.doContinueTurn({
    emit: (part) => {
      live.push(part);
      slices[1]!.push(part);
      if (part.type === 'tool-call' && part.providerExecuted !== true) void next.submitToolResult({ toolCallId: part.toolCallId, output: { answer: 42 } });
    },
  });
  await next.done;
  const final = options.keepRunning ? await second.doDetach() : await second.doStop();
  return { root, recordDir, stateDir: parseResumeState('fixture', final).stateDir, live, joined: joinSlices(slices), sandboxes };
}

/** Polls `predicate` every 5 ms, at most `maxMs`. */
export async function waitUntil(predicate: () => boolean, maxMs: number): Promise<void> {
  for (let waited = 0; waited < maxMs && !predicate(); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A host tool call the first slice left unanswered is delivered once more by the next: keep the first. */
export function withoutRedelivery(parts: ReadonlyArray<HarnessV1StreamPart>): HarnessV1StreamPart[] {
  const seen = new Set<string>();
  return parts.filter((part) => {
    if (part.type !== 'tool-call' || part.providerExecuted === true) return true;
    if (seen.has(part.toolCallId)) return false;
    seen.add(part.toolCallId);
    return true;
  });
}

/** Parts as plain JSON (undefined keys dropped), as they come out of `replay --json`. */
export function plain(parts: ReadonlyArray<unknown>): unknown[] {
  return parts.map((part) => JSON.parse(JSON.stringify(part)) as unknown);
}

export function ndjson(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as unknown);
}
