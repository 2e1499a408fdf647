// The host kit's public entry (the package root, `harness-bridge`): everything
// a program needs to run CLI adapters as HarnessV1 sessions over the bridge —
// createBridgeHarness, the local and Docker sandbox providers, the errors and the types.
// The other public entries: harness-bridge/adapters/<cli>, /adapter-kit,
// /bootstrap, /protocol, /testing (package.json `exports`). Internals (turn
// translation, the ladder's pieces) are not exported.
export { defineCliAdapter, type CliAdapter, type CliAdapterDefinition, type LaunchContext, type LaunchMode, type PromptContext, type CompactContext, type Translator } from './adapter-kit/adapter.ts';
export { createBridgeHarness, defaultStateDir, type BridgeHarness, type BridgeHarnessSettings } from './harness.ts';
export type { ExecTransportSettings } from './reach/exec-relay.ts';
export type { RelayFraming } from '../protocol/v1/relay-framing.ts';
export { BridgeSession } from './session/session.ts';
export { createBridgeChannel, type BridgeChannel, type BridgeChannelOptions, type ChannelStatus } from './channel/index.ts';
export { BridgeChannelError, ChannelRequestError, type BridgeChannelErrorCode, type ChannelRequestErrorCode } from './channel/index.ts';
export { BridgeSessionError, ResumeStateError, type SessionErrorCode } from './session/errors.ts';
export { LocalSandboxError, type LocalSandboxErrorCode } from './sandbox/local/errors.ts';
export { BootstrapError, type BootstrapErrorCode } from '../bootstrap/errors.ts';
export { HarnessBridgeError } from '../protocol/errors/harness-bridge-error.ts';
export {
  bootstrapErrorCodes,
  channelErrorCodes,
  channelRequestErrorCodes,
  harnessBridgeErrorCodes,
  isHarnessBridgeErrorCode,
  localSandboxErrorCodes,
  sessionErrorCodes,
  type HarnessBridgeErrorCode,
  type HarnessBridgeErrorFamily,
} from '../protocol/errors/error-codes.ts';
export { resumeStateSchemaFor, parseResumeState, type ResumeData } from './session/resume-state.ts';
export {
  createLocalSandboxProvider,
  type LocalIsolation,
  type LocalSandboxProvider,
  type LocalSandboxProviderOptions,
  type LocalSandboxSession,
} from './sandbox/local/provider.ts';
export {
  createDockerSandboxProvider,
  DockerSandboxError,
  dockerUnavailable,
  type DockerSandboxProvider,
  type DockerSandboxProviderOptions,
  type DockerSandboxSession,
} from './sandbox/docker/provider.ts';
export { BRIDGE_ISOLATION, type BridgeIsolation } from './reach/bridge-isolation.ts';
// The CLI's network for a sandbox that has none, over its exec stream (docs/remote-providers.md#egress-tunnel).
export { EgressTunnel, type EgressTunnelOptions, type EgressTunnelSpawn } from './reach/egress-tunnel.ts';
export type { IsolationMode, IsolationReport, IsolationRequest } from '../protocol/v1/isolation.ts';
export type { NetworkPolicy } from '../protocol/v1/network-policy.ts';
export { CHANNEL_LIMITS, HOST_SESSION_LIMITS } from './limits.ts';
export { limitYoungGeneration } from './memory.ts';
export { HarnessCapabilityUnsupportedError, HarnessError } from '../protocol/harness-v1/errors.ts';
export type * from '../protocol/harness-v1/index.ts';
