// Bridge defaults, one section per module, each number with its reason.
// Constructors reject bad values with a RangeError, so a misconfiguration fails
// at startup, not in the middle of a session.
import { PROTOCOL_LIMITS_V1 } from '../protocol/v1/limits.ts';

/** journal.ts: memory window, disk batching, replay reads, recovery. */
export const JOURNAL_LIMITS = {
  /**
   * Records kept in memory so live catch-up and short replays never touch disk.
   * 10k short records is ~1–2 MiB; a host that falls further behind than this
   * replays from disk, which streams at several 100k records/s anyway.
   */
  maxWindowRecords: 10_000,
  /**
   * Bytes (UTF-8, approximate) the window may hold, so 10k records of 256 KiB
   * lines cannot pin 2.5 GiB. The oldest records are evicted past this.
   */
  maxWindowBytes: 16 * 1024 * 1024,
  /**
   * One sparse index entry (seq → file offset) every this many records: 1M
   * records cost ~1k numbers, and a disk read skips at most this many lines.
   */
  indexEveryRecords: 1024,
  /**
   * Bytes per disk write. Larger batches amortise the syscall (at ~70 B per
   * record 4 MiB is ~60k records), smaller ones bound the reused write buffer
   * and how long one onDurable batch delays the first record in it.
   */
  maxWriteBatchBytes: 4 * 1024 * 1024,
  /**
   * Bytes read from disk per read syscall during replay and recovery: large
   * enough to amortise the syscall, small enough to keep a replay's memory flat.
   */
  maxReadChunkBytes: 256 * 1024,
  /**
   * Bytes per read syscall when replay copies records from disk straight into
   * frames: 1 MiB is ~7k short records per thread-pool round trip (a replay
   * is bound by those trips, not by copying), and is one reader buffer per
   * replaying socket.
   */
  maxReplayChunkBytes: 1024 * 1024,
  /**
   * Bytes per memory-window block (the window holds the journal's own line
   * bytes; blocks are reused). 1 MiB holds ~7k short records, so a full window
   * of 10k short records is 2–3 blocks; a line longer than this gets a block of its own.
   */
  windowBlockBytes: 1024 * 1024,
  /**
   * Bytes of trimmed window blocks kept for reuse. One write drains what a tick
   * appended (up to SERVER_LIMITS.maxJournalPendingBytes plus one pipe read
   * loop), and trim() then frees that many blocks at once: with 2 spare blocks
   * the rest were dropped and reallocated every tick, and a slow host's bridge
   * at 1M records carried 10–17 MiB of such dead 1 MiB blocks awaiting a full
   * GC (test/chaos/memory.test.ts). 4 MiB covers that burst; they are live
   * memory the bridge already peaked at, not new growth.
   */
  windowSpareBytes: 4 * 1024 * 1024,
  /**
   * Bytes of record JSON per batch yielded by read(), whatever maxBatchRecords
   * says: keeps a replay batch (and the frame built from it) far below
   * PROTOCOL_LIMITS_V1.maxFrameBytes (8 MiB). A single larger record still goes out alone.
   */
  maxReadBatchBytes: 1024 * 1024,
  /**
   * UTF-16 units of one serialized record (≤ 48 MiB of UTF-8), below
   * PROTOCOL_LIMITS_V1.maxPayloadBytes (64 MiB): a bigger record could never be
   * sent. Recovery treats a longer line as corrupt, so append refuses one
   * rather than write what the next open would drop.
   */
  maxRecordChars: 16 * 1024 * 1024,
  /**
   * A write that failed on a full disk is retried this often (from where it
   * stopped). One failing write(2) per interval costs nothing; 250 ms is how
   * late the CLI resumes after space returns, at most.
   */
  diskFullRetryMs: 250,
  /**
   * How long the bridge waits for space before it gives up and exits naming
   * ENOSPC (`HARNESS_BRIDGE_DISK_FULL_EXIT_MS`, the kit's `diskFullExitMs`). Meanwhile the CLI is paused and the host
   * holds a `disk-full` error; 10 min leaves an operator time to free space,
   * and bounds how long a host tool or an abort can wait on the disk.
   */
  diskFullExitMs: 10 * 60_000,
  /**
   * Free bytes the state dir's filesystem must have for a bridge to start: below it the bridge exits
   * 70 before its ready line naming ENOSPC (the kit's typed `disk-full`), instead of starting and
   * failing at the first turn's records. 1 MiB: a few turns of a busy CLI's output.
   */
  minFreeBytesAtStart: 1024 * 1024,
  /**
   * Journal bytes one turn may write before the bridge kills its CLI and ends
   * it 'capped' (`HARNESS_BRIDGE_MAX_TURN_JOURNAL_BYTES`). 1 GiB is far above
   * any real turn (a long agent turn journals tens of MiB) and stops a runaway
   * CLI (one writes 1 GiB in ~20 s) before it fills a sandbox disk.
   */
  maxTurnJournalBytes: 1024 * 1024 * 1024,
  /**
   * Journal bytes a session may hold before the running turn is capped and
   * starts are refused (`HARNESS_BRIDGE_MAX_SESSION_JOURNAL_BYTES`). 0: no
   * cap, since what a session may keep is the application's call (the disk
   * itself is handled: docs/bridge-internals.md#disk-full).
   */
  maxSessionJournalBytes: 0,
} as const;

