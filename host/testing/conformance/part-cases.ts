// Conformance cases for every kind of part an adapter emits, checked against what the CLI did
// (part-checks.ts): the CLI's own shell and write calls, steps and usage, a model error, reasoning, a
// denial's reply, a host tool's result. Each needs a prompt the runner gives (scripted-model markers:
// SCENARIO:shell, SCENARIO:write PATH:<file>, SCENARIO:fail); a case that cannot apply to a CLI must be
// declared in `notApplicable` with the reason, and is listed as skipped with it. A case neither given a
// prompt nor declared fails: nothing is skipped silently.
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import type { AdapterConformanceCase, AdapterConformanceContext } from './adapter-conformance.ts';
import { checkBuiltinToolCall, checkDenialReply, checkHostToolCall, checkModelError, checkReasoning, checkStepsAndUsage } from './part-checks.ts';
import { ConformanceFailure, type ConformanceOutcome } from './sandbox-provider-conformance.ts';

export const partCaseKeys = ['builtin-shell', 'builtin-write', 'steps-usage', 'model-error', 'reasoning', 'denial-reply', 'host-tool-result'] as const;
export type PartCaseKey = (typeof partCaseKeys)[number];

export interface AdapterPartContext extends AdapterConformanceContext {
  readonly partPrompts?: {
    /** A turn in which the CLI runs one shell command with its own tool (SCENARIO:shell). */
    readonly shell?: string;
    /** A turn in which the CLI writes the new file `path` with its own tool (SCENARIO:write PATH:<path>). */
    readonly write?: { readonly prompt: string; readonly path: string };
    /** A turn whose model call fails (SCENARIO:fail). */
    readonly modelError?: string;
    /** A turn whose model streams thinking. */
    readonly reasoning?: string;
    /** The common names the adapter gives its shell and write tools (default bash, write). */
    readonly toolNames?: { readonly shell?: string; readonly write?: string };
  };
  /** Cases that cannot apply to this CLI, with the reason (listed as skipped with it). */
  readonly notApplicable?: Partial<Record<PartCaseKey, string>>;
}

const pass: ConformanceOutcome = { status: 'pass' };

/** The prompt, or the declared reason it does not apply; neither is a failure. */
function given<T>(ctx: AdapterPartContext, key: PartCaseKey, value: T | undefined, what: string): T | ConformanceOutcome {
  if (value !== undefined) return value;
  const reason = ctx.notApplicable?.[key];
  if (reason !== undefined) return { status: 'skip', reason: `declared not applicable (${key}): ${reason}` };
  throw new ConformanceFailure(`${key}: the runner gave no ${what} and did not declare the case not applicable (notApplicable['${key}'] with the reason)`);
}
const isOutcome = (value: unknown): value is ConformanceOutcome => typeof value === 'object' && value !== null && 'status' in value;

async function oneTurn(ctx: AdapterPartContext, label: string, prompt: string, options: { permissionMode?: 'allow-all' | 'allow-edits' | 'allow-reads'; tools?: NonNullable<AdapterConformanceContext['prompts']['hostTool']>['tools']; answer?: (part: HarnessV1StreamPart, control: { submitToolResult(r: { toolCallId: string; output: unknown }): PromiseLike<void>; submitToolApproval?(a: { approvalId: string; approved: boolean; reason?: string }): PromiseLike<void> }) => void } = {}): Promise<HarnessV1StreamPart[]> {
  const sessionId = `conf-part-${label}-${process.pid}-${Date.now().toString(36)}`;
  const { sandbox, workDir } = await ctx.createSandbox(sessionId);
  const permissionMode = options.permissionMode ?? ctx.permissionMode;
  const session = await ctx.harness().doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: workDir, ...(permissionMode ? { permissionMode } : {}) });
  ctx.defer(() => session.doDestroy());
  const parts: HarnessV1StreamPart[] = [];
  let control: Awaited<ReturnType<typeof session.doPromptTurn>> | undefined;
  const early: HarnessV1StreamPart[] = [];
  try {
    control = await session.doPromptTurn({
      prompt,
      ...(options.tools ? { tools: options.tools } : {}),
      emit: (part) => {
        parts.push(part);
        if (!options.answer) return;
        if (control) options.answer(part, control);
        else early.push(part);
      },
    });
    for (const part of early) options.answer?.(part, control);
    await control.done;
  } catch (error) {
    throw new ConformanceFailure(`${label}: the turn failed: ${error instanceof Error ? error.message : String(error)} (parts: ${parts.map((p) => p.type).join(', ')})`);
  }
  return parts;
}

