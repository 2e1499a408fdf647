// How a keeper loads its egress proxy (kept-egress.ts; keeper mode, a CLI in a network namespace).
// Unbundled (tsx, tests importing sources) it is a plain dynamic import. In dist/bridge.mjs
// esbuild.config.mjs replaces this module with one that unpacks the proxy's own embedded bundle, so
// a keeper compiles and runs that, not all of stage 2 (docs/bridge-internals.md#two-stage-start).
import type * as KeptEgress from './kept-egress.ts';

export type KeptEgressModule = typeof KeptEgress;

export function loadKeptEgress(): Promise<KeptEgressModule> {
  return import('./kept-egress.ts');
}
