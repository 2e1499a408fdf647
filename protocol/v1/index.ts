// Wire protocol v1: one zod schema per frame (types inferred), the unions per
// direction, error and close codes, limits and the version. Both ends import
// from here and validate every frame they receive.
export { PROTOCOL_VERSION_V1, isCompatibleProtocol, protocolMajor, protocolMinor } from './version.ts';
export { errorCodeSchema, type ErrorCode } from './error-codes.ts';
export { CLOSE_CODES_V1, type CloseCode } from './close-codes.ts';
export { PROTOCOL_LIMITS_V1 } from './limits.ts';
export { decodeFrame, type Decoded } from './frames/decode.ts';
export { callIdSchema, requestIdSchema, seqSchema, signalNameSchema, turnIdSchema, type SignalName } from './common.ts';
export {
  inputAckSchema,
  ioSpecSchema,
  launchSpecSchema,
  turnEndMatcherSchema,
  type InputAck,
  type IoSpec,
  type LaunchSpec,
  type LaunchSpecInput,
  type TurnEndMatcher,
} from './launch-spec.ts';
export { hostToolSpecSchema, type HostToolSpec } from './tool-spec.ts';
export { MCP_ENV_V1, type McpEnvNames } from './mcp-env.ts';
export {
  ISOLATION_MODES_STRONGEST_FIRST,
  isolationModeSchema,
  isolationReportSchema,
  isolationRequestSchema,
  type IsolationMode,
  type IsolationReport,
  type IsolationRequest,
} from './isolation.ts';
export { recordSchema, type JournalRecord, type RecordDraft, type RecordKind, type RecordOf } from './journal-record.ts';
export { recordsFrameSchema, type RecordsFrame } from './frames/bridge/records.ts';
export { fastRecordsFrame } from './frames/records-fast-path.ts';
export { helloFrameSchema, turnInfoSchema, type HelloFrame, type TurnInfo } from './frames/bridge/hello.ts';
export { attachFrameSchema, type AttachFrame } from './frames/host/attach.ts';
export { replayBeginFrameSchema, type ReplayBeginFrame } from './frames/bridge/replay-begin.ts';
export { replayEndFrameSchema, type ReplayEndFrame } from './frames/bridge/replay-end.ts';
export { startFrameSchema, type StartFrame } from './frames/host/start.ts';
export { rerunFrameSchema, type RerunFrame } from './frames/host/rerun.ts';
export { inputFrameSchema, type InputFrame } from './frames/host/input.ts';
export { signalFrameSchema, type SignalFrame } from './frames/host/signal.ts';
export { abortFrameSchema, type AbortFrame } from './frames/host/abort.ts';
export { toolResultFrameSchema, type ToolResultFrame } from './frames/host/tool-result.ts';
export { approvalFrameSchema, type ApprovalFrame } from './frames/host/approval.ts';
export { hostWaitFrameSchema, type HostWaitFrame } from './frames/host/host-wait.ts';
export { journalEpochFrameSchema, type JournalEpochFrame } from './frames/host/journal-epoch.ts';
export { stopFrameSchema, type StopFrame } from './frames/host/stop.ts';
export { destroyFrameSchema, type DestroyFrame } from './frames/host/destroy.ts';
export { pingFrameSchema, type PingFrame } from './frames/ping.ts';
export { pongFrameSchema, type PongFrame } from './frames/pong.ts';
export { diagnosticsFrameSchema, logLevelSchema, type DiagnosticsFrame, type LogLevel } from './frames/host/diagnostics.ts';
export { diagnosticFrameSchema, type DiagnosticFrame } from './frames/bridge/diagnostic.ts';
export { ackFrameSchema, type AckFrame } from './frames/bridge/ack.ts';
export { errorFrameSchema, type ErrorFrame } from './frames/bridge/error.ts';
export { hostFrameSchema, type HostFrame, type HostFrameType } from './frames/host-frame.ts';
export { bridgeFrameSchema, type BridgeFrame, type BridgeFrameType } from './frames/bridge-frame.ts';