export const adapterPartConformance: ReadonlyArray<AdapterConformanceCase> = [
  {
    name: "the CLI's own shell call: a tool-call, its tool-result, steps with usage",
    async run(c) {
      const ctx = c as AdapterPartContext;
      const prompt = given(ctx, 'builtin-shell', ctx.partPrompts?.shell, 'shell prompt (partPrompts.shell)');
      if (isOutcome(prompt)) return prompt;
      const parts = await oneTurn(ctx, 'shell', prompt, { permissionMode: 'allow-all' });
      checkBuiltinToolCall(parts, { toolName: ctx.partPrompts?.toolNames?.shell ?? 'bash' }, 'shell turn');
      // A tool round is two model responses: the call, then the reply after its result.
      if (ctx.notApplicable?.['steps-usage'] === undefined) checkStepsAndUsage(parts, { minSteps: 2 }, 'shell turn');
      return pass;
    },
  },
  {
    name: "the CLI's own write call: a tool-call, its tool-result and a file-change create naming the file",
    async run(c) {
      const ctx = c as AdapterPartContext;
      const spec = given(ctx, 'builtin-write', ctx.partPrompts?.write, 'write prompt (partPrompts.write)');
      if (isOutcome(spec)) return spec;
      const parts = await oneTurn(ctx, 'write', spec.prompt, { permissionMode: 'allow-all' });
      checkBuiltinToolCall(parts, { toolName: ctx.partPrompts?.toolNames?.write ?? 'write', path: spec.path }, 'write turn');
      return pass;
    },
  },
  {
    name: 'steps and usage: every model response is a finish-step with its counts, and the finish counts the turn',
    async run(c) {
      const ctx = c as AdapterPartContext;
      const reason = ctx.notApplicable?.['steps-usage'];
      if (reason !== undefined) return { status: 'skip', reason: `declared not applicable (steps-usage): ${reason}` };
      checkStepsAndUsage(await oneTurn(ctx, 'usage', ctx.prompts.text), { minSteps: 1 }, 'text turn');
      return pass;
    },
  },
  {
    name: 'a model error (SCENARIO:fail) surfaces as an error part and a finish error',
    async run(c) {
      const ctx = c as AdapterPartContext;
      const prompt = given(ctx, 'model-error', ctx.partPrompts?.modelError, 'model-error prompt (partPrompts.modelError)');
      if (isOutcome(prompt)) return prompt;
      checkModelError(await oneTurn(ctx, 'fail', prompt), 'model-error turn');
      return pass;
    },
  },
  {
    name: "the model's thinking surfaces as reasoning parts",
    async run(c) {
      const ctx = c as AdapterPartContext;
      const prompt = given(ctx, 'reasoning', ctx.partPrompts?.reasoning, 'reasoning prompt (partPrompts.reasoning)');
      if (isOutcome(prompt)) return prompt;
      checkReasoning(await oneTurn(ctx, 'reasoning', prompt), 'reasoning turn');
      return pass;
    },
  },
  {
    name: "a denied approval: the call does not run and the model's reply to the denial reaches the consumer",
    async run(c) {
      const ctx = c as AdapterPartContext;
      const spec = given(ctx, 'denial-reply', ctx.prompts.approval, 'approval prompt (prompts.approval)');
      if (isOutcome(spec)) return spec;
      const parts = await oneTurn(ctx, 'denial', spec.prompt, {
        permissionMode: spec.permissionMode ?? 'allow-reads',
        answer: (part, control) => {
          if (part.type === 'tool-approval-request') void control.submitToolApproval?.({ approvalId: part.approvalId, approved: false, reason: 'harness-bridge conformance: denied' });
        },
      });
      checkDenialReply(parts, 'denial turn');
      return pass;
    },
  },
  {
    name: "a host tool's result reaches the model: the host tool-call, then the reply",
    async run(c) {
      const ctx = c as AdapterPartContext;
      const spec = given(ctx, 'host-tool-result', ctx.prompts.hostTool, 'host-tool prompt (prompts.hostTool)');
      if (isOutcome(spec)) return spec;
      const parts = await oneTurn(ctx, 'host-tool', spec.prompt, {
        tools: spec.tools,
        answer: (part, control) => {
          if (part.type === 'tool-call' && part.providerExecuted !== true) void control.submitToolResult({ toolCallId: part.toolCallId, output: spec.output });
        },
      });
      checkHostToolCall(parts, { toolName: spec.tools[0]!.name }, 'host tool turn');
      return pass;
    },
  },
];
