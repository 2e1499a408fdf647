// harness-bridge/adapter-kit: what an adapter author builds a CLI adapter from —
// the adapter contract (defineCliAdapter and its types), reading JSON lines out
// of journal records, writing HarnessV1 stream parts, translator snapshots and
// usage helpers, launch and stdin-encoder pieces, a whole translator for CLIs
// that print Claude-style stream-json, the CLI installer (ensureCli: an
// adapter's declared `cli`, installed once into the host's cache). The
// reference adapters (harness-bridge/adapters/*) are built from exactly these;
// docs/writing-an-adapter.md uses nothing else (test/package/consumer.test.ts
// type-checks its code against the packed package).
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
/** JSON lines out of journal records: cont pieces joined, parsed without trusting; wholeStdoutJson for threadId readers. */
export {
  completeLine,
  createLineBuffers,
  maxJoinedLineChars,
  parseJsonObject,
  readJsonLine,
  wholeStdoutJson,
  type JsonLine,
  type LineBuffers,
  type OutputLine,
} from './json-lines.ts';
/** The part writer; writerStep makes a Translator.step of a function that writes one record's parts through it. */
export { createStreamState, partWriter, writerStep, type PartWriter, type StreamState, type ToolCallMemo } from './part-writer.ts';
/** Translator snapshots: tag and validate (takeSnapshot / readSnapshot, or both as snapshotCodec), shapes of the shared pieces. */
export {
  lineBuffersSchema,
  readSnapshot,
  snapshotCodec,
  streamStateSchema,
  takeSnapshot,
  tokenCountsSchema,
  type SnapshotState,
} from './snapshot.ts';
export { addCounts, countsFromInclusiveInput, usageFromCounts, type TokenCounts } from './usage.ts';
export {
  addAnthropicUsage,
  anthropicFinishReason,
  anthropicUsage,
  anthropicUsageSchema,
  mergeAnthropicUsage,
  type AnthropicUsage,
} from './anthropic-usage.ts';
/** An npm CLI's `cli` + install, where it lands, and the fixed half of a long-lived stdin-fed CLI's launch spec. */
export { cliBinPath, npmCli, sessionLaunch, type CliAdapterOptions, type SessionLaunchParts } from './cli-launch.ts';
/** Stdin encoder pieces: a JSON line, a prompt with its instructions, a between-turns-only compaction's refusals. */
export { compactBetweenTurns, jsonLine, promptText } from './stdin-encoders.ts';
/** skillFiles for CLIs that find skills as `<dir>/<name>/SKILL.md`. */
export { skillDirectoryFiles } from './skill-files.ts';
/** Claude-style stream-json (Claude Code's `--output-format stream-json`): the translator, the stdin lines, the launch's part, the line shapes. */
export {
  streamJsonApproval,
  streamJsonInputAck,
  streamJsonLaunch,
  streamJsonThreadId,
  streamJsonTranslator,
  streamJsonUserLine,
  type StreamJsonOptions,
  type StreamJsonState,
} from './stream-json.ts';
export { streamJsonBlockSchema, streamJsonLineSchema, type StreamJsonBlock, type StreamJsonLine } from './stream-json-lines.ts';
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
