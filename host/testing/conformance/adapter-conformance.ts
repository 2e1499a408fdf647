// Conformance cases every bridge-backed HarnessV1 (any CLI adapter through
// createBridgeHarness) must pass, framework-free: `{ name, run(ctx) }`, throws
// ConformanceFailure on failure, returns a skip with its reason when the
// adapter lacks what a case needs (e.g. no host-tool prompt). The runner owns
// timeouts and reporting; ctx.defer owns cleanup.
// The cases check outcomes, not only the stream's shape: a text turn finishes
// `stop` with the reply the runner expects, a host tool runs and its result
// lets the turn finish `stop` (also a tool first offered in a later turn: a
// long-lived CLI must get it), stream-start names the model, an abort really
// interrupts, a denied approval keeps the tool from running and reaches the
// model, and a CLI that cannot start is reported to the host by its own words. A failure says what the host saw (error parts, raw stderr, rejections),
// so an adapter whose CLI never runs fails the list with the reason.
import type { HarnessV1NetworkSandboxSession } from '../../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1, HarnessV1PermissionMode, HarnessV1ResumeState, HarnessV1ToolSpec } from '../../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { defineCliAdapter, type CliAdapter } from '../../adapter-kit/adapter.ts';
import { blockProblem, joinSlices } from '../every-cut.ts';
import { ConformanceFailure, type ConformanceOutcome } from './sandbox-provider-conformance.ts';
import { check, checkStopped, type HostToolSpec, checkTextTurn, checkTurnShape, clip, deferredControl, errorText, firstDifference, hostToolTurn, matches, normalizeIds, seen, textOf, told, turn } from './turn-checks.ts';

export { normalizeIds } from './turn-checks.ts';

export interface AdapterConformanceContext {
  /** A new harness instance, as a fresh host process would build it. */
  harness(): HarnessV1;
  /**
   * A harness over the same adapter whose CLI cannot start: `createBridgeHarness(cliThatCannotStart(adapter), settings)`.
   * The start-error case runs a turn on it and demands that the host is told why (the CLI's stderr or the spawn
   * error, in an error part, a raw part or the turn's rejection). Without it that case is skipped.
   */
  harnessWithFailingStart?(): HarnessV1;
  /** A new sandbox session (and its session work dir, created) for `sessionId`. */
  createSandbox(sessionId: string): Promise<{ sandbox: HarnessV1NetworkSandboxSession; workDir: string }>;
  /** The same sandbox, reached again by id (what a fresh host process does on resume). */
  resumeSandbox(sessionId: string): Promise<{ sandbox: HarnessV1NetworkSandboxSession; workDir: string }>;
  readonly prompts: {
    /** A short turn that ends with text (finish `stop`). */
    readonly text: string;
    /**
     * What the text turn's reply reads (its text deltas joined): a string must match exactly, a RegExp must
     * match. The same prompt runs several times per session, so a reply that counts turns wants a RegExp.
     * Default: any non-empty text.
     */
    readonly textReply?: string | RegExp;
    /** A turn that emits at least `minParts` parts, slowly enough to suspend in the middle, and finishes `stop`. */
    readonly long: string;
    readonly minParts: number;
    /**
     * A turn that calls the host tool `tools[0]`, answered with `output`; `reply`, if given, is what the text
     * after the call must match (a model that read the output says so).
     */
    readonly hostTool?: HostToolSpec;
    /**
     * A turn in which the CLI asks to run one of its own tools and waits for the host's approval (under
     * `permissionMode`, default 'allow-reads'). The case denies it with the reason `deniedReason`; `reply`, if
     * given, is what the text after the approval request must match (a model that was told of the denial says so).
     */
    readonly approval?: { prompt: string; permissionMode?: HarnessV1PermissionMode; reply?: string | RegExp };
  };
  /** The modelId stream-start must carry; default: any non-empty one. */
  readonly modelId?: string;
  readonly permissionMode?: HarnessV1PermissionMode;
  defer(cleanup: () => unknown): void;
  log?(message: string): void;
}

export interface AdapterConformanceCase {
  readonly name: string;
  run(ctx: AdapterConformanceContext): Promise<ConformanceOutcome>;
}

const pass: ConformanceOutcome = { status: 'pass' };

/** What `cliThatCannotStart` makes the CLI print on stderr before it exits 3; the start-error case looks for it. */
export const cannotStartMessage = 'harness-bridge conformance: this CLI cannot start';

