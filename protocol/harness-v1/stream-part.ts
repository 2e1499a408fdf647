// HarnessV1StreamPart: what a translator emits and a session hands its
// consumer. Declared as a type (matching the published contract, reusing the
// LanguageModelV4 primitives) and mirrored by a zod schema; the type test in
// test/protocol/stream-part.test.ts keeps the two from drifting apart.
import type {
  JSONValue,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolApprovalRequest,
  LanguageModelV4ToolCall,
  LanguageModelV4ToolResult,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';

export type HarnessV1CallWarning =
  | { type: 'unsupported-setting'; setting: string; details?: string }
  | { type: 'unsupported-tool'; tool: string; details?: string }
  | { type: 'other'; message: string };

/** Keys are harness ids; values are adapter-chosen JSON. */
export type HarnessV1Metadata = Record<string, Record<string, JSONValue>>;

type WithMeta = { harnessMetadata?: HarnessV1Metadata };

export type HarnessV1StreamPart =
  | { type: 'stream-start'; warnings?: ReadonlyArray<HarnessV1CallWarning>; modelId?: string }
  | ({ type: 'text-start'; id: string } & WithMeta)
  | ({ type: 'text-delta'; id: string; delta: string } & WithMeta)
  | ({ type: 'text-end'; id: string } & WithMeta)
  | ({ type: 'reasoning-start'; id: string } & WithMeta)
  | ({ type: 'reasoning-delta'; id: string; delta: string } & WithMeta)
  | ({ type: 'reasoning-end'; id: string } & WithMeta)
  /** 1.0.x: a tool call's input as the model streams it, where the CLI shows it (id is the tool call's id). */
  | Extract<LanguageModelV4StreamPart, { type: 'tool-input-start' }>
  | Extract<LanguageModelV4StreamPart, { type: 'tool-input-delta' }>
  | Extract<LanguageModelV4StreamPart, { type: 'tool-input-end' }>
  /** stepToolCallCount (1.0.x): the step's tool-call count, when known before any of them runs. */
  | (LanguageModelV4ToolCall & { nativeName?: string; stepToolCallCount?: number })
  | LanguageModelV4ToolApprovalRequest
  | LanguageModelV4ToolResult
  | ({ type: 'finish-step'; finishReason: LanguageModelV4FinishReason; usage: LanguageModelV4Usage } & WithMeta)
  | ({ type: 'finish'; finishReason: LanguageModelV4FinishReason; totalUsage: LanguageModelV4Usage } & WithMeta)
  | ({ type: 'file-change'; event: 'create' | 'modify' | 'delete'; path: string } & WithMeta)
  | ({
      type: 'compaction';
      trigger: 'manual' | 'auto';
      summary: string;
      tokensBefore?: number;
      tokensAfter?: number;
    } & WithMeta)
  | { type: 'error'; error: unknown }
  | { type: 'raw'; rawValue: unknown };

export type HarnessV1StreamPartType = HarnessV1StreamPart['type'];
