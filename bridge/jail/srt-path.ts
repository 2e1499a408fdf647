// Where sandbox-runtime is: `--srt` (its dist/cli.js), else resolved from the bridge file like node-pty.
// Stage 1 reads it too, to start the jail helper with the bridge (early-helper.ts), which loads node:module
// only then: it is passed in.
import { existsSync } from 'node:fs';
import type { createRequire as CreateRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/** srt's package dir and CLI, or why there is none. */
export function findSrt(explicit: string | undefined, bridgeFile: string, createRequire: typeof CreateRequire): { cli: string; pkg: string } | { error: string } {
  if (explicit !== undefined) {
    return existsSync(explicit) ? { cli: explicit, pkg: resolve(dirname(explicit), '..') } : { error: `--srt ${explicit} does not exist` };
  }
  try {
    const pkg = dirname(createRequire(resolve(bridgeFile)).resolve('@anthropic-ai/sandbox-runtime/package.json'));
    return { cli: join(pkg, 'dist', 'cli.js'), pkg };
  } catch {
    return { error: `sandbox-runtime (@anthropic-ai/sandbox-runtime) is not installed where the bridge ${bridgeFile} can find it` };
  }
}

/** The module the jail helper loads srt from (jail-helper-main.ts). */
export function srtIndexOf(pkg: string): string {
  return join(pkg, 'dist', 'index.js');
}
