// The seams server.ts talks through: what it needs from the journal and the
// supervisor (structural, so tests and wrappers such as mcp/with-mcp.ts's withMcp fit),
// the pendingCalls entries the MCP endpoint parks, and main.ts's lifecycle hooks.
import type { ApprovalFrame, ErrorCode, HostToolSpec, LaunchSpec, RecordDraft, SignalName, ToolResultFrame } from '../../protocol/v1/index.ts';
import type { ServerLimits } from '../limits.ts';
import type { BridgeLogger } from '../logger.ts';
import type { JournalReadPort } from './record-stream.ts';
import type { TurnLog } from '../journal/turn-log.ts';
import type { IsolationReport } from '../../protocol/v1/isolation.ts';

/** What the server needs from the journal (journal.ts's Journal satisfies it). */
export type JournalPort = JournalReadPort & {
  readonly journalId: string;
  /** 0 when empty. */
  readonly firstSeq: number;
  /** Resolves once everything appended so far is written and handed to onDurable. */
  flush(): Promise<void>;
  /** A new journal id (the journal was found behind a host's cursor); absent: not supported. */
  newEpoch?(): Promise<string>;
};

export type CommandResult = { ok: true } | { ok: false; code: ErrorCode; message: string };

/** What the server needs from the supervisor (supervisor.ts's Supervisor satisfies it). */
export type SupervisorPort = {
  readonly state: 'idle' | 'running' | 'stopping';
  /** The running turn's id (hello's runningTurnId), null between turns. */
  readonly turnId: string | null;
  /** Its checks and turn-start record happen synchronously; the promise settles once the CLI runs (or failed to). */
  start(
    turnId: string,
    launch: LaunchSpec,
    input?: string,
    meta?: { tools?: HostToolSpec[]; rerun?: boolean },
  ): CommandResult | Promise<CommandResult>;
  /** A promise while the launch's handshake holds the write: it settles once the text is written (and journaled) or never can be. */
  write(turnId: string, text: string): CommandResult | Promise<CommandResult>;
  signal(turnId: string, signal: SignalName): CommandResult;
  abort(turnId: string, graceMs?: number): CommandResult;
  /** The launch the next turn will likely start with (the `expect` frame): a hint, acked whatever it made. */
  expect?(launch: LaunchSpec): CommandResult;
};

/**
 * A call the CLI is waiting on (MCP tool call or approval request). The MCP
 * endpoint adds entries to `server.pendingCalls`; routing answers them.
 */
export type PendingCall =
  | { kind: 'tool-call'; answer(frame: ToolResultFrame): void }
  | { kind: 'approval-request'; answer(frame: ApprovalFrame): void };

/** What the bridge does while no host owns its stream (owner-watch.ts). */
export type OwnerPolicy = {
  /** Detached and idle this long → stop (journal kept). Default OWNER_WATCH_DEFAULTS.idleExitMs. */
  readonly idleExitMs?: number;
  /** A host tool call or approval (MCP or CLI-side, cli-waits.ts) with no owner this long is failed with an error result. Default: never. */
  readonly ownerlessToolMs?: number;
};

/** Process-level steps of stop/destroy, provided by main.ts. */
export type Lifecycle = {
  /** Stop the CLI (grace, then kill; the supervisor's default grace when undefined) and close the journal (flush + fsync). */
  stop(graceMs: number | undefined): Promise<void>;
  /** Kill the CLI, close the journal, remove the state dir. */
  destroy(): Promise<void>;
  /** Leave the process (after the ack went out). */
  exit(code: number): void;
};

export type BridgeServerOptions = {
  host: string;
  port: number;
  token: string;
  bridgeId: string;
  bridgeVersion: string;
  recipeIdentity?: string;
  /** How CLIs are isolated from this bridge (hello's `isolation`). */
  isolation?: IsolationReport;
  journal: JournalPort;
  supervisor: SupervisorPort;
  turns: TurnLog;
  logger: BridgeLogger;
  lifecycle: Lifecycle;
  limits?: Partial<ServerLimits>;
  /** What happens while no host owns the stream: idle exit, owner-less tool calls (owner-watch.ts). */
  policy?: OwnerPolicy;
  /** Journals a record (the owner-less timeout's failed answer to a CLI-side call, cli-waits.ts). */
  record?: (draft: RecordDraft) => unknown;
  /**
   * A TCP server already listening, created with `pauseOnConnect` (main.ts
   * binds before loading node:http, ws and the protocol, to print the ready
   * line early; it holds connections until the server attaches). Its
   * connections are handed to the server's own HTTP server, unread so far;
   * host/port are then only reported. Default: the HTTP server listens itself.
   */
  listener?: import('node:net').Server;
};
