// The HarnessV1 contract as our own declarations, plus the zod mirror of its
// stream parts. Everything a host-side module needs from the contract.
export type { HarnessV1Bootstrap, HarnessV1BootstrapCommand, HarnessV1BootstrapFile } from './bootstrap.ts';
export type { HarnessV1NetworkPolicy, HarnessV1NetworkSandboxSession, HarnessV1SandboxProvider, SandboxSession } from './sandbox.ts';
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
  HarnessV1ContinueTurnOptions,
  HarnessV1PendingToolApproval,
  HarnessV1PermissionMode,
  HarnessV1Prompt,
  HarnessV1PromptControl,
  HarnessV1PromptTurnOptions,
  HarnessV1ResumeState,
  HarnessV1Session,
  HarnessV1Skill,
  HarnessV1StartOptions,
  HarnessV1ToolSpec,
} from './session.ts';
export { HarnessCapabilityUnsupportedError, HarnessError } from './errors.ts';
