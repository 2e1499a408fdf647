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

/**
 * The glibc malloc tunable the bridge runs with (in GLIBC_TUNABLES, after any the caller set).
 * A fixed trim threshold (glibc's own initial 128 KiB) turns off glibc's dynamic mmap threshold:
 * the large transient allocations of the start (stage 2 unpacked and compiled) raised it, and
 * later frees then stayed in the brk heap. −4.5 MiB of idle RSS, −4 MiB streaming
 * (docs/bridge-internals.md#memory). Other libcs ignore it; the bridge takes it back out of its
 * environment at start (bridge/malloc-tunable.ts), so the CLI never inherits it.
 */
export const BRIDGE_MALLOC_TUNABLE = 'glibc.malloc.trim_threshold=131072';

/**
 * sandbox-runtime bundled for the jail helper, beside the bridge file (bridge/jail/srt-bundle.ts): the helper loads
 * it instead of the installed srt's ES modules when both are the same srt version.
 */
export const BRIDGE_JAIL_SRT = 'jail-srt.txt';

/**
 * The bridge's V8 startup snapshot, in the bridge file's dir (docs/bridge-internals.md#startup-snapshot):
 * `script` (dist/bridge-snapshot.cjs, the same stage 1 as a CommonJS script) is what `blob` is built
 * from; `stamp` names the node binary it was built by (`stat -L -c %s:%Y`: size and mtime, which copies
 * of a sandbox keep and a Node upgrade changes), and a launch uses the blob only while that still
 * matches: Node refuses a blob another Node built (exit 14).
 */
export const BRIDGE_SNAPSHOT = Object.freeze({ script: 'bridge-snapshot.cjs', blob: 'bridge.snapshot.blob', stamp: 'bridge.snapshot.stamp' });

const stampOf = (node) => `stat -L -c %s:%Y "$(command -v "${node}")" 2>/dev/null`;

/**
 * The sh command that builds the snapshot, run in the bridge file's dir with `$HB_NODE` and
 * `$HB_FILE` (the bridge file's name there) set: builds the blob, checks that a bridge starts from it
 * (`--version`), writes the stamp. It always exits 0: a Node that cannot build or start from one
 * leaves no blob (and says why on stderr), and the bridge starts without.
 * @returns {string}
 */
export function snapshotBuildCommand() {
  const { script, blob, stamp } = BRIDGE_SNAPSHOT;
  return [
    `rm -f ${blob} ${stamp};`,
    `if "$HB_NODE" --snapshot-blob ${blob} --build-snapshot ${script} >/dev/null`,
    `&& v=$("$HB_NODE" --snapshot-blob ${blob} "$HB_FILE" --version) && [ "$v" = "$("$HB_NODE" "$HB_FILE" --version)" ]`,
    `&& ${stampOf('$HB_NODE')} > ${stamp}.tmp && [ -s ${stamp}.tmp ] && mv ${stamp}.tmp ${stamp};`,
    `then :; else rm -f ${blob} ${stamp} ${stamp}.tmp; echo "harness-bridge: no startup snapshot: this node cannot build or start from one" >&2; fi`,
  ].join(' ');
}

/**
 * The environment variables to spawn the bridge with from argv (bridgeArgv), given the caller's.
 * @param {Record<string, string | undefined>} [env]
 * @returns {{ GLIBC_TUNABLES: string }}
 */
export function bridgeEnv(env = process.env) {
  return { GLIBC_TUNABLES: env.GLIBC_TUNABLES ? `${env.GLIBC_TUNABLES}:${BRIDGE_MALLOC_TUNABLE}` : BRIDGE_MALLOC_TUNABLE };
}

for (const flag of BRIDGE_NODE_FLAGS) {
  if (!/^--[a-z0-9-]+(=[a-z0-9]+)?$/.test(flag)) throw new Error(`bridge node flag ${flag} is not shell-safe`);
}

/**
 * The bridge's isolation flags (docs/security.md#settings), in argv order. Each value is a name
 * from a fixed set or a path; `tokenFile` names the file in the state dir the host wrote the token to.
 * @typedef {{ tokenFile?: string, isolation?: string, requireIsolation?: boolean, cliUser?: string, networkPolicy?: string, srt?: string, sessionsRoot?: string }} BridgeIsolationArgs
 */
