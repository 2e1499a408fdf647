// The product (bridge/, host/, protocol/, bootstrap/) must not depend on the
// test tree: nothing there imports a module under test/, and the bundles built
// from it (dist/bridge.mjs, dist/cli.mjs) contain no test module. Checked two
// ways: every import/export/import() specifier in the product sources,
// resolved, and esbuild's own list of the inputs of each bundle. Files read at
// run time count too: no `new URL(…, import.meta.url)` in the product points
// into test/, and no asset the build copies into dist/ comes from test/.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { entries } from '../esbuild.config.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// esbuild's JS API keeps its service process until stop(): it must not outlive this file.
afterAll(() => stop());
const productDirs = ['bridge', 'host', 'protocol', 'bootstrap'];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.d.mts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

const inTestTree = (path: string): boolean => path === 'test' || path.startsWith('test/');

describe('the product does not depend on test/', () => {
  it('no file under bridge/, host/, protocol/ or bootstrap/ imports a module under test/', () => {
    const files = productDirs.flatMap(sourceFiles);
    expect(files.length, 'the scan found the product sources').toBeGreaterThan(50);
    const edges: string[] = [];
    for (const file of files) {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('.')) continue; // a package or node: builtin
        const target = relative(root, resolve(root, dirname(file), fileName));
        if (inTestTree(target)) edges.push(`${file} -> ${target}`);
      }
    }
    expect(edges.sort(), 'product → test/ imports').toEqual([]);
  });

  it('the bundles esbuild.config.mjs builds contain no module from test/ (the fixture adapter included)', async () => {
    const entryPoints = entries.flatMap((entry) => [entry.entryPoint, ...(entry.afterReady ? [entry.afterReady.entryPoint] : [])]);
    expect(entryPoints).toEqual(expect.arrayContaining(['bridge/main.ts', 'host/cli/main.ts']));
    const bundled: Record<string, string[]> = {};
    for (const entryPoint of entryPoints) {
      const result = await build({
        absWorkingDir: root,
        entryPoints: [entryPoint],
        bundle: true,
        platform: 'node',
        format: 'esm',
        write: false,
        metafile: true,
        logLevel: 'silent',
        external: ['node-pty', 'bufferutil', 'utf-8-validate'],
      });
      const inputs = Object.keys(result.metafile.inputs);
      bundled[entryPoint] = inputs.filter(inTestTree).sort();
      if (entryPoint === 'host/cli/main.ts') {
        expect(inputs, 'the CLI bundles the fixture adapter and the demo model from the product tree').toEqual(
          expect.arrayContaining(['host/testing/fixture/fixture-adapter.ts', 'host/testing/scripted-model/script.ts']),
        );
      }
    }
    for (const [entryPoint, testInputs] of Object.entries(bundled)) expect(testInputs, `test modules bundled into ${entryPoint}`).toEqual([]);
  });

  it('no product source looks up a file under test/ at run time (new URL(path, import.meta.url))', () => {
    const lookups: string[] = [];
    const found: string[] = [];
    for (const file of productDirs.flatMap(sourceFiles)) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const match of text.matchAll(/new URL\(\s*(['"`])([^'"`]+)\1\s*,\s*import\.meta\.url\s*\)/g)) {
        const target = relative(root, resolve(root, dirname(file), match[2]!));
        found.push(`${file} -> ${target}`);
        if (inTestTree(target)) lookups.push(`${file} -> ${target}`);
      }
    }
    expect(found, 'the scan sees the fixture adapter find its CLI').toContain('host/testing/fixture/fixture-adapter.ts -> host/testing/fixture/fixture-cli.mjs');
    expect(lookups.sort(), 'product → test/ run-time file lookups').toEqual([]);
  });

  it('the assets the build copies next to the bundles come from the product tree, not test/', () => {
    const assets = entries.flatMap((entry) => entry.assets ?? []);
    expect(assets, 'the CLI ships the fixture CLI').toContainEqual({ from: 'host/testing/fixture/fixture-cli.mjs', to: 'dist/fixture-cli.mjs' });
    for (const { from } of assets) {
      expect(inTestTree(relative(root, resolve(root, from))), `asset ${from} is under test/`).toBe(false);
      expect(existsSync(join(root, from)), `asset ${from} exists`).toBe(true);
    }
  });
});

// A file a tracked module imports but git does not track (a .gitignore pattern that catches it) runs here and is
// missing from every clean clone: each relative import of a tracked source resolves to a tracked file, or to a
// build output (lib/, dist/).
describe('every module the tracked sources import is tracked', () => {
  it('no relative import/export/import() of a tracked .ts/.mjs/.js file names a file git ignores or lacks', () => {
    const tracked = new Set(execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean));
    const sources = [...tracked].filter((file) => /\.(ts|mts|mjs|js)$/.test(file) && !file.endsWith('.d.ts') && !file.endsWith('.d.mts') && !file.includes('/fixtures/'));
    expect(sources.length, 'the scan found the tracked sources').toBeGreaterThan(300);
    const missing: string[] = [];
    for (const file of sources) {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        if (!fileName.startsWith('./') && !fileName.startsWith('../')) continue; // a package or node: builtin
        const target = relative(root, resolve(root, dirname(file), fileName));
        if (/^(lib|dist)\//.test(target)) continue; // build outputs (npm run build), never tracked
        if (!tracked.has(target)) missing.push(`${file} -> ${target}`);
      }
    }
    expect(missing.sort(), 'imports of untracked files').toEqual([]);
  });
});
