// How main.ts loads stage 2 (after-ready.ts) once the ready line is out
// (docs/bridge-internals.md#two-stage-start). Unbundled (tsx, tests importing
// sources) it is a plain dynamic import. In dist/bridge.mjs esbuild.config.mjs
// replaces this module with one that unpacks the embedded stage 2 and compiles
// it with a `require` rooted at the bridge file (node-pty, the only external,
// resolves next to it).
import type * as AfterReady from './after-ready.ts';

export type AfterReadyModule = typeof AfterReady;

export function loadAfterReady(): Promise<AfterReadyModule> {
  return import('./after-ready.ts');
}
