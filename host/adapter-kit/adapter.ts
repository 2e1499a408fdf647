// The adapter author's whole job (docs/design.md#d1, #d4): how to launch the CLI, how to
// feed it over stdin, how to read its thread id, and a deterministic translator
// from journal records to HarnessV1StreamParts. Everything else — transport,
// cursors, reconnect, suspend/continue, the recovery ladder, host tools over
// MCP, bootstrap — is the kit's (host/session, host/harness).
import type { JSONValue } from '@ai-sdk/provider';
import type { ToolSet } from '@ai-sdk/provider-utils';
import type { HarnessV1BootstrapCommand, HarnessV1BootstrapFile } from '../../protocol/harness-v1/bootstrap.ts';
import type {
  HarnessV1PermissionMode,
  HarnessV1ResponseFormat,
  HarnessV1Skill,
  HarnessV1ToolSpec,
} from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import type { LaunchSpecInput } from '../../protocol/v1/launch-spec.ts';
import type { McpEnvNames } from '../../protocol/v1/mcp-env.ts';
import type { Responder } from './responder.ts';

/** Why the kit is asking for a launch spec. */
export type LaunchMode =
  /** First turn of a fresh session (no CLI thread yet). */
  | 'fresh'
  /** A later turn, or any turn after a resume: continue the CLI's thread `threadId`. */
  | 'resume'
  /** The recovery ladder's last rung: re-drive `threadId` because the turn's producer died. */
  | 'rerun';

export type LaunchContext = {
  readonly mode: LaunchMode;
  /** The CLI's own thread id, once a record has revealed it. */
  readonly threadId: string | undefined;
  /** The turn's prompt text (for CLIs that take it in argv rather than stdin). */
  readonly prompt: string;
  /** Where the CLI runs; created by the framework. */
  readonly sessionWorkDir: string;
  /** Where the bootstrap recipe installed the bridge and the CLI. */
  readonly bootstrapDir: string;
  /** The bridge's state dir; a good place for the CLI's home/config. */
  readonly stateDir: string;
  readonly permissionMode: HarnessV1PermissionMode;
  readonly tools: ReadonlyArray<HarnessV1ToolSpec>;
  /**
   * The bridge's MCP endpoint for the turn's host tools (docs/design.md#d6; docs/bridge-internals.md#mcp-endpoint),
   * given as the NAMES of env vars. The bridge merges the endpoint's URL and bearer token into the env of every
   * CLI it spawns; point the CLI at them by reference and never copy the values into argv or `env` (argv is
   * journaled, launch specs are recorded, and the host never learns the token). Claude expands `${VAR}` in
   * --mcp-config: `{"mcpServers":{"host":{"type":"http","url":"${HARNESS_BRIDGE_MCP_URL}",
   * "headers":{"Authorization":"Bearer ${HARNESS_BRIDGE_MCP_TOKEN}"}}}}`; a CLI that cannot expand env reads
   * them in a wrapper (`sh -c`, a pi extension). undefined: the bridge serves no endpoint.
   */
  readonly mcp: McpEnvNames | undefined;
  /** The turn's model: what the caller chose for this turn (1.0.x passes one per turn), else the adapter's `modelId`. */
  readonly modelId: string | undefined;
  /** A JSON response format, only ever for an adapter with `supportsJsonResponseFormat` (others are refused before launch). */
  readonly responseFormat?: Extract<HarnessV1ResponseFormat, { type: 'json' }>;
};

export type PromptContext = {
  readonly text: string;
  /** Present on the session's first prompt and whenever the caller's instructions change; never the same instructions twice. */
  readonly instructions: string | undefined;
  /** The turn's skills (1.0.x passes them per turn; canary.3 once, at doStart). Their files are written before the turn starts. */
  readonly skills: ReadonlyArray<HarnessV1Skill>;
  /** The turn's model (as in LaunchContext). */
  readonly modelId?: string;
  /** As in LaunchContext. */
  readonly responseFormat?: Extract<HarnessV1ResponseFormat, { type: 'json' }>;
  readonly threadId: string | undefined;
  /** The session's permission mode, for CLIs that take their approval policy per request (Codex's turn/start). The kit always sets it. */
  readonly permissionMode?: HarnessV1PermissionMode;
};

