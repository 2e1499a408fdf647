// Conformance cases every bridge-backed HarnessV1 (any CLI adapter through
// createBridgeHarness) must pass, framework-free: `{ name, run(ctx) }`, throws
// ConformanceFailure on failure, returns a skip with its reason when the
// adapter lacks what a case needs (e.g. no host-tool prompt). The runner owns
// timeouts and reporting; ctx.defer owns cleanup.
import type { HarnessV1NetworkSandboxSession } from '../../../protocol/harness-v1/sandbox.ts';
import type {
  HarnessV1,
  HarnessV1PermissionMode,
  HarnessV1ResumeState,
  HarnessV1Session,
  HarnessV1ToolSpec,
} from '../../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { streamPartSchema } from '../../../protocol/harness-v1/stream-part-schema.ts';
import { ConformanceFailure, type ConformanceOutcome } from './sandbox-provider-conformance.ts';

export interface AdapterConformanceContext {
  /** A new harness instance, as a fresh host process would build it. */
  harness(): HarnessV1;
  /** A new sandbox session (and its session work dir, created) for `sessionId`. */
  createSandbox(sessionId: string): Promise<{ sandbox: HarnessV1NetworkSandboxSession; workDir: string }>;
  /** The same sandbox, reached again by id (what a fresh host process does on resume). */
  resumeSandbox(sessionId: string): Promise<{ sandbox: HarnessV1NetworkSandboxSession; workDir: string }>;
  readonly prompts: {
    /** A short turn that ends with text. */
    readonly text: string;
    /** A turn that emits at least `minParts` parts, slowly enough to suspend in the middle. */
    readonly long: string;
    readonly minParts: number;
    /** A turn that calls the host tool `tools[0]`, answered with `output`. */
    readonly hostTool?: { prompt: string; tools: HarnessV1ToolSpec[]; output: unknown };
  };
  readonly permissionMode?: HarnessV1PermissionMode;
  defer(cleanup: () => unknown): void;
  log?(message: string): void;
}

export interface AdapterConformanceCase {
  readonly name: string;
  run(ctx: AdapterConformanceContext): Promise<ConformanceOutcome>;
}

const pass: ConformanceOutcome = { status: 'pass' };

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}

let sessions = 0;
async function start(ctx: AdapterConformanceContext, label: string, resumeFrom?: HarnessV1ResumeState, id?: string) {
  const sessionId = id ?? `conf-${label}-${process.pid}-${++sessions}`;
  const { sandbox, workDir } = resumeFrom ? await ctx.resumeSandbox(sessionId) : await ctx.createSandbox(sessionId);
  const session = await ctx.harness().doStart({
    sessionId,
    sandboxSession: sandbox,
    sessionWorkDir: workDir,
    ...(ctx.permissionMode ? { permissionMode: ctx.permissionMode } : {}),
    ...(resumeFrom ? { resumeFrom } : {}),
  });
  return { sessionId, session };
}

async function turn(session: HarnessV1Session, prompt: string, tools?: HarnessV1ToolSpec[]): Promise<HarnessV1StreamPart[]> {
  const parts: HarnessV1StreamPart[] = [];
  const control = await session.doPromptTurn({ prompt, ...(tools ? { tools } : {}), emit: (part) => parts.push(part) });
  await control.done;
  return parts;
}

function checkTurnShape(parts: HarnessV1StreamPart[], what: string): void {
  check(parts[0]?.type === 'stream-start', `${what}: first part is ${parts[0]?.type ?? 'missing'}, expected stream-start`);
  check(parts.at(-1)?.type === 'finish', `${what}: last part is ${parts.at(-1)?.type ?? 'missing'}, expected finish`);
  parts.forEach((part, i) => {
    const parsed = streamPartSchema.safeParse(part);
    check(parsed.success, `${what}: part ${i} (${part.type}) does not match HarnessV1StreamPart: ${parsed.error?.issues[0]?.message}`);
  });
}

/**
 * Parts with their ids renamed by order of first appearance, so two runs of
 * the same prompt in different sessions (different seqs) compare equal. Raw
 * parts keep only their type: they pass CLI output through verbatim, and CLIs
 * print per-session uuids and timings in it.
 */
export function normalizeIds(parts: ReadonlyArray<HarnessV1StreamPart>): unknown[] {
  const ids = new Map<string, string>();
  const rename = (id: string) => {
    if (!ids.has(id)) ids.set(id, `#${ids.size}`);
    return ids.get(id)!;
  };
  return parts.map((part) => {
    if (part.type === 'raw') return { type: 'raw' };
    const copy: Record<string, unknown> = { ...part };
    for (const key of ['id', 'toolCallId', 'approvalId']) if (typeof copy[key] === 'string') copy[key] = rename(copy[key] as string);
    return copy;
  });
}

