// Types for bridge-command.mjs (plain JS so the benchmark imports it without a TypeScript loader).
export type BridgeArgvOptions = { bridgeFile: string; stateDir: string; port: number; host?: string; recipeIdentity?: string };
/** Node/V8 flags the bridge runs with. */
export declare const BRIDGE_NODE_FLAGS: readonly string[];
/** argv after the node binary: flags, bridge file, bridge arguments. */
export declare function bridgeArgv(options: BridgeArgvOptions): string[];
/** The same launch as one sh command; values from HB_NODE, HB_FILE, HB_STATE, HB_PORT (+ HB_HOST, HB_RECIPE when present). */
export declare function bridgeShellCommand(present?: { host?: boolean; recipeIdentity?: boolean }): string;
/** `node <flags> bridge.mjs --state-dir DIR --port 0`, for logs and bench output. */
export declare function describeBridgeCommand(): string;
