// Types for install-clis.mjs (kept as plain .mjs so bare `node` loads it: scripts/install-clis.mjs).
export type CliName = 'claude-code' | 'codex' | 'pi' | 'claude-code-acp' | 'codex-acp';
export interface CliSpec {
  pkg: string;
  version: string;
  bin: string;
}
/** What an adapter declares (CliAdapterDefinition.cli): an npm package pinned to a version, and its executable. */
export interface CliPackageSpec {
  package: string;
  version: string;
  bin: string;
}
/** A reference CLI by name, or any CLI by its spec (`pkg` is accepted for `package`). */
export type CliRef = CliName | CliPackageSpec | CliSpec;
export declare const CLIS: Readonly<Record<CliName, CliSpec>>;
/** $HARNESS_BRIDGE_CLI_CACHE, else /var/cache/harness-bridge/clis as root, else ~/.cache/harness-bridge/clis. */
export declare function cacheRoot(): string;
/** Where the CLI lives once installed (does not install). */
export declare function cliPaths(cli: CliRef): { dir: string; binPath: string; markerPath: string };
/** Install the CLI if needed (npm, into the cache); returns its absolute bin path and install dir. */
export declare function ensureCli(cli: CliRef): Promise<{ binPath: string; dir: string }>;
