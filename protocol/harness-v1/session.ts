// HarnessV1 itself: the adapter, its session, the per-call options, the
// prompt-control handle and the resume state. Our own declarations of the
// published contract (@ai-sdk/harness, canary.3 contract; its src/v1/*.ts carry
// the long doc comments on suspend, continue, detach, stop and destroy).
import type { JSONSchema7, JSONValue } from '@ai-sdk/provider';
import type { FlexibleSchema, ToolSet, UserModelMessage } from '@ai-sdk/provider-utils';
import type { HarnessV1Bootstrap } from './bootstrap.ts';
import type { HarnessV1Observability } from './diagnostics.ts';
import type { HarnessV1NetworkSandboxSession } from './sandbox.ts';
import type { HarnessV1StreamPart } from './stream-part.ts';

export type HarnessV1PermissionMode = 'allow-reads' | 'allow-edits' | 'allow-all';

/** Fresh input for one turn; the runtime owns earlier history. */
export type HarnessV1Prompt = string | UserModelMessage;

export type HarnessV1Skill = {
  readonly name: string;
  readonly description: string;
  readonly content: string;
};

export type HarnessV1ToolSpec = {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: JSONSchema7;
};

export type HarnessV1PendingToolApproval = {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: string;
  readonly kind: 'builtin' | 'custom';
  readonly providerExecuted?: boolean;
  readonly nativeName?: string;
};

/** Opaque to the framework; `data` is ours and validated by resumeStateSchema. */
export type HarnessV1ResumeState = {
  readonly harnessId: string;
  readonly specificationVersion: 'harness-v1';
  readonly data: JSONValue;
  readonly pendingToolApprovals?: readonly HarnessV1PendingToolApproval[];
};

export type HarnessV1PromptControl = {
  submitToolResult(input: { toolCallId: string; output: unknown; isError?: boolean }): PromiseLike<void>;
  submitToolApproval?(input: { approvalId: string; approved: boolean; reason?: string }): PromiseLike<void>;
  submitUserMessage?(text: string): PromiseLike<void>;
  /** Resolves when the turn (or this slice of it) ends; rejects when it fails. */
  readonly done: PromiseLike<void>;
};

export type HarnessV1StartOptions = {
  readonly sessionId: string;
  readonly skills?: ReadonlyArray<HarnessV1Skill>;
  readonly resumeFrom?: HarnessV1ResumeState;
  readonly permissionMode?: HarnessV1PermissionMode;
  readonly abortSignal?: AbortSignal;
  readonly observability?: HarnessV1Observability;
  readonly sandboxSession: HarnessV1NetworkSandboxSession;
  /** `<defaultWorkingDirectory>/<harnessId>-<sessionId>`, created by the framework. */
  readonly sessionWorkDir: string;
};

export type HarnessV1PromptTurnOptions = {
  readonly prompt: HarnessV1Prompt;
  readonly tools?: ReadonlyArray<HarnessV1ToolSpec>;
  /** Applied once, on the first prompt of a fresh session; never on a resumed one. */
  readonly instructions?: string;
  readonly abortSignal?: AbortSignal;
  readonly emit: (event: HarnessV1StreamPart) => void;
};

export type HarnessV1ContinueTurnOptions = {
  readonly tools?: ReadonlyArray<HarnessV1ToolSpec>;
  readonly abortSignal?: AbortSignal;
  readonly emit: (event: HarnessV1StreamPart) => void;
};

export type HarnessV1Session = {
  readonly sessionId: string;
  readonly isResume: boolean;
  readonly modelId?: string;
  doPromptTurn(options: HarnessV1PromptTurnOptions): PromiseLike<HarnessV1PromptControl>;
  /** Trigger runtime compaction, or throw HarnessCapabilityUnsupportedError. */
  doCompact(customInstructions?: string): PromiseLike<void>;
  /** Keep consuming the in-flight turn after a resume: attach/replay losslessly, or rerun (marked). */
  doContinueTurn(options: HarnessV1ContinueTurnOptions): PromiseLike<HarnessV1PromptControl>;
  /** Freeze host consumption at a record boundary; the runtime keeps going. */
  doSuspendTurn(): PromiseLike<HarnessV1ResumeState>;
  /** Leave the runtime running between turns; no further calls on this instance. */
  doDetach(): PromiseLike<HarnessV1ResumeState>;
  /** Stop the runtime, keeping enough to resume the thread later. */
  doStop(): PromiseLike<HarnessV1ResumeState>;
  doDestroy(): PromiseLike<void>;
};

export type HarnessV1<TBuiltinTools extends ToolSet = ToolSet> = {
  readonly specificationVersion: 'harness-v1';
  readonly harnessId: string;
  /** Keyed by what tool-call parts carry: `commonName ?? nativeName`. */
  readonly builtinTools: TBuiltinTools;
  readonly supportsBuiltinToolApprovals?: boolean;
  readonly resumeStateSchema?: FlexibleSchema<unknown>;
  readonly getBootstrap?: (options?: { abortSignal?: AbortSignal }) => PromiseLike<HarnessV1Bootstrap>;
  doStart(options: HarnessV1StartOptions): PromiseLike<HarnessV1Session>;
};
