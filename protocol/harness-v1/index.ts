// The HarnessV1 contract as our own declarations, plus the zod mirror of its
// stream parts. Everything a host-side module needs from the contract.
export type { HarnessV1Bootstrap, HarnessV1BootstrapCommand, HarnessV1BootstrapFile } from './bootstrap.ts';
export {
  isNetworkSandboxSession,
  type HarnessV1NetworkPolicy,
  type HarnessV1NetworkSandboxSession,
  type HarnessV1PortEndpoint,
  type HarnessV1PortOptions,
  type HarnessV1SandboxProvider,
  type SandboxSession,
} from './sandbox.ts';
export {
  harnessV1DebugConfigSchema,
  harnessV1DebugLevelSchema,
  type HarnessV1DebugConfig,
  type HarnessV1DebugLevel,
  type HarnessV1Diagnostic,
  type HarnessV1Observability,
} from './diagnostics.ts';
export type { HarnessV1CallWarning, HarnessV1Metadata, HarnessV1StreamPart, HarnessV1StreamPartType } from './stream-part.ts';
export { finishReasonSchema, streamPartSchema, usageSchema } from './stream-part-schema.ts';
export type {
  HarnessV1,
  HarnessV1BuiltinToolFiltering,
  HarnessV1ContinueTurnOptions,
  HarnessV1ContinueTurnState,
  HarnessV1LifecycleState,
  HarnessV1PendingToolApproval,
  HarnessV1PendingToolResult,
  HarnessV1PermissionMode,
  HarnessV1Prompt,
  HarnessV1PromptControl,
  HarnessV1PromptTurnOptions,
  HarnessV1ResponseFormat,
  HarnessV1ResumeSessionState,
  HarnessV1ResumeState,
  HarnessV1Session,
  HarnessV1Skill,
  HarnessV1SkillFile,
  HarnessV1StartOptions,
  HarnessV1ToolSpec,
  HarnessV1TurnSettings,
} from './session.ts';
export { HarnessCapabilityUnsupportedError, HarnessError } from './errors.ts';