/** server/server.ts / server/record-stream.ts / main.ts: sockets, replay, hello, heartbeat, wiring. */
export const SERVER_LIMITS = {
  /**
   * ws's bufferedAmount above which a socket counts as behind: no more frames
   * are queued for it, and it is caught up from the journal once it drains.
   * 1 MiB keeps the kernel buffer busy on loopback and bounds memory per socket.
   */
  maxBufferedBytes: 1024 * 1024,
  /**
   * Hard cap on a socket's bufferedAmount for control frames (acks, errors,
   * pongs), which are never deferred: a host that floods us without reading is
   * closed with CLOSE_CODES_V1.slowConsumer instead of growing our memory.
   */
  maxControlBufferedBytes: 8 * 1024 * 1024,
  /**
   * Records per journal.read() batch during replay and catch-up. The journal
   * also caps a batch by bytes (JOURNAL_LIMITS.maxReadBatchBytes), so one
   * records frame stays well under PROTOCOL_LIMITS_V1.maxFrameBytes.
   */
  maxReplayBatchRecords: 4096,
  /**
   * A socket that stays behind (not draining) for this long is closed with
   * CLOSE_CODES_V1.slowConsumer. Generous: a paused host costs us nothing but
   * an open socket, and it can always re-attach from its cursor.
   */
  maxBehindMs: 10 * 60_000,
  /**
   * TCP connections the ws listener accepts at once (http.Server.maxConnections).
   * One host owns the stream; the rest are probes and reconnects in flight.
   */
  maxConnections: 64,
  /** ws-level ping interval; a socket with no pong for two intervals is terminated. */
  heartbeatMs: 15_000,
  /** Turns listed in hello (the most recent ones, oldest first). */
  maxHelloTurns: 32,
  /**
   * Turn ids remembered for `rerun {of}` validation. ~200 B per id at most, so
   * 100k turns is ~20 MiB worst case; the oldest are forgotten past this.
   */
  maxKnownTurns: 100_000,
  /**
   * Journal bytes queued but not yet written above which the CLI's output is
   * paused (supervisor.pause), resumed below half of it: a CLI faster than the
   * disk cannot grow the bridge's memory. The bytes are window blocks: one event-loop
   * turn reads up to 32 × 64 KiB from the CLI pipe, ~5 MiB of journal lines for
   * short records, all held until the end-of-tick write. 2 MiB (two window blocks)
   * caps that burst (at 8 MiB a 1M-record run held ~9 blocks); pausing costs one
   * pause/resume per tick, the write itself takes microseconds.
   */
  maxJournalPendingBytes: 2 * 1024 * 1024,
  /** A diagnostic frame above this many characters is sent without its attrs. */
  maxDiagnosticBytes: 16 * 1024,
} as const;

export type ServerLimits = { -readonly [K in keyof typeof SERVER_LIMITS]: number };

/** Merges overrides into SERVER_LIMITS; a non-positive or non-integer value is a RangeError. */
export function resolveServerLimits(overrides: Partial<ServerLimits> = {}): ServerLimits {
  const limits: ServerLimits = { ...SERVER_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`SERVER_LIMITS.${name} must be a positive integer, got ${value}`);
  }
  return limits;
}