export const adapterConformance: ReadonlyArray<AdapterConformanceCase> = [
  {
    name: 'a text turn starts with stream-start, ends with finish, and every part is a valid HarnessV1StreamPart',
    async run(ctx) {
      const { session } = await start(ctx, 'text');
      ctx.defer(() => session.doDestroy());
      checkTurnShape(await turn(session, ctx.prompts.text), 'text turn');
      return pass;
    },
  },
  {
    name: 'two prompts in one session each run to finish',
    async run(ctx) {
      const { session } = await start(ctx, 'two');
      ctx.defer(() => session.doDestroy());
      checkTurnShape(await turn(session, ctx.prompts.text), 'first prompt');
      checkTurnShape(await turn(session, ctx.prompts.text), 'second prompt');
      return pass;
    },
  },
  {
    name: 'suspend mid-turn and continue in a fresh harness: the parts equal an uninterrupted run',
    async run(ctx) {
      const reference = await (async () => {
        const { session } = await start(ctx, 'ref');
        ctx.defer(() => session.doDestroy());
        return turn(session, ctx.prompts.long);
      })();
      check(reference.length >= ctx.prompts.minParts, `the long prompt produced ${reference.length} parts, fewer than ${ctx.prompts.minParts}`);
      const { session, sessionId } = await start(ctx, 'slice');
      const cut = Math.floor(reference.length / 2);
      const parts: HarnessV1StreamPart[] = [];
      let suspended: PromiseLike<HarnessV1ResumeState> | undefined;
      const control = await session.doPromptTurn({
        prompt: ctx.prompts.long,
        emit: (part) => {
          parts.push(part);
          if (parts.length === cut && !suspended) suspended = session.doSuspendTurn();
        },
      });
      await control.done;
      check(suspended, `the turn ended after ${parts.length} parts, before the suspend point ${cut}`);
      const state = await suspended;
      const resumed = await start(ctx, 'slice', state, sessionId);
      ctx.defer(() => resumed.session.doDestroy());
      const control2 = await resumed.session.doContinueTurn({ emit: (part) => parts.push(part) });
      await control2.done;
      const got = JSON.stringify(normalizeIds(parts));
      const want = JSON.stringify(normalizeIds(reference));
      check(got === want, `suspend at part ${cut} + continue differs from the uninterrupted run:\n got ${got.slice(0, 400)}\nwant ${want.slice(0, 400)}`);
      return pass;
    },
  },
  {
    name: 'detach, then a fresh harness runs the next prompt on the same session',
    async run(ctx) {
      const { session, sessionId } = await start(ctx, 'detach');
      checkTurnShape(await turn(session, ctx.prompts.text), 'before detach');
      const state = await session.doDetach();
      const resumed = await start(ctx, 'detach', state, sessionId);
      ctx.defer(() => resumed.session.doDestroy());
      check(resumed.session.isResume, 'a session started from a resume payload reports isResume');
      checkTurnShape(await turn(resumed.session, ctx.prompts.text), 'after re-attach');
      return pass;
    },
  },
  {
    name: 'stop, then resume in a new bridge and run the next prompt on the same CLI thread',
    async run(ctx) {
      const { session, sessionId } = await start(ctx, 'stop');
      checkTurnShape(await turn(session, ctx.prompts.text), 'before stop');
      const state = await session.doStop();
      const resumed = await start(ctx, 'stop', state, sessionId);
      ctx.defer(() => resumed.session.doDestroy());
      checkTurnShape(await turn(resumed.session, ctx.prompts.text), 'after resume');
      return pass;
    },
  },
  {
    name: 'a resume payload from another harness is refused with a clear error',
    async run(ctx) {
      const { session, sessionId } = await start(ctx, 'foreign');
      ctx.defer(() => session.doDestroy());
      const state = await session.doSuspendTurn();
      const foreign = { ...state, harnessId: `${state.harnessId}-other` };
      let refused: unknown;
      try {
        await start(ctx, 'foreign', foreign, sessionId);
      } catch (error) {
        refused = error;
      }
      check(refused instanceof Error && refused.message.includes(foreign.harnessId), 'the foreign payload was not refused by name');
      return pass;
    },
  },
  {
    name: 'abortSignal interrupts the CLI and done settles with an AbortError; the session stays usable',
    async run(ctx) {
      const { session } = await start(ctx, 'abort');
      ctx.defer(() => session.doDestroy());
      const abort = new AbortController();
      let count = 0;
      const control = await session.doPromptTurn({
        prompt: ctx.prompts.long,
        abortSignal: abort.signal,
        emit: () => {
          if (++count === 2) abort.abort();
        },
      });
      let error: unknown;
      try {
        await control.done;
      } catch (e) {
        error = e;
      }
      check(error instanceof Error && error.name === 'AbortError', `done settled with ${String(error)}, expected an AbortError`);
      checkTurnShape(await turn(session, ctx.prompts.text), 'the turn after an abort');
      return pass;
    },
  },
  {
    name: 'a host tool call reaches the consumer as a tool-call part and its submitted result lets the turn finish',
    async run(ctx) {
      const spec = ctx.prompts.hostTool;
      if (!spec) return { status: 'skip', reason: 'the runner gave no host-tool prompt for this adapter' };
      const { session } = await start(ctx, 'tool');
      ctx.defer(() => session.doDestroy());
      const parts: HarnessV1StreamPart[] = [];
      const control = await session.doPromptTurn({
        prompt: spec.prompt,
        tools: spec.tools,
        emit: (part) => {
          parts.push(part);
          if (part.type === 'tool-call' && part.providerExecuted !== true) {
            void control.submitToolResult({ toolCallId: part.toolCallId, output: spec.output });
          }
        },
      });
      await control.done;
      const calls = parts.filter((p) => p.type === 'tool-call' && p.providerExecuted !== true);
      check(calls.length === 1, `expected exactly one host tool-call part, got ${calls.length}`);
      checkTurnShape(parts, 'host tool turn');
      return pass;
    },
  },
];