/** What a thread-start request may have to name (ACP's session/new takes the cwd and the MCP servers). */
export type ThreadStartContext = {
  readonly sessionWorkDir: string;
  /** As in LaunchContext: env var NAMES (put them in stdin as `${NAME}` placeholders with launch stdinSecrets). */
  readonly mcp: McpEnvNames | undefined;
};

export type CompactContext = {
  /** The CLI's own thread id, once a record has revealed it. */
  readonly threadId: string | undefined;
  /** A turn is running: the input goes to its stdin (no internal turn of its own). */
  readonly duringTurn: boolean;
};

/**
 * A pure reducer from records to stream parts (docs/design.md#d4): no clocks, no
 * randomness, ids derived from seq or turn. `step` may mutate and return the
 * state it was given, but must keep no other references; replaying a turn's
 * records from its first seq through a fresh `init()` must reproduce the same
 * parts. Records the kit translates itself (bridge tool calls and approval
 * requests) never reach `step`.
 */
export type Translator<S> = {
  init(turn: { turnId: string; rerun: boolean }): S;
  step(state: S, record: JournalRecord): { state: S; parts: ReadonlyArray<HarnessV1StreamPart> };
  /**
   * Optional speed-up for continuing deep into a long turn: a JSON snapshot of
   * the state, stored in the resume payload, and its inverse. With both, the
   * next slice attaches at the cursor instead of replaying the turn from its
   * first record. Correctness never depends on them: a restore that throws
   * falls back to the replay.
   */
  snapshot?(state: S): JSONValue;
  restore?(snapshot: JSONValue): S;
};

/** An npm-installed CLI: `npm install <package>@<version>` puts it at `node_modules/.bin/<bin>`. */
export type CliPackage = {
  /** The npm package (`@anthropic-ai/claude-code`). */
  readonly package: string;
  /** The exact version the adapter (and its captured fixtures) is written against. */
  readonly version: string;
  /** The executable's name under node_modules/.bin (`claude`). */
  readonly bin: string;
};

