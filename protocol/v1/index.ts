// Wire protocol v1: one zod schema per frame (types inferred), the unions per
// direction, error and close codes, limits and the version. Both ends import
// from here and validate every frame they receive.
export { PROTOCOL_VERSION_V1, isCompatibleProtocol, protocolMajor } from './version.ts';
export { errorCodeSchema, type ErrorCode } from './error-codes.ts';
export { CLOSE_CODES_V1, type CloseCode } from './close-codes.ts';
export { PROTOCOL_LIMITS_V1 } from './limits.ts';
export { decodeFrame, type Decoded } from './decode.ts';
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
export { recordSchema, type JournalRecord, type RecordDraft, type RecordKind, type RecordOf } from './record.ts';
export { recordsFrameSchema, type RecordsFrame } from './records.ts';
export { helloFrameSchema, turnInfoSchema, type HelloFrame, type TurnInfo } from './hello.ts';
export { attachFrameSchema, type AttachFrame } from './attach.ts';
export { replayBeginFrameSchema, type ReplayBeginFrame } from './replay-begin.ts';
export { replayEndFrameSchema, type ReplayEndFrame } from './replay-end.ts';
export { startFrameSchema, type StartFrame } from './start.ts';
export { rerunFrameSchema, type RerunFrame } from './rerun.ts';
export { inputFrameSchema, type InputFrame } from './input.ts';
export { signalFrameSchema, type SignalFrame } from './signal.ts';
export { abortFrameSchema, type AbortFrame } from './abort.ts';
export { toolResultFrameSchema, type ToolResultFrame } from './tool-result.ts';
export { approvalFrameSchema, type ApprovalFrame } from './approval.ts';
export { stopFrameSchema, type StopFrame } from './stop.ts';
export { destroyFrameSchema, type DestroyFrame } from './destroy.ts';
export { pingFrameSchema, type PingFrame } from './ping.ts';
export { pongFrameSchema, type PongFrame } from './pong.ts';
export { diagnosticsFrameSchema, logLevelSchema, type DiagnosticsFrame, type LogLevel } from './diagnostics.ts';
export { diagnosticFrameSchema, type DiagnosticFrame } from './diagnostic.ts';
export { ackFrameSchema, type AckFrame } from './ack.ts';
export { errorFrameSchema, type ErrorFrame } from './error.ts';
export { hostFrameSchema, type HostFrame, type HostFrameType } from './host-frame.ts';
export { bridgeFrameSchema, type BridgeFrame, type BridgeFrameType } from './bridge-frame.ts';
