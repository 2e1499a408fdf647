// The bridge's command line, defined once. The host kit launches the bridge in
// a sandbox with bridgeShellCommand() (host/reach/bridge-process.ts), and the
// benchmark spawns it with bridgeArgv() (test/bench/lib/targets.mjs): the same
// node argv, so what the bench measures is what ships. Plain JS (with
// bridge-command.d.mts) so the bench imports it without a TypeScript loader.

/**
 * Node/V8 flags the bridge runs with: none. Any V8 heap flag on the command
 * line makes Node reject the code cache embedded in its binary (V8 checks a
 * hash of the flags): +8 ms of the bridge's cold start (1.41× → 1.78× Node's
 * floor). The bridge caps its young generation from inside instead
 * (docs/bridge-internals.md#memory). A flag added here reaches both the host
 * kit and the bench.
 */
export const BRIDGE_NODE_FLAGS = Object.freeze([]);

for (const flag of BRIDGE_NODE_FLAGS) {
  if (!/^--[a-z0-9-]+(=[a-z0-9]+)?$/.test(flag)) throw new Error(`bridge node flag ${flag} is not shell-safe`);
}

/**
 * argv after the node binary: `[...BRIDGE_NODE_FLAGS, bridgeFile, --state-dir, DIR, --port, N, …]`.
 * @param {{ bridgeFile: string, stateDir: string, port: number, host?: string, recipeIdentity?: string }} options
 * @returns {string[]}
 */
export function bridgeArgv({ bridgeFile, stateDir, port, host, recipeIdentity }) {
  const argv = [...BRIDGE_NODE_FLAGS, bridgeFile, '--state-dir', stateDir, '--port', String(port)];
  if (host) argv.push('--host', host);
  if (recipeIdentity) argv.push('--recipe-identity', recipeIdentity);
  return argv;
}

/**
 * The same launch as one POSIX sh command for a sandbox. Every value comes from
 * an environment variable the caller sets — HB_NODE (node binary), HB_FILE,
 * HB_STATE, HB_PORT, and HB_HOST / HB_RECIPE when `host` / `recipeIdentity`
 * are set — quoted, never spliced into the string.
 * @param {{ host?: boolean, recipeIdentity?: boolean }} [present] which optional values are set
 * @returns {string}
 */
export function bridgeShellCommand({ host = false, recipeIdentity = false } = {}) {
  const args = ['--state-dir "$HB_STATE"', '--port "$HB_PORT"'];
  if (host) args.push('--host "$HB_HOST"');
  if (recipeIdentity) args.push('--recipe-identity "$HB_RECIPE"');
  return ['exec "$HB_NODE"', ...BRIDGE_NODE_FLAGS, '"$HB_FILE"', ...args].join(' ');
}

/** One line for logs and bench output: the argv with placeholders. */
export function describeBridgeCommand() {
  return ['node', ...bridgeArgv({ bridgeFile: 'bridge.mjs', stateDir: 'DIR', port: 0 })].join(' ');
}