const isolationFlags = /** @type {const} */ ([
  ['tokenFile', '--token-file', 'HB_TOKEN_FILE'],
  ['isolation', '--isolation', 'HB_ISOLATION'],
  ['cliUser', '--cli-user', 'HB_CLI_USER'],
  ['networkPolicy', '--network-policy', 'HB_NETWORK_POLICY'],
  ['srt', '--srt', 'HB_SRT'],
  ['sessionsRoot', '--sessions-root', 'HB_SESSIONS_ROOT'],
]);

/**
 * argv after the node binary: `[...BRIDGE_NODE_FLAGS, (--snapshot-blob BLOB,) bridgeFile, --state-dir, DIR, --port, N, …]`.
 * `snapshotBlob`: start from that startup snapshot (the caller checked it was built for this node and file).
 * @param {{ bridgeFile: string, stateDir: string, port: number, host?: string, recipeIdentity?: string, snapshotBlob?: string } & BridgeIsolationArgs} options
 * @returns {string[]}
 */
export function bridgeArgv({ bridgeFile, stateDir, port, host, recipeIdentity, snapshotBlob, ...isolation }) {
  const argv = [...BRIDGE_NODE_FLAGS, ...(snapshotBlob ? ['--snapshot-blob', snapshotBlob] : []), bridgeFile, '--state-dir', stateDir, '--port', String(port)];
  if (host) argv.push('--host', host);
  if (recipeIdentity) argv.push('--recipe-identity', recipeIdentity);
  for (const [key, flag] of isolationFlags) if (isolation[key]) argv.push(flag, String(isolation[key]));
  if (isolation.requireIsolation) argv.push('--require-isolation');
  return argv;
}

/**
 * The same launch as one POSIX sh command for a sandbox. Every value comes from
 * an environment variable the caller sets — HB_NODE (node binary), HB_FILE,
 * HB_STATE, HB_PORT, and HB_HOST / HB_RECIPE when `host` / `recipeIdentity`
 * are set, HB_TOKEN_FILE / HB_ISOLATION / HB_CLI_USER / HB_NETWORK_POLICY /
 * HB_SRT / HB_SESSIONS_ROOT for the isolation values present — quoted, never spliced into the string.
 * @param {{ host?: boolean, recipeIdentity?: boolean, requireIsolation?: boolean } & { [K in keyof BridgeIsolationArgs]?: boolean }} [present] which optional values are set
 * @returns {string}
 */
export function bridgeShellCommand({ host = false, recipeIdentity = false, ...isolation } = {}) {
  const args = ['--state-dir "$HB_STATE"', '--port "$HB_PORT"'];
  if (host) args.push('--host "$HB_HOST"');
  if (recipeIdentity) args.push('--recipe-identity "$HB_RECIPE"');
  for (const [key, flag, env] of isolationFlags) if (isolation[key]) args.push(`${flag} "$${env}"`);
  if (isolation.requireIsolation) args.push('--require-isolation');
  const tunables = `GLIBC_TUNABLES="\${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}${BRIDGE_MALLOC_TUNABLE}"`;
  // The startup snapshot next to the bridge file when its stamp matches this node (BRIDGE_SNAPSHOT), as "$@".
  const dir = '"${HB_FILE%/*}"';
  const snapshot = [
    'set --;',
    `if [ -f ${dir}/${BRIDGE_SNAPSHOT.blob} ] && [ -f ${dir}/${BRIDGE_SNAPSHOT.stamp} ]`,
    `&& [ "$(${stampOf('$HB_NODE')})" = "$(cat ${dir}/${BRIDGE_SNAPSHOT.stamp})" ];`,
    `then set -- --snapshot-blob ${dir}/${BRIDGE_SNAPSHOT.blob}; fi;`,
  ];
  return [...snapshot, tunables, 'exec "$HB_NODE"', ...BRIDGE_NODE_FLAGS, '"$@"', '"$HB_FILE"', ...args].join(' ');
}

/** One line for logs and bench output: the argv with placeholders. */
export function describeBridgeCommand() {
  return [`GLIBC_TUNABLES=${BRIDGE_MALLOC_TUNABLE}`, 'node', ...bridgeArgv({ bridgeFile: 'bridge.mjs', stateDir: 'DIR', port: 0 })].join(' ');
}
