// How main.ts loads stage 2 (after-ready.ts) once the ready line is out.
// Unbundled (tsx, tests importing sources) it is a plain dynamic import. In
// dist/bridge.mjs esbuild.config.mjs replaces this module: stage 2 is built
// as its own bundle and embedded in the one file as a string, compiled here
// with vm.compileFunction and given a `require` rooted at the bundle's own
// location (node-pty, the only external, resolves next to the bridge file).
import type * as AfterReady from './after-ready.ts';

export type AfterReadyModule = typeof AfterReady;

export function loadAfterReady(): Promise<AfterReadyModule> {
  return import('./after-ready.ts');
}
