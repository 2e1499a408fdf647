// The bridge's start from a V8 startup snapshot (docs/bridge-internals.md#startup-snapshot).
// dist/bridge-snapshot.cjs is stage 1 built as a CommonJS script with __BRIDGE_SNAPSHOT__ true
// (esbuild.config.mjs): `node --snapshot-blob B --build-snapshot bridge-snapshot.cjs` runs its
// module code once and saves the heap, and `node --snapshot-blob B bridge.mjs ARGS` starts from that
// heap and runs only main.ts's dispatch. Everywhere else (dist/bridge.mjs, sources under tsx) the
// constant is false or absent and this is `return false`.
declare const __BRIDGE_SNAPSHOT__: boolean | undefined;

/**
 * While a snapshot is being built: `run` becomes the snapshot's main function, run when a bridge
 * starts from it, and the answer is true. Otherwise false: the caller runs it now.
 */
export function deferredToSnapshot(run: () => void): boolean {
  if (typeof __BRIDGE_SNAPSHOT__ !== 'boolean' || !__BRIDGE_SNAPSHOT__) return false;
  const { startupSnapshot } = require('node:v8') as typeof import('node:v8');
  if (startupSnapshot === undefined || !startupSnapshot.isBuildingSnapshot()) return false;
  startupSnapshot.setDeserializeMainFunction(run);
  return true;
}
