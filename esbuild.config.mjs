// Builds the bundled artifacts into dist/. Each entry is one self-contained
// ESM file for Node 18+; add the host and CLI entries to `entries` below.
// Usage: node esbuild.config.mjs            (all entries)
//        node esbuild.config.mjs bridge     (only the named entries)
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('.', import.meta.url));
const packageJson = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
if (typeof packageJson.version !== 'string') throw new Error('package.json has no version');

/** Bundle size floors, in bytes: a build over its floor fails. */
export const sizeFloors = { bridge: 500 * 1024 };

/**
 * One entry per artifact. `external`: native or optional modules loaded at run
 * time only when present (node-pty; ws's optional bufferutil/utf-8-validate).
 */
export const entries = [
  {
    name: 'bridge',
    entryPoint: 'bridge/main.ts',
    outfile: 'dist/bridge.mjs',
    external: ['node-pty', 'bufferutil', 'utf-8-validate'],
  },
  {
    name: 'cli',
    entryPoint: 'host/cli/main.ts', // its #! line is kept at the top of the bundle
    outfile: 'dist/cli.mjs',
    external: ['node-pty', 'bufferutil', 'utf-8-validate'],
  },
];

/**
 * zod's classic entry re-exports every locale (`z.locales`, ~250 KiB minified)
 * although only English is ever configured. Nothing in our bundles switches
 * locale, so `z.locales` keeps `en` only. If zod moves the file, the filter
 * stops matching and the size floor reports it.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)) return undefined;
      return { path: 'zod-locales-en', namespace: 'zod-english-only', pluginData: { resolveDir: args.resolveDir } };
    });
    pluginBuild.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: 'export { default as en } from "../locales/en.js";',
      resolveDir: args.pluginData.resolveDir,
      loader: 'js',
    }));
  },
};

// CJS dependencies (ws, pino) call require() and read __dirname: give the ESM bundle both.
const banner = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  "import { fileURLToPath as __bundleFileURLToPath } from 'node:url';",
  "import { dirname as __bundleDirname } from 'node:path';",
  'const require = __bundleCreateRequire(import.meta.url);',
  'const __filename = __bundleFileURLToPath(import.meta.url);',
  'const __dirname = __bundleDirname(__filename);',
].join('\n');

export async function buildEntries(names = []) {
  const selected = names.length === 0 ? entries : entries.filter((entry) => names.includes(entry.name));
  if (selected.length === 0) throw new Error(`no entry named ${names.join(', ')}; known: ${entries.map((e) => e.name).join(', ')}`);
  const results = [];
  for (const entry of selected) {
    await build({
      absWorkingDir: root,
      entryPoints: [entry.entryPoint],
      outfile: entry.outfile,
      bundle: true,
      platform: 'node',
      target: 'node18',
      format: 'esm',
      minify: true,
      legalComments: 'none',
      external: entry.external,
      banner: { js: banner },
      define: { __BRIDGE_VERSION__: JSON.stringify(packageJson.version) },
      plugins: [zodEnglishOnly],
      logLevel: 'warning',
    });
    const bytes = statSync(new URL(entry.outfile, `file://${root}/`)).size;
    const floor = sizeFloors[entry.name];
    results.push({ name: entry.name, outfile: entry.outfile, bytes });
    console.log(`${entry.outfile}: ${(bytes / 1024).toFixed(1)} KiB${floor ? ` (floor ${floor / 1024} KiB)` : ''}`);
    if (floor !== undefined && bytes >= floor) throw new Error(`${entry.outfile} is ${bytes} bytes, over its floor of ${floor}`);
  }
  return results;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildEntries(process.argv.slice(2));
}
