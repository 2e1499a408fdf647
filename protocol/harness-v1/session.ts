// HarnessV1 itself: the adapter, its session, the per-call options, the
// prompt-control handle and the lifecycle states. Our own declarations of the
// published contract, written to match it, not copied. Two releases of it are
// in use and we serve both:
//   - @ai-sdk/harness 1.0.x: tagged lifecycle states ('continue-turn' from
//     doSuspendTurn, 'resume-session' from doDetach/doStop, optionally nesting
//     a continueFrom), doStart({ continueFrom }), per-turn settings (model,
//     skills, instructions, tools, responseFormat), lifecycleStateSchema over
//     the state's `data`, and a basic SandboxSession allowed in doStart;
//   - the canary.3 contract (docs/design.md#harnessv1): one untagged resume state,
//     doStart({ resumeFrom }) for both a parked session and a suspended turn,
//     skills per session, resumeStateSchema over the whole state.
// Options we receive are declared as the union of both (every field either
// release sends); what we return satisfies both (a tagged state is an untagged
// one with more fields). test/protocol/harness-v1-compat.test.ts checks both
// directions against the real 1.0.x types.
import type { JSONObject, JSONSchema7, JSONValue } from '@ai-sdk/provider';
import type { FlexibleSchema, ProviderOptions, ToolResultPart, ToolSet, UserModelMessage } from '@ai-sdk/provider-utils';
import type { HarnessV1Bootstrap } from './bootstrap.ts';
import type { HarnessV1Observability } from './diagnostics.ts';
import type { HarnessV1NetworkSandboxSession, SandboxSession } from './sandbox.ts';
import type { HarnessV1StreamPart } from './stream-part.ts';

export type HarnessV1PermissionMode = 'allow-reads' | 'allow-edits' | 'allow-all';

/** Fresh input for one turn; the runtime owns earlier history. */
export type HarnessV1Prompt = string | UserModelMessage;

/** A file that belongs to a skill: a skill-relative POSIX path (no absolute paths, no `..`). */
export type HarnessV1SkillFile = {
  readonly path: string;
  readonly content: string;
};

export type HarnessV1Skill = {
  /** Kebab-case slug. */
  readonly name: string;
  /** What the runtime reads to decide whether the skill is relevant. */
  readonly description: string;
  readonly content: string;
  /** 1.0.x: files materialised next to the skill's main file. */
  readonly files?: ReadonlyArray<HarnessV1SkillFile>;
};

export type HarnessV1ToolSpec = {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: JSONSchema7;
};

/** 1.0.x: the response format of one turn. An adapter that cannot honour `json` throws HarnessCapabilityUnsupportedError. */
export type HarnessV1ResponseFormat =
  | { readonly type: 'text' }
  | { readonly type: 'json'; readonly schema?: JSONObject; readonly name?: string; readonly description?: string };

export type HarnessV1PendingToolApproval = {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: string;
  readonly kind: 'builtin' | 'custom';
  readonly providerExecuted?: boolean;
  readonly nativeName?: string;
};

/** 1.0.x, framework-owned: a client tool call waiting for the caller's result. */
export type HarnessV1PendingToolResult = {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: string;
  readonly providerOptions?: ProviderOptions;
  readonly completedResult?: { readonly output: unknown; readonly isError?: boolean; readonly toolResult?: ToolResultPart };
};

/** 1.0.x, framework-owned: the settings a turn began with (persisted with an unfinished turn). */
export type HarnessV1TurnSettings = {
  readonly model?: string;
  readonly skills: ReadonlyArray<HarnessV1Skill>;
  readonly instructions?: string;
  readonly tools: ReadonlyArray<HarnessV1ToolSpec>;
};

type LifecycleStateBase = {
  readonly harnessId: string;
  readonly specificationVersion: 'harness-v1';
  /** Ours: validated by lifecycleStateSchema (1.0.x) and, inside the whole state, by resumeStateSchema (canary.3). */
  readonly data: JSONValue;
};

/** 1.0.x: what doSuspendTurn returns and doStart({ continueFrom }) accepts. */
export type HarnessV1ContinueTurnState = LifecycleStateBase & {
  readonly type: 'continue-turn';
  readonly pendingToolApprovals?: readonly HarnessV1PendingToolApproval[];
  readonly pendingToolResults?: readonly HarnessV1PendingToolResult[];
  readonly turnSettings?: HarnessV1TurnSettings;
};

/** 1.0.x: what doDetach/doStop return and doStart({ resumeFrom }) accepts; an unfinished turn nests as continueFrom. */
export type HarnessV1ResumeSessionState = LifecycleStateBase & {
  readonly type: 'resume-session';
  readonly continueFrom?: HarnessV1ContinueTurnState;
};

