// Types for esbuild.config.mjs, so TypeScript callers (test/global-setup.ts) type-check.
export type BuildEntry = {
  name: string;
  entryPoint: string;
  outfile: string;
  external: string[];
  /** The bridge's second stage, bundled on its own and embedded (esbuild.config.mjs, afterReadyStage). */
  afterReady?: { entryPoint: string; loader: string };
  /** The same entry as a CommonJS script a V8 startup snapshot is built from (bridge/startup-snapshot.ts). */
  snapshot?: { outfile: string };
  /** sandbox-runtime bundled for the jail helper, beside the bridge (bridge/jail/srt-bundle.ts). */
  jailSrt?: { outfile: string };
  /** Files copied into dist/ as they are, for the bundle to read at run time. */
  assets?: { from: string; to: string }[];
};
export type BuiltEntry = { name: string; outfile: string; bytes: number };
export declare const entries: BuildEntry[];
export declare const sizeFloors: Record<string, number>;
/** Builds the named entries (all when empty), prints each size, fails over a size floor. */
export declare function buildEntries(names?: string[]): Promise<BuiltEntry[]>;
