// The launch sets a glibc malloc tunable for the bridge's own process
// (BRIDGE_MALLOC_TUNABLE in bootstrap/bridge-command.mjs, why:
// docs/bridge-internals.md#memory); glibc read it at exec. Taken back out of
// the environment at start, so the CLI and every helper process start with
// the environment they would have had without it.

/** Must equal bootstrap/bridge-command.mjs's BRIDGE_MALLOC_TUNABLE (test/bootstrap/bridge-command.test.ts checks). */
export const BRIDGE_MALLOC_TUNABLE = 'glibc.malloc.trim_threshold=131072';

/** Removes the launch's tunable (the last entry, as the launch appends it) from env.GLIBC_TUNABLES; drops the variable when nothing else is left. */
export function dropMallocTunable(env: NodeJS.ProcessEnv): void {
  const value = env.GLIBC_TUNABLES;
  if (value === undefined) return;
  if (value === BRIDGE_MALLOC_TUNABLE) delete env.GLIBC_TUNABLES;
  else if (value.endsWith(`:${BRIDGE_MALLOC_TUNABLE}`)) env.GLIBC_TUNABLES = value.slice(0, -BRIDGE_MALLOC_TUNABLE.length - 1);
}