export type HarnessV1LifecycleState = HarnessV1ResumeSessionState | HarnessV1ContinueTurnState;

/**
 * canary.3: the one untagged resume state (suspend, detach and stop all return
 * it; doStart({ resumeFrom }) takes it back). Both tagged states are this plus
 * more, so every state we return is one.
 */
export type HarnessV1ResumeState = LifecycleStateBase & {
  readonly pendingToolApprovals?: readonly HarnessV1PendingToolApproval[];
};

export type HarnessV1PromptControl = {
  submitToolResult(input: { toolCallId: string; output: unknown; isError?: boolean; toolResult?: ToolResultPart }): PromiseLike<void>;
  submitToolApproval?(input: { approvalId: string; approved: boolean; reason?: string }): PromiseLike<void>;
  submitUserMessage?(text: string): PromiseLike<void>;
  /** Resolves when the turn (or this slice of it) ends; rejects when it fails. */
  readonly done: PromiseLike<void>;
};

/** 1.0.x: which built-in tools the runtime may use (we do not filter natively; the framework routes them through approvals). */
export type HarnessV1BuiltinToolFiltering = { mode: 'allow'; toolNames: string[] } | { mode: 'deny'; toolNames: string[] };

export type HarnessV1StartOptions = {
  readonly sessionId: string;
  /** 1.0.x: extra headers for model requests (a CLI makes its own; unused). */
  readonly headers?: Readonly<Record<string, string>>;
  /** canary.3: skills for the session's lifetime (1.0.x passes them per turn). */
  readonly skills?: ReadonlyArray<HarnessV1Skill>;
  /**
   * A parked session (1.0.x 'resume-session', possibly nesting continueFrom)
   * or, canary.3, any state a session returned, a suspended turn included.
   */
  readonly resumeFrom?: HarnessV1ResumeSessionState | HarnessV1ResumeState;
  /** 1.0.x: a suspended turn, to be continued with doContinueTurn. */
  readonly continueFrom?: HarnessV1ContinueTurnState;
  readonly permissionMode?: HarnessV1PermissionMode;
  readonly builtinToolFiltering?: HarnessV1BuiltinToolFiltering;
  readonly abortSignal?: AbortSignal;
  readonly observability?: HarnessV1Observability;
  /** A network sandbox session, or (1.0.x) a caller's basic SandboxSession. */
  readonly sandboxSession: HarnessV1NetworkSandboxSession | SandboxSession;
  /** `<defaultWorkingDirectory>/<harnessId>-<sessionId>`, created by the framework. */
  readonly sessionWorkDir: string;
};

/** What 1.0.x passes on every turn (canary.3 passes tools and instructions only). */
type TurnOptions = {
  readonly model?: string;
  readonly skills?: ReadonlyArray<HarnessV1Skill>;
  readonly tools?: ReadonlyArray<HarnessV1ToolSpec>;
  /**
   * canary.3: the same value every turn, applied once on a fresh session's
   * first prompt. 1.0.x: this turn's instructions. We apply them on the first
   * prompt and again whenever they change, never twice the same.
   */
  readonly instructions?: string;
  readonly responseFormat?: HarnessV1ResponseFormat;
  readonly abortSignal?: AbortSignal;
  readonly emit: (event: HarnessV1StreamPart) => void;
};

export type HarnessV1PromptTurnOptions = TurnOptions & { readonly prompt: HarnessV1Prompt };

export type HarnessV1ContinueTurnOptions = TurnOptions;

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
  doSuspendTurn(): PromiseLike<HarnessV1ContinueTurnState>;
  /** Leave the runtime running between turns; no further calls on this instance. */
  doDetach(): PromiseLike<HarnessV1ResumeSessionState>;
  /** Stop the runtime, keeping enough to resume the thread later. */
  doStop(): PromiseLike<HarnessV1ResumeSessionState>;
  doDestroy(): PromiseLike<void>;
};

export type HarnessV1<TBuiltinTools extends ToolSet = ToolSet> = {
  readonly specificationVersion: 'harness-v1';
  readonly harnessId: string;
  /** Keyed by what tool-call parts carry: `commonName ?? nativeName`. */
  readonly builtinTools: TBuiltinTools;
  readonly supportsBuiltinToolApprovals?: boolean;
  readonly supportsBuiltinToolFiltering?: boolean;
  /** 1.0.x: validates a lifecycle state's `data`. */
  readonly lifecycleStateSchema?: FlexibleSchema<unknown>;
  /** canary.3: validates a whole resume state. */
  readonly resumeStateSchema?: FlexibleSchema<unknown>;
  readonly getBootstrap?: (options?: { abortSignal?: AbortSignal }) => PromiseLike<HarnessV1Bootstrap>;
  doStart(options: HarnessV1StartOptions): PromiseLike<HarnessV1Session>;
};
