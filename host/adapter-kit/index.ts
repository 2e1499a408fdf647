// harness-bridge/adapter-kit: what an adapter author builds a CLI adapter from —
// the adapter contract (defineCliAdapter and its types), reading JSON lines out
// of journal records, writing HarnessV1 stream parts, translator snapshots and
// usage helpers. The reference adapters (harness-bridge/adapters/*) are built
// from exactly these.
export {
  defineCliAdapter,
  type CliAdapter,
  type CliAdapterDefinition,
  type CliPackage,
  type CompactContext,
  type LaunchContext,
  type LaunchMode,
  type PromptContext,
  type Translator,
} from './adapter.ts';
export {
  completeLine,
  createLineBuffers,
  maxJoinedLineChars,
  parseJsonObject,
  readJsonLine,
  type JsonLine,
  type LineBuffers,
  type OutputLine,
} from './json-lines.ts';
export { createStreamState, partWriter, type PartWriter, type StreamState } from './part-writer.ts';
export { lineBuffersSchema, readSnapshot, streamStateSchema, takeSnapshot, tokenCountsSchema } from './snapshot.ts';
export { addCounts, usageFromCounts, type TokenCounts } from './usage.ts';
export { anthropicFinishReason, anthropicUsage, anthropicUsageSchema, mergeAnthropicUsage, type AnthropicUsage } from './anthropic-usage.ts';
export type { JournalRecord } from '../../protocol/v1/journal-record.ts';
export type { LaunchSpecInput } from '../../protocol/v1/launch-spec.ts';
export type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