/**
 * The adapter with a CLI that fails at once: the same launch spec (cwd, env, lifetime, turn ends), but argv
 * is `sh -c 'echo <cannotStartMessage> >&2; exit 3'`. For the context's `harnessWithFailingStart`.
 */
export function cliThatCannotStart<S>(adapter: CliAdapter<S>, message: string = cannotStartMessage): CliAdapter<S> {
  const { kind: _kind, launch, ...definition } = adapter;
  const quoted = `'${message.replace(/'/g, `'\\''`)}'`;
  return defineCliAdapter<S>({ ...definition, launch: (context) => ({ ...launch(context), argv: ['sh', '-c', `echo ${quoted} >&2; exit 3`] }) });
}

/** The reason the approval case gives when it denies; a CLI that passes reasons on shows it to the model. */
export const deniedReason = 'harness-bridge conformance: denied';

/** A host tool the tool-set case offers in its first turn only. */
const firstTurnTool: HarnessV1ToolSpec = {
  name: 'conformance_first_turn_only',
  description: 'Offered in the first turn only',
  inputSchema: { type: 'object', properties: {} },
};

let sessions = 0;
async function start(
  ctx: AdapterConformanceContext,
  label: string,
  resumeFrom?: HarnessV1ResumeState,
  id?: string,
  harness: HarnessV1 = ctx.harness(),
  permissionMode: HarnessV1PermissionMode | undefined = ctx.permissionMode,
) {
  const sessionId = id ?? `conf-${label}-${process.pid}-${++sessions}`;
  const { sandbox, workDir } = resumeFrom ? await ctx.resumeSandbox(sessionId) : await ctx.createSandbox(sessionId);
  const session = await harness.doStart({
    sessionId,
    sandboxSession: sandbox,
    sessionWorkDir: workDir,
    ...(permissionMode ? { permissionMode } : {}),
    ...(resumeFrom ? { resumeFrom } : {}),
  });
  return { sessionId, session };
}

export const adapterConformance: ReadonlyArray<AdapterConformanceCase> = [
  {
    name: 'a text turn starts with stream-start, every part is a valid HarnessV1StreamPart, and it finishes stop with the expected reply',
    async run(ctx) {
      const { session } = await start(ctx, 'text');
      ctx.defer(() => session.doDestroy());
      checkTextTurn(ctx, await turn(session, ctx.prompts.text, 'text turn'), 'text turn');
      return pass;
    },
  },
  {
    name: 'stream-start names the model (modelId)',
    async run(ctx) {
      const { session } = await start(ctx, 'model');
      ctx.defer(() => session.doDestroy());
      const parts = await turn(session, ctx.prompts.text, 'text turn');
      checkTurnShape(parts, 'text turn');
      const first = parts[0];
      const modelId = first?.type === 'stream-start' ? first.modelId : undefined;
      if (ctx.modelId !== undefined) check(modelId === ctx.modelId, `stream-start's modelId is ${JSON.stringify(modelId)}, expected ${JSON.stringify(ctx.modelId)}`);
      else check(typeof modelId === 'string' && modelId.length > 0, `stream-start carries no modelId (${JSON.stringify(first)})`);
      return pass;
    },
  },
  {
    name: 'two prompts in one session each finish stop with the expected reply',
    async run(ctx) {
      const { session } = await start(ctx, 'two');
      ctx.defer(() => session.doDestroy());
      checkTextTurn(ctx, await turn(session, ctx.prompts.text, 'first prompt'), 'first prompt');
      checkTextTurn(ctx, await turn(session, ctx.prompts.text, 'second prompt'), 'second prompt');
      return pass;
    },
  },
  {
    name: 'suspend mid-turn and continue in a fresh harness: each slice stands alone, and joined they equal an uninterrupted run',
    async run(ctx) {
      const reference = await (async () => {
        const { session } = await start(ctx, 'ref');
        ctx.defer(() => session.doDestroy());
        return turn(session, ctx.prompts.long, 'the long turn');
      })();
      checkStopped(reference, 'the long turn');
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
      const rest: HarnessV1StreamPart[] = [];
      const control2 = await resumed.session.doContinueTurn({ emit: (part) => rest.push(part) });
      await control2.done;
      // The continuation re-opens a block cut open (docs/guarantees.md#ui), so a reader of it alone folds it; joined, nothing is twice.
      for (const [name, slice] of [['first', parts], ['continued', rest]] as const) {
        const problem = blockProblem(slice);
        check(problem === null, `suspend at part ${cut}: the ${name} slice is not well formed on its own: ${problem}`);
      }
      // Two runs of the CLI: its own stderr and unknown lines (raw parts) come in a number and at places that vary
      // with its timing (Qwen Code's event-loop stall warnings), so the runs compare without them.
      const content = (list: ReadonlyArray<HarnessV1StreamPart>) => normalizeIds(list.filter((part) => part.type !== 'raw'));
      const got = content(joinSlices([parts, rest])).map((part) => JSON.stringify(part));
      const want = content(reference).map((part) => JSON.stringify(part));
      const at = firstDifference(got, want);
      check(at < 0, `suspend at part ${cut} + continue differs from the uninterrupted run (${got.length} parts, want ${want.length}) at part ${at}:\n got ${got[at] ?? '(none)'}\nwant ${want[at] ?? '(none)'}`);
      return pass;
    },
  },
  {
    name: 'detach, then a fresh harness runs the next prompt on the same session',
    async run(ctx) {
      const { session, sessionId } = await start(ctx, 'detach');
      checkTextTurn(ctx, await turn(session, ctx.prompts.text, 'before detach'), 'before detach');
      const state = await session.doDetach();
      const resumed = await start(ctx, 'detach', state, sessionId);
      ctx.defer(() => resumed.session.doDestroy());
      check(resumed.session.isResume, 'a session started from a resume payload reports isResume');
      checkTextTurn(ctx, await turn(resumed.session, ctx.prompts.text, 'after re-attach'), 'after re-attach');
      return pass;
    },
  },
  {
    name: 'stop, then resume in a new bridge and run the next prompt on the same CLI thread',
    async run(ctx) {
      const { session, sessionId } = await start(ctx, 'stop');
      checkTextTurn(ctx, await turn(session, ctx.prompts.text, 'before stop'), 'before stop');
      const state = await session.doStop();
      const resumed = await start(ctx, 'stop', state, sessionId);
      ctx.defer(() => resumed.session.doDestroy());
      checkTextTurn(ctx, await turn(resumed.session, ctx.prompts.text, 'after resume'), 'after resume');
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
    name: 'abortSignal interrupts the CLI mid-reply and done settles with an AbortError; the next turn finishes stop with only its own reply',
    async run(ctx) {
      const { session } = await start(ctx, 'abort');
      ctx.defer(() => session.doDestroy());
      const abort = new AbortController();
      const parts: HarnessV1StreamPart[] = [];
      const control = await session.doPromptTurn({
        prompt: ctx.prompts.long,
        abortSignal: abort.signal,
        emit: (part) => {
          parts.push(part);
          if (parts.length === 2) abort.abort();
        },
      });
      let error: unknown;
      try {
        await control.done;
      } catch (e) {
        error = e;
      }
      check(error instanceof Error && error.name === 'AbortError', `done settled with ${String(error)}, expected an AbortError (${seen(parts)})`);
      const finish = parts.find((part) => part.type === 'finish');
      check(finish?.type !== 'finish' || finish.finishReason.unified !== 'stop', 'the aborted turn still finished stop: the abort did not interrupt the CLI');
      check(parts.length < ctx.prompts.minParts, `the aborted turn delivered ${parts.length} parts, as many as a whole long turn (${ctx.prompts.minParts}): the abort did not interrupt the CLI`);
      checkTextTurn(ctx, await turn(session, ctx.prompts.text, 'the turn after an abort'), 'the turn after an abort');
      return pass;
    },
  },
  {
    name: 'a host tool call reaches the consumer as a tool-call part, the tool runs, and its result lets the turn finish stop',
    async run(ctx) {
      const spec = ctx.prompts.hostTool;
      if (!spec) return { status: 'skip', reason: 'the runner gave no host-tool prompt for this adapter' };
      const { session } = await start(ctx, 'tool');
      ctx.defer(() => session.doDestroy());
      await hostToolTurn(session, spec, 'host tool turn');
      return pass;
    },
  },
  {
    name: 'host tools changed between turns: a tool first offered in the second turn reaches the CLI, runs, and its result lets the turn finish stop',
    async run(ctx) {
      const spec = ctx.prompts.hostTool;
      if (!spec) return { status: 'skip', reason: 'the runner gave no host-tool prompt for this adapter' };
      const { session } = await start(ctx, 'tools-changed');
      ctx.defer(() => session.doDestroy());
      const first = await turn(session, ctx.prompts.text, 'first turn (another host tool)', [firstTurnTool]);
      checkTextTurn(ctx, first, 'first turn (another host tool)');
      await hostToolTurn(session, spec, 'second turn (its own host tool)');
      return pass;
    },
  },
  {
    name: 'an approval denial reaches the CLI: the tool does not run, its result is an error, the turn finishes stop',
    async run(ctx) {
      const spec = ctx.prompts.approval;
      if (!spec) return { status: 'skip', reason: 'the runner gave no approval prompt for this adapter' };
      const { session } = await start(ctx, 'deny', undefined, undefined, ctx.harness(), spec.permissionMode ?? 'allow-reads');
      ctx.defer(() => session.doDestroy());
      const parts: HarnessV1StreamPart[] = [];
      const answers: Array<Promise<unknown>> = [];
      const { controlled, controlling } = deferredControl();
      try {
        const control = await session.doPromptTurn({
          prompt: spec.prompt,
          emit: (part) => {
            parts.push(part);
            if (part.type !== 'tool-approval-request') return;
            const answer = { approvalId: part.approvalId, approved: false, reason: deniedReason };
            answers.push(controlling.then((c) => (c.submitToolApproval ? c.submitToolApproval(answer) : Promise.reject(new Error('the turn control has no submitToolApproval')))));
          },
        });
        controlled(control);
        await control.done;
      } catch (error) {
        throw new ConformanceFailure(`approval turn: the turn failed: ${clip(errorText(error))} (${seen(parts)})`);
      }
      const requests = parts.filter((p): p is Extract<HarnessV1StreamPart, { type: 'tool-approval-request' }> => p.type === 'tool-approval-request');
      check(requests.length > 0, `the approval prompt asked for no approval (${seen(parts)})`);
      const refused = (await Promise.allSettled(answers)).find((answer) => answer.status === 'rejected');
      check(!refused, `the denial was refused: ${refused?.status === 'rejected' ? clip(errorText(refused.reason)) : ''}`);
      for (const request of requests) {
        const result = parts.find((p) => p.type === 'tool-result' && p.toolCallId === request.toolCallId);
        check(
          result?.type !== 'tool-result' || result.isError === true,
          `the denied call ${request.toolCallId} ran: its result ${JSON.stringify(clip(JSON.stringify(result?.type === 'tool-result' ? result.result : null)))} is no error`,
        );
      }
      checkStopped(parts, 'approval turn');
      if (spec.reply !== undefined) {
        const after = textOf(parts.slice(parts.indexOf(requests[0]!) + 1));
        check(matches(after, spec.reply), `after the denial the reply reads ${JSON.stringify(clip(after))}, expected ${typeof spec.reply === 'string' ? JSON.stringify(spec.reply) : String(spec.reply)}: the denial did not reach the model`);
      }
      return pass;
    },
  },
  {
    name: 'a CLI that cannot start: the host is told why (its stderr or the spawn error), and the turn does not finish stop',
    async run(ctx) {
      if (!ctx.harnessWithFailingStart) return { status: 'skip', reason: 'the runner gave no harnessWithFailingStart (cliThatCannotStart) for this adapter' };
      const { session } = await start(ctx, 'cannot-start', undefined, undefined, ctx.harnessWithFailingStart());
      ctx.defer(() => session.doDestroy());
      const parts: HarnessV1StreamPart[] = [];
      let rejection: unknown;
      try {
        const control = await session.doPromptTurn({ prompt: ctx.prompts.text, emit: (part) => parts.push(part) });
        await control.done;
      } catch (error) {
        rejection = error;
      }
      const summary = seen(parts, rejection);
      check(
        told(parts, rejection).some((line) => line.includes(cannotStartMessage)),
        `the CLI printed "${cannotStartMessage}" on stderr and exited 3, but the host was not told: ${summary}`,
      );
      const finish = parts.find((part) => part.type === 'finish');
      check(finish?.type !== 'finish' || finish.finishReason.unified !== 'stop', `a CLI that never ran finished stop (${summary})`);
      if (rejection === undefined) checkTurnShape(parts, 'the failed turn');
      return pass;
    },
  },
];
