// The host kit bundled into a temp dir for a scenario that drives real sessions (a plain `node` script, no
// TypeScript loader), with the fixture CLI copied beside it: the fixture adapter runs the CLI that sits beside
// its module, and a CLI under a uid of its own must reach both (the dir is 0755).
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO, tempDir } from './common.mjs';

/** `exports`: export lines relative to the repo root (e.g. `export { fixtureAdapter } from './host/…'`). */
export async function loadHostKit(label, exports) {
  const { build } = await import('esbuild');
  const dir = tempDir(`${label}-host`);
  const file = path.join(dir, 'host.mjs');
  const result = await build({
    stdin: { contents: exports.join('\n'), resolveDir: REPO, loader: 'ts', sourcefile: `${label}-entry.ts` },
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    external: ['node-pty', 'bufferutil', 'utf-8-validate', '@anthropic-ai/sandbox-runtime', 'esbuild'],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'silent',
  });
  writeFileSync(file, result.outputFiles[0].text);
  const fixtureCli = path.join(dir, 'fixture-cli.mjs');
  copyFileSync(path.join(REPO, 'host/testing/fixture/fixture-cli.mjs'), fixtureCli);
  chmodSync(dir, 0o755);
  return { host: await import(file), fixtureCli };
}
