// What package.json promises, checked against the tree without building: the
// `exports` map names lib/ files that mirror existing entry sources, and
// tsconfig.build.json emits exactly those entries; main/types are the root
// entry; `files` ships lib/ and the esbuild outputs (the bin among them) and
// nothing else; lib/ is ignored by git; the build makes both dist/ and lib/,
// and `npm pack` builds first; the consumer test runs in `npm test`.
// The built package itself is test/package/consumer.test.ts's.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { entries } from '../../esbuild.config.mjs';
import { checkDocLinks } from './doc-links.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** What the README's and the docs' relative links name, shipped so they resolve in the installed package. */
const docsShipped = ['docs/', 'host/testing/scripted-model/README.md'];
type Target = { types: string; default: string };
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  main: string;
  types: string;
  exports: Record<string, string | Target>;
  bin: Record<string, string>;
  files: string[];
  scripts: Record<string, string>;
};
const buildConfig = ts.parseConfigFileTextToJson('tsconfig.build.json', readFileSync(join(root, 'tsconfig.build.json'), 'utf8')).config as {
  extends: string;
  compilerOptions: Record<string, unknown>;
  files: string[];
  include: string[];
};

const entryExports = Object.entries(manifest.exports).filter(([key]) => key !== './package.json') as Array<[string, Target]>;
const sourceOf = (target: string): string => target.replace(/^\.\/lib\//, '').replace(/\.(d\.ts|js)$/, '.ts');

describe('package.json', () => {
  it('exports: the host kit at the root; the adapters, adapter-kit, bootstrap, protocol and testing as subpaths', () => {
    expect(Object.keys(manifest.exports).sort()).toEqual(
      ['.', './adapter-kit', './adapters/acp', './adapters/claude-code', './adapters/codex', './adapters/pi', './bootstrap', './package.json', './protocol', './testing'].sort(),
    );
    expect(manifest.exports['.']).toEqual({ types: './lib/host/index.d.ts', default: './lib/host/index.js' });
    expect(manifest.exports['./package.json']).toBe('./package.json');
  });

  it('every export is a lib/ .js and its .d.ts (types first), mirroring an entry source that exists', () => {
    for (const [key, target] of entryExports) {
      expect(Object.keys(target), `${key}: types before default`).toEqual(['types', 'default']);
      expect(target.default, key).toMatch(/^\.\/lib\/.+\.js$/);
      expect(target.types, key).toBe(target.default.replace(/\.js$/, '.d.ts'));
      expect(existsSync(join(root, sourceOf(target.default))), `${key}: ${sourceOf(target.default)} exists`).toBe(true);
    }
    const rootEntry = manifest.exports['.'] as Target;
    expect({ main: manifest.main, types: manifest.types }).toEqual({ main: rootEntry.default, types: rootEntry.types });
  });

  it('tsconfig.build.json emits exactly the exported entries into lib/, mirroring the sources, with declarations and .js specifiers', () => {
    expect([...buildConfig.files].sort()).toEqual(entryExports.map(([, target]) => sourceOf(target.default)).sort());
    expect(buildConfig.include).toEqual([]);
    expect(buildConfig.compilerOptions).toMatchObject({ noEmit: false, outDir: 'lib', rootDir: '.', declaration: true, rewriteRelativeImportExtensions: true, noEmitOnError: true });
  });

  it('files: lib/, the esbuild outputs (the bin among them) and the docs the README links, nothing else', () => {
    const built = entries.flatMap((entry) => [
      entry.outfile,
      ...(entry.snapshot ? [entry.snapshot.outfile] : []),
      ...(entry.jailSrt ? [entry.jailSrt.outfile] : []),
      ...(entry.assets ?? []).map((asset) => asset.to),
    ]);
    expect([...manifest.files].sort()).toEqual(['lib/', ...built, ...docsShipped].sort());
    // Every relative link of the README (and of the docs) names a file the tarball holds.
    const shipped = (path: string) => docsShipped.some((entry) => (entry.endsWith('/') ? path.startsWith(entry) : path === entry));
    const links = (file: string) => [...readFileSync(join(root, file), 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((href) => !/^[a-z]+:/.test(href));
    for (const href of links('README.md')) expect(shipped(href), `README links ${href}`).toBe(true);
    for (const doc of readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'))) {
      for (const href of links(`docs/${doc}`)) expect(shipped(posix.normalize(posix.join('docs', href))), `docs/${doc} links ${href}`).toBe(true);
    }
    // And each resolves, #anchors included (the installed package's copy: test/package/consumer.test.ts).
    const markdown = ['README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`), 'host/testing/scripted-model/README.md'];
    expect(checkDocLinks(root, markdown).broken).toEqual([]);
    for (const bin of Object.values(manifest.bin)) expect(built, `bin ${bin} is built by esbuild.config.mjs`).toContain(bin);
    // bootstrap/recipe.ts finds the bridge at ../dist/bridge.mjs; scripts/build-lib.mjs re-points that from lib/.
    expect(built).toContain('dist/bridge.mjs');
  });

  it('repository: a git URL, so the registry page and `npm repo` lead to the source the docs cite', () => {
    const { repository } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { repository?: { type?: string; url?: string } };
    expect(repository?.type).toBe('git');
    expect(repository?.url).toMatch(/^git\+https:\/\/[^/]+\/[^/]+\/[^/]+\.git$/);
  });

  it('lib/ is a build output: ignored by git (at the root only), excluded from the type check, built by npm run build, and npm pack builds first', () => {
    // The root's lib/ only: a lib/ elsewhere (test/bench/lib/) is source.
    expect(readFileSync(join(root, '.gitignore'), 'utf8').split('\n')).toContain('/lib/');
    expect(manifest.scripts.build).toBe('node esbuild.config.mjs && node scripts/build-lib.mjs');
    expect(manifest.scripts.prepack).toBe('npm run build');
    const tsconfig = ts.parseConfigFileTextToJson('tsconfig.json', readFileSync(join(root, 'tsconfig.json'), 'utf8')).config as { exclude: string[] };
    expect(tsconfig.exclude).toEqual(expect.arrayContaining(['lib', 'test/package/consumer']));
  });

  it('npm test runs the consumer test on Node 20, 22 and 24 (lanes of its own, not the unit lane)', () => {
    // npm test is the lane runner; it runs heavyFiles once per runtime, one after another (each packs this tree); the unit lane excludes them.
    expect(manifest.scripts.test).toBe('node scripts/test-lanes.mjs all');
    const runner = readFileSync(fileURLToPath(new URL('../../scripts/test-lanes.mjs', import.meta.url)), 'utf8');
    expect(runner).toContain("const heavyFiles = ['test/package/consumer.test.ts'];");
    expect(runner).toContain("const packageLanes = ['consumer', 'consumer-node22', 'consumer-node24'];");
    expect(runner).toMatch(/all: \[[^\n]*packageLanes/);
    for (const major of ['22', '24']) expect(runner).toContain(`'consumer-node${major}': { kind: 'vitest', node: '${major}', args: ['vitest', 'run', ...heavyFiles, '--testNamePattern', consumerRuntimeCases] }`);
    // On 22 and 24 every case that runs the package runs; only the type checks and the kit-breaking mutations are left to 20.
    const pattern = new RegExp(/const consumerRuntimeCases = '([^']+)';/.exec(runner)![1]!);
    const names = [...readFileSync(fileURLToPath(new URL('./consumer.test.ts', import.meta.url)), 'utf8').matchAll(/\bit\((['"`])(.+?)\1/g)].map((m) => m[2]!);
    const left = names.filter((name) => !pattern.test(name));
    expect(left.length).toBeGreaterThan(0);
    for (const name of left) expect(name).toMatch(/the kit broken|type-checks against/);
    expect(names.filter((name) => pattern.test(name)).some((name) => name.includes('suspend in one process'))).toBe(true);
    expect(runner).toContain('const unitExcludes = [...heavyDirs.map((d) => `${d}/**`), ...heavyFiles];');
  });
});

describe('peer dependencies', () => {
  // npm resolves a peer range to its newest match, while @ai-sdk/harness and ai pin these two exactly:
  // any range wider than their pin installs a second copy (ToolSet and sandbox types then differ).
  // So the peers are the exact versions the pinned @ai-sdk/harness depends on, bumped in lockstep.
  it('are exactly what the pinned @ai-sdk/harness depends on, and the devDependencies match', () => {
    const full = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    const harness = JSON.parse(readFileSync(join(root, 'node_modules/@ai-sdk/harness/package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
    };
    expect(harness.version).toBe(full.devDependencies!['@ai-sdk/harness']);
    for (const name of ['@ai-sdk/provider', '@ai-sdk/provider-utils']) {
      expect(full.peerDependencies![name], `${name} peer`).toBe(harness.dependencies[name]);
      expect(full.devDependencies![name], `${name} dev pin`).toBe(harness.dependencies[name]);
    }
  });
});