export type CliAdapterDefinition<S> = {
  readonly harnessId: string;
  readonly builtinTools: ToolSet;
  readonly supportsBuiltinToolApprovals?: boolean;
  /**
   * The CLI lists the host tools again by itself before each turn, added and removed ones alike, so a
   * long-lived process sees a tool set that changed between turns. Without it the kit folds the turn's tool set into a
   * session-lifetime launch's reuseKey: the bridge respawns the CLI on the same thread (mode 'resume') when
   * the set changes, and reuses it while it does not (docs/writing-an-adapter.md#host-tools-between-turns).
   */
  readonly reListsHostTools?: boolean;
  /**
   * The adapter makes the CLI answer in JSON when a turn asks for it (responseFormat
   * `json`, passed in LaunchContext and PromptContext). Without it such a turn is
   * refused with HarnessCapabilityUnsupportedError before anything starts.
   */
  readonly supportsJsonResponseFormat?: boolean;
  readonly modelId?: string;
  /**
   * The CLI this adapter drives, as an npm package pinned to one version: what the kit installs and caches
   * on the host (`harness-bridge run` installs it into the CLI cache before the first turn: $HARNESS_BRIDGE_CLI_CACHE, else
   * /var/cache/harness-bridge/clis as root, else ~/.cache/harness-bridge/clis;
   * host/cli/install-clis.mjs `ensureCli(cli)`). Absent for a CLI that is not on npm (the fixture CLI).
   * The in-sandbox install stays `install.commands`.
   */
  readonly cli?: CliPackage;
  /** What the bootstrap recipe adds to install the CLI (runs after the bridge file is written). */
  readonly install?: {
    readonly files?: ReadonlyArray<HarnessV1BootstrapFile>;
    readonly commands?: ReadonlyArray<HarnessV1BootstrapCommand>;
  };
  /**
   * The launch spec for a turn. For a long-lived CLI (lifetime 'session') the
   * bridge reuses the live process when the spec is identical, or when both
   * carry the same `reuseKey` (set one when argv holds spawn-only details such
   * as `--resume <thread>`); otherwise it retires the old process and spawns.
   */
  launch(context: LaunchContext): LaunchSpecInput;
  /** The turn's stdin input (undefined when the prompt travels in argv). */
  encodePrompt?(context: PromptContext): string | undefined;
  /**
   * For CLIs whose prompt request must name a thread the CLI creates (JSON-RPC
   * CLIs: Codex app-server's turn/start needs the id thread/start returns): stdin
   * input that creates the thread. While the session has no thread id, the kit
   * first runs it as an internal turn (no parts reach the consumer; a turnEnd
   * matcher must end it, and `threadId` must read the id from its output), then
   * the prompt, whose context then carries the thread id.
   */
  encodeThreadStart?(context?: ThreadStartContext): string;
  /**
   * Stdin input that interrupts the running turn when it must name ids only the
   * translator state knows (Codex's turn/interrupt {threadId, turnId}). On abort
   * the kit sends it before the bridge's `abort` (which still writes the
   * launch's `interrupt` and arms the kill-after-grace); undefined → abort alone.
   */
  encodeInterrupt?(state: S): string | undefined;
  /** A mid-turn user message for the CLI's stdin; absent → submitUserMessage is not offered. */
  encodeUserMessage?(text: string, state: S): string;
  /** A tool result for a stdin-driven CLI (tool calls that did not come through the bridge's MCP endpoint). */
  encodeToolResult?(result: { toolCallId: string; output: unknown; isError: boolean }, state: S): string;
  /** An approval answer for a CLI that asks over stdout and reads answers on stdin. */
  encodeApproval?(answer: { approvalId: string; approved: boolean; reason?: string }, state: S): string;
  /**
   * Stdin input that asks the CLI to compact; absent → doCompact throws HarnessCapabilityUnsupportedError.
   * Between turns the kit runs it as an internal turn (a turnEnd matcher must end it; its `compaction`
   * parts reach the consumer at the start of the next turn); during a turn it goes to that turn's stdin.
   * `context` carries what a request may have to name (Codex's thread/compact/start names the thread);
   * the kit always passes it (optional only so older callers still compile). Throw to refuse (no thread
   * yet, a CLI that cannot compact mid-turn): doCompact rejects with that error and nothing is sent.
   */
  encodeCompact?(customInstructions: string | undefined, context?: CompactContext): string;
  /**
   * Files that make skills discoverable by the CLI (e.g. `.claude/skills/<name>/SKILL.md`: skillDirectoryFiles
   * builds that layout). The kit writes them before a turn whose skills changed and removes the files of skills
   * that are gone.
   */
  skillFiles?(skills: ReadonlyArray<HarnessV1Skill>, sessionWorkDir: string): ReadonlyArray<HarnessV1BootstrapFile>;
  /** The CLI's thread id, if this record reveals it. */
  threadId(record: JournalRecord): string | undefined;
  /**
   * Answers requests the CLI sends its host on stdout (JSON-RPC CLIs: ACP's fs/* and
   * session/request_permission): the kit runs it for the running turn's records, answering each
   * request once, after catching up with the journal (host/adapter-kit/responder.ts).
   */
  readonly responder?: Responder;
  readonly translator: Translator<S>;
};

export type CliAdapter<S = unknown> = CliAdapterDefinition<S> & { readonly kind: 'cli-adapter' };

/** An inert description of a CLI adapter; `createBridgeHarness` turns it into a HarnessV1. */
export function defineCliAdapter<S>(definition: CliAdapterDefinition<S>): CliAdapter<S> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(definition.harnessId)) {
    throw new RangeError(`harnessId must be a kebab-case slug, got ${JSON.stringify(definition.harnessId)}`);
  }
  return { ...definition, kind: 'cli-adapter' };
}