/** supervisor.ts: line framing, abort/stop grace, draining a dead child's pipes. */
export const SUPERVISOR_LIMITS = {
  /**
   * Default byte cap of one stdout/stderr line (launch.io.maxLineBytes overrides
   * it per launch). 256 KiB holds the biggest single JSON events the CLIs print
   * (a tool result with a file in it) in one piece, and bounds the splitter's
   * buffer per stream; longer lines are split into `cont` pieces, never dropped.
   */
  maxLineBytes: 256 * 1024,
  /**
   * Ceiling for a line cap: PROTOCOL_LIMITS_V1.maxLineBytesCeiling, whose range
   * the launch schema enforces (a launch asking for more is refused, never clamped).
   */
  maxLineBytesCeiling: PROTOCOL_LIMITS_V1.maxLineBytesCeiling,
  /**
   * Bytes of child pipe output staged (copied out of the pipe's chunks) per
   * stream before it is split on the next setImmediate (supervised-process.ts
   * ChunkStage: the chunks die young). One event-loop turn reads at most
   * 32 × 64 KiB; past this many bytes the staged ones are split at once.
   */
  stagedOutputBytes: 512 * 1024,
  /** Floor for any line cap: PROTOCOL_LIMITS_V1.minLineBytes (a piece holds a whole 4-byte UTF-8 char with room to spare). */
  minLineBytes: PROTOCOL_LIMITS_V1.minLineBytes,
  /**
   * Spawns of one kept CLI whose keeper ran nothing (a jail started ahead gone, a port taken since the bridge
   * picked it: kept-process.ts `again`) before the turn fails with the last one's reason.
   */
  keptSpawnAttempts: 3,
  /** Time between abort's interrupt and the SIGKILL of the process group (the brief's default). */
  abortGraceMs: 3_000,
  /** Time between stop's SIGTERM/interrupt and the SIGKILL, when stop() is given none. */
  stopGraceMs: 3_000,
  /**
   * Stop and replace close the CLI's stdin first and wait this long (at most a third of the grace, which
   * still ends in SIGKILL at the same time) for it to exit by itself before the SIGTERM: a CLI that ends
   * on EOF writes its state first (claude-code-acp's transcript, which a later session/load reads).
   */
  stopEofWaitMs: 1_000,
  /**
   * After the CLI exits, how long its pipes may stay open (held by a leftover
   * grandchild) before the group is SIGKILLed and the pipes are closed, so the
   * exit record and turn-end are not held back forever. Not counted while paused.
   */
  exitDrainMs: 2_000,
  /**
   * Default launch.inputAck.maxWaitMs: how long a turnEnd match held for
   * unacknowledged inputs waits for an ack before the turn ends at it anyway
   * (the turn-end then lists the ids). Claude Code prints `command_lifecycle`
   * `started` for a queued message right after the result it was held behind
   * (test/fixtures/claude-code/mid-turn-queued.jsonl: two lines later), so
   * 30 s is orders of magnitude of slack for a loaded sandbox, while a CLI that
   * drops a message (a bug) holds a finished turn open for 30 s, not until exit.
   */
  inputAckMaxWaitMs: 30_000,
} as const;

export type SupervisorLimits = { -readonly [K in keyof typeof SUPERVISOR_LIMITS]: number };

/** Merges overrides into SUPERVISOR_LIMITS; a negative or non-integer value, or caps out of order, is a RangeError. */
export function resolveSupervisorLimits(overrides: Partial<SupervisorLimits> = {}): SupervisorLimits {
  const limits: SupervisorLimits = { ...SUPERVISOR_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`SUPERVISOR_LIMITS.${name} must be a non-negative integer, got ${value}`);
  }
  if (limits.minLineBytes < 4) throw new RangeError(`SUPERVISOR_LIMITS.minLineBytes must be >= 4, got ${limits.minLineBytes}`);
  if (limits.maxLineBytesCeiling < limits.minLineBytes) throw new RangeError('SUPERVISOR_LIMITS.maxLineBytesCeiling must be >= minLineBytes');
  if (limits.maxLineBytes < limits.minLineBytes || limits.maxLineBytes > limits.maxLineBytesCeiling) {
    throw new RangeError(`SUPERVISOR_LIMITS.maxLineBytes must be within [minLineBytes, maxLineBytesCeiling], got ${limits.maxLineBytes}`);
  }
  if (limits.exitDrainMs < 1) throw new RangeError('SUPERVISOR_LIMITS.exitDrainMs must be >= 1');
  if (limits.inputAckMaxWaitMs < 1) throw new RangeError('SUPERVISOR_LIMITS.inputAckMaxWaitMs must be >= 1');
  return limits;
}

