// harness-bridge/adapter-kit: what an adapter author builds a CLI adapter from —
// the adapter contract (defineCliAdapter and its types), reading JSON lines out
// of journal records, writing HarnessV1 stream parts, translator snapshots and
// usage helpers, the CLI installer (ensureCli: an adapter's declared `cli`,
// installed once into the host's cache). The reference adapters
// (harness-bridge/adapters/*) are built from exactly these; docs/writing-an-adapter.md
// uses nothing else (test/package/consumer.test.ts type-checks its code against
// the packed package).
export {
  defineCliAdapter,
  type CliAdapter,
  type CliAdapterDefinition,
  type CliPackage,
  type CompactContext,
  type LaunchContext,
  type LaunchMode,
  type PromptContext,
  type ThreadStartContext,
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
export { CLIS, cacheRoot, cliPaths, ensureCli, type CliPackageSpec, type CliRef, type CliSpec } from '../cli/install-clis.mjs';
export type { JournalRecord } from '../../protocol/v1/journal-record.ts';
export type { LaunchSpecInput } from '../../protocol/v1/launch-spec.ts';
export type { McpEnvNames } from '../../protocol/v1/mcp-env.ts';
export type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
export {
  ConfinementError,
  jsonRpc,
  maxResponderFileChars,
  sandboxResponderIo,
  type CliRequest,
  type Responder,
  type ResponderIo,
} from './responder.ts';
export type { StartStep } from '../../protocol/v1/launch-spec.ts';
