// Types for bridge-command.mjs (plain JS so the benchmark imports it without a TypeScript loader).
/** The bridge's isolation flags (docs/security.md#settings); tokenFile names the file in the state dir holding the token. */
export type BridgeIsolationArgs = { tokenFile?: string; isolation?: string; requireIsolation?: boolean; cliUser?: string; networkPolicy?: string; srt?: string; sessionsRoot?: string };
export type BridgeArgvOptions = { bridgeFile: string; stateDir: string; port: number; host?: string; recipeIdentity?: string; snapshotBlob?: string } & BridgeIsolationArgs;
/** Node/V8 flags the bridge runs with. */
export declare const BRIDGE_NODE_FLAGS: readonly string[];
/** The glibc malloc tunable the bridge runs with (GLIBC_TUNABLES). */
export declare const BRIDGE_MALLOC_TUNABLE: string;
/** The startup snapshot's files in the bridge file's dir: the script it is built from, the blob, and the stamp naming the node binary and bridge file it was built for. */
/** sandbox-runtime bundled for the jail helper, beside the bridge file. */
export declare const BRIDGE_JAIL_SRT: 'jail-srt.txt';
export declare const BRIDGE_SNAPSHOT: Readonly<{ script: string; blob: string; stamp: string }>;
/** The sh command that builds the snapshot in the bridge file's dir from $HB_NODE and $HB_FILE; always exits 0 (no blob where it cannot). */
export declare function snapshotBuildCommand(): string;
/** Environment variables to spawn the bridge with from argv, given the caller's (default process.env). */
export declare function bridgeEnv(env?: Record<string, string | undefined>): { GLIBC_TUNABLES: string };
/** argv after the node binary: flags, the snapshot blob when given, bridge file, bridge arguments. */
export declare function bridgeArgv(options: BridgeArgvOptions): string[];
/** The same launch as one sh command; values from HB_NODE, HB_FILE, HB_STATE, HB_PORT (+ HB_HOST, HB_RECIPE, HB_TOKEN_FILE, HB_ISOLATION, HB_CLI_USER, HB_NETWORK_POLICY, HB_SRT, HB_SESSIONS_ROOT when present). */
export declare function bridgeShellCommand(present?: { host?: boolean; recipeIdentity?: boolean } & { [K in keyof BridgeIsolationArgs]?: boolean }): string;
/** `GLIBC_TUNABLES=… node <flags> bridge.mjs --state-dir DIR --port 0`, for logs and bench output. */
export declare function describeBridgeCommand(): string;
