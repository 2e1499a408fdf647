// harness-bridge/testing: what an adapter or sandbox-provider author tests
// with — the conformance lists (adapterConformance, sandboxProviderConformance),
// the fixture adapter (a deterministic CLI adapter over the fixture CLI, no
// model), the every-cut-point snapshot check (checkEveryCutResumes over
// journalOfLines: a translator test that needs no test framework), and the
// scripted model server (startModelServer: Anthropic Messages, OpenAI
// Responses and Chat Completions on 127.0.0.1, answering from markers in the
// prompt; scripted-model/README.md) with the profiles that tell it about a CLI
// (CliProfile, referenceProfiles, profileFromBuiltinTools), and the pure script
// under it (planReply, parseMarkers) for servers of other flavours.
export {
  adapterConformance,
  cannotStartMessage,
  cliThatCannotStart,
  normalizeIds,
  type AdapterConformanceCase,
  type AdapterConformanceContext,
} from './conformance/adapter-conformance.ts';
export { adapterPartConformance, partCaseKeys, type AdapterPartContext, type PartCaseKey } from './conformance/part-cases.ts';
export { checkBuiltinToolCall, checkDenialReply, checkHostToolCall, checkModelError, checkReasoning, checkStepsAndUsage } from './conformance/part-checks.ts';
export {
  ConformanceFailure,
  createConformanceContext,
  sandboxProviderConformance,
  type ConformanceOutcome,
  type SandboxConformanceCase,
  type SandboxConformanceContext,
} from './conformance/sandbox-provider-conformance.ts';
export { blockProblem, checkEveryCutResumes, joinSlices, journalOfLines } from './every-cut.ts';
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
export { chatError, chatJson, chatStream, normalizeChat } from './scripted-model/chat.ts';
export { normalizeResponses, responsesError, responsesJson, responsesStream } from './scripted-model/responses.ts';
export { SseSink, streamChunks } from './scripted-model/sse.ts';
export { startModelServer, type Api, type ModelServer, type ModelServerOptions, type RecordedRequest } from './scripted-model/server.ts';
export {
  claudeCodeProfile,
  codexProfile,
  piProfile,
  profileFromBuiltinTools,
  referenceProfiles,
  type CliProfile,
  type CompactionReply,
  type EditToolSpec,
  type ShellToolSpec,
  type ToolSearchSpec,
  type WriteToolSpec,
} from './scripted-model/profiles.ts';
export { findCwd } from './scripted-model/phrasing.ts';
export { loadProfiles } from './scripted-model/load-profile.ts';
