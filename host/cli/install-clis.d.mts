// Types for install-clis.mjs (kept as plain .mjs so bare `node` loads it: scripts/install-clis.mjs).
export type CliName = 'claude-code' | 'codex' | 'pi';
export interface CliSpec {
  pkg: string;
  version: string;
  bin: string;
}
export declare const CLIS: Readonly<Record<CliName, CliSpec>>;
/** $HARNESS_BRIDGE_CLI_CACHE or ~/.cache/harness-bridge/clis. */
export declare function cacheRoot(): string;
/** Where the CLI lives once installed (does not install). */
export declare function cliPaths(name: CliName): { dir: string; binPath: string; markerPath: string };
/** Install the pinned CLI if needed; returns its absolute bin path and install dir. */
export declare function ensureCli(name: CliName): Promise<{ binPath: string; dir: string }>;
