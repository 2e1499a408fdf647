// The seams of a BridgeSession: the channel it uses, how it opens one, and
// the context and start-up state createBridgeHarness hands it.
import type { HarnessV1Observability } from '../../protocol/harness-v1/diagnostics.ts';
import type { SandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1PermissionMode, HarnessV1ResumeSessionState, HarnessV1Skill } from '../../protocol/harness-v1/session.ts';
import type { AckFrame, HelloFrame, JournalRecord, McpEnvNames } from '../../protocol/v1/index.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';
import type { ChannelRequest } from '../channel/index.ts';
import type { BridgeLink, Rung } from '../reach/ladder.ts';
import type { Revived } from '../reach/revive.ts';
import type { ResumeData } from './resume-state.ts';

/** The part of a channel a session uses; host/channel/ provides it (createBridgeChannel). */
export interface SessionChannel {
  request(frame: ChannelRequest): Promise<AckFrame>;
  close(): Promise<void>;
  /** The hello of the current connection. */
  readonly hello: HelloFrame | null;
  /** Resolves once the current attach has replayed up to live; rejects with the channel's terminal error. */
  whenLive(): Promise<void>;
}

export type OpenChannel = (options: {
  url: string;
  token: string;
  /** Records with seq <= cursor are not delivered. */
  cursor: number;
  journalId: string;
  /** Fencing: the owner epoch this session took and its instance id, sent with every attach. */
  owner: { epoch: number; id: string };
  onRecords: (records: ReadonlyArray<JournalRecord>) => void;
  /** The channel ended for good (it will not reconnect). */
  onTerminal: (error: Error) => void;
  /** The channel's bridge died and a new one took over (host/reach/revive.ts): the session's link is this one now. */
  onRevived: (revived: Revived) => void;
}) => SessionChannel;

export type SessionContext<S> = {
  readonly adapter: CliAdapter<S>;
  readonly sessionId: string;
  readonly sessionWorkDir: string;
  readonly stateDir: string;
  readonly bootstrapDir: string;
  readonly permissionMode: HarnessV1PermissionMode;
  readonly skills: ReadonlyArray<HarnessV1Skill>;
  readonly observability: HarnessV1Observability | undefined;
  readonly openChannel: OpenChannel;
  /** The restricted sandbox view, for cleanup when the bridge cannot do it. */
  readonly sandbox: SandboxSession;
  /** Names of the env vars carrying the bridge's MCP endpoint (LaunchContext.mcp). */
  readonly mcp: McpEnvNames | undefined;
  /** Checkpoints offered while records arrive (BridgeHarnessSettings.onCheckpoint; docs/guarantees.md#host-crash). */
  readonly checkpoints?: CheckpointPolicy;
};

/** When the session hands the application a checkpoint: every `everyRecords` records, and at each turn start, end and host tool call. */
export type CheckpointPolicy = {
  readonly onCheckpoint: (state: HarnessV1ResumeSessionState) => void;
  readonly everyRecords: number;
};

export type SessionInit = {
  readonly link: BridgeLink;
  readonly isResume: boolean;
  readonly resume?: ResumeData;
  /** The rungs the ladder used to get here (empty for a fresh session). */
  readonly rungs: Rung[];
};