/** mcp/endpoint.ts: the loopback MCP endpoint serving host tools to the CLI (docs/design.md#d6). */
export const MCP_LIMITS = {
  /**
   * Bytes of one HTTP request body (one JSON-RPC message). Tool arguments a
   * model writes are rarely more than a few KiB; 4 MiB still fits a pasted file
   * and keeps the tool-call record far below JOURNAL_LIMITS.maxRecordChars.
   */
  maxMcpBodyBytes: 4 * 1024 * 1024,
  /**
   * Tool calls waiting for a host answer at once. A CLI runs a handful of tools
   * in parallel at most; each waiting call holds an open socket, so this also
   * bounds sockets and memory while no host is attached.
   */
  maxPendingCalls: 64,
  /** Open sockets to the endpoint (waiting calls plus idle keep-alive ones). */
  maxMcpConnections: 128,
  /**
   * Tools in the union tools/list serves across turns (a start frame carries at
   * most 256); the oldest are forgotten past this so a long session stays bounded.
   */
  maxListedTools: 1024,
  /**
   * A call still waiting after this long gets its 200 headers, then one space
   * (valid leading JSON whitespace) per interval until the answer: HTTP clients
   * with idle or headers timeouts (undici and Bun default to 300 s) keep waiting.
   */
  keepaliveIntervalMs: 15_000,
} as const;

export type McpLimits = { -readonly [K in keyof typeof MCP_LIMITS]: number };

/** Merges overrides into MCP_LIMITS; a non-positive or non-integer value is a RangeError. */
export function resolveMcpLimits(overrides: Partial<McpLimits> = {}): McpLimits {
  const limits: McpLimits = { ...MCP_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`MCP_LIMITS.${name} must be a positive integer, got ${value}`);
  }
  return limits;
}

/** memory-release.ts: when the bridge gives its garbage back to the system (docs/bridge-internals.md#memory). */
export const MEMORY_RELEASE_LIMITS = {
  /** Output (records) quiet for this long (to twice it) before a release. */
  quietMs: 200,
  /** Releases at least this far apart: one blocks the main thread for two full GCs (~25–45 ms). */
  minIntervalMs: 1000,
  /** Heap growth since the last release below which there is too little to give back. */
  minGainBytes: 1024 * 1024,
} as const;

/** A keeper (launch `survive`, survive/keeper.ts). */
export const KEEPER_LIMITS = {
  /**
   * The latest stdin writes a keeper keeps, for an adopting bridge to journal those its journal lacks
   * (the dead bridge's last tick): by count, and by characters (the oldest go first; the newest is kept whatever its size).
   */
  recentInputs: 64,
  recentInputChars: 1024 * 1024,
  /**
   * How far a stream's capture may run ahead of what the connected bridge says it has read before the
   * keeper stops reading the CLI's output (the CLI then blocks on its pipe, as it would on the bridge's
   * own): the bridge's backpressure, kept. It reads on once the bridge is within half of this, or
   * without a bridge connected.
   */
  maxAheadBytes: 1024 * 1024,
  /**
   * The bridge starts the next kept spawn's keeper (a Node start: bridge/survive/spare-keeper.ts) once
   * its current kept CLI wrote nothing for this long after its first output, or ended: on a small
   * machine a Node start beside a CLI's flood of output slowed the stream by more than the spare saves.
   */
  quietMs: 100,
  /**
   * A keeper of a namespaced CLI still waiting for its CLI this long after its start is a spare: it loads
   * its egress proxy then (~20 ms of its main thread). One taken at once spawns its CLI first and loads
   * the proxy while the CLI starts (survive/keeper-start.ts).
   */
  egressPreloadAfterMs: 30,
} as const;

/** The jail helper (jail/jail-helper-main.ts) as its bridge goes, asking whether kept CLIs it wrapped still run. */
export const JAIL_HELPER_LIMITS = {
  /** How long after a wrap a missing keeper socket still counts as a keeper not listening yet, not one gone. */
  keptListenGraceMs: 30_000,
  /** When the bridge died, how long the helper waits before it looks once more for a jail the bridge was starting (jail-helper-main.ts). */
  orphanJailLookAgainMs: 250,
} as const;
