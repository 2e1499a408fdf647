// The environment contract between the bridge and the CLIs it spawns
// (docs/design.md#d6): the bridge merges these variables into every spawned CLI's env (env is
// never journaled), so a launch spec can point the CLI at the MCP endpoint by
// reference — e.g. `${HARNESS_BRIDGE_MCP_URL}` in Claude's --mcp-config —
// without the token ever appearing in argv, records or recordings.
export const MCP_ENV_V1 = {
  /** `http://127.0.0.1:<port>/mcp`: Streamable HTTP, JSON-RPC over POST. */
  urlEnvVar: 'HARNESS_BRIDGE_MCP_URL',
  /** The endpoint's own bearer token (not the bridge's host token): `Authorization: Bearer <it>`. */
  tokenEnvVar: 'HARNESS_BRIDGE_MCP_TOKEN',
} as const;
export type McpEnvNames = typeof MCP_ENV_V1;
