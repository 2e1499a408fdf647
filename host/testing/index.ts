// harness-bridge/testing: what an adapter or sandbox-provider author tests
// with — the conformance lists (adapterConformance, sandboxProviderConformance),
// the fixture adapter (a deterministic CLI adapter over the fixture CLI, no
// model), and the scripted model: an Anthropic-compatible server on 127.0.0.1
// that answers from markers in the prompt (startDemoModel), and the pure
// script under it (planReply, parseMarkers) for servers of other flavours.
export {
  adapterConformance,
  cannotStartMessage,
  cliThatCannotStart,
  normalizeIds,
  type AdapterConformanceCase,
  type AdapterConformanceContext,
} from './conformance/adapter-conformance.ts';
export {
  ConformanceFailure,
  createConformanceContext,
  sandboxProviderConformance,
  type ConformanceOutcome,
  type SandboxConformanceCase,
  type SandboxConformanceContext,
} from './conformance/sandbox-provider-conformance.ts';
export { fixtureAdapter, fixtureCliPath } from './fixture/fixture-adapter.ts';
export { planDemoReply, startDemoModel, type DemoModel } from '../cli/demo-model.ts';
export {
  EDIT_NEW,
  EDIT_OLD,
  WRITE_CONTENT,
  argsFromSchema,
  parseMarkers,
  planReply,
  realUserText,
  wireId,
  type Block,
  type Conversation,
  type Item,
  type Markers,
  type Planned,
  type Reply,
  type ToolCall,
  type ToolDef,
} from './scripted-model/script.ts';
export { anthropicError, anthropicJson, anthropicStream, normalizeAnthropic } from './scripted-model/anthropic.ts';
export { SseSink, streamChunks } from './scripted-model/sse.ts';
