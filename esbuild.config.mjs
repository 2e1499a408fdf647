// Builds the bundled artifacts into dist/: one self-contained ESM file per
// entry in `entries` below — the bridge (dist/bridge.mjs) and the
// harness-bridge CLI (dist/cli.mjs). The bridge runs on Node 20+ in a sandbox, the host kit
// on what package.json `engines` names (README.md, Node); esbuild's `target` only sets the syntax level.
// Usage: node esbuild.config.mjs            (all entries)
//        node esbuild.config.mjs bridge     (only the named entries)
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';
import { build } from 'esbuild';
import { BRIDGE_JAIL_SRT } from './bootstrap/bridge-command.mjs';

const root = fileURLToPath(new URL('.', import.meta.url));
const packageJson = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));
if (typeof packageJson.version !== 'string') throw new Error('package.json has no version');

/** Bundle size floors, in bytes: a build over its floor fails. */
export const sizeFloors = { bridge: 500 * 1024 };

/**
 * One entry per artifact. `external`: native or optional modules loaded at run
 * time only when present (node-pty; ws's optional bufferutil/utf-8-validate).
 * `embedded` (the bridge): stages built on their own and embedded in the same
 * file, each behind its loader module, see `embeddedStage` below. `snapshot`: the same entry as a
 * CommonJS script a V8 startup snapshot is built from. `assets`: files the bundle reads
 * at run time from next to itself, copied into dist/ as they are.
 */
export const entries = [
  {
    name: 'bridge',
    entryPoint: 'bridge/main.ts',
    outfile: 'dist/bridge.mjs',
    external: ['node-pty', 'bufferutil', 'utf-8-validate'],
    embedded: [
      // preloadBuiltins: stage 2 sets a V8 flag as it starts (bridge/young-generation.ts), and a flag set at run time makes
      // V8 refuse Node's embedded code cache for every builtin loaded after it (http, tls, worker_threads… compiled from
      // source: ~2× their load's CPU). Loaded before stage 2 runs, they keep the cache.
      { entryPoint: 'bridge/after-ready.ts', loader: 'bridge/after-ready-loader.ts', exportName: 'loadAfterReady', label: 'after ready', preloadBuiltins: true },
      // A keeper's egress proxy alone (keeper mode, in a network namespace): not all of stage 2.
      { entryPoint: 'bridge/jail/kept-egress.ts', loader: 'bridge/jail/kept-egress-loader.ts', exportName: 'loadKeptEgress', label: 'kept egress' },
    ],
    // The same stage 1 as a CommonJS script for `node --build-snapshot` (bridge/startup-snapshot.ts).
    snapshot: { outfile: 'dist/bridge-snapshot.cjs' },
    // sandbox-runtime for the jail helper, beside the bridge (buildJailSrt below).
    jailSrt: { outfile: `dist/${BRIDGE_JAIL_SRT}` },
  },
  {
    name: 'cli',
    entryPoint: 'host/cli/main.ts', // its #! line is kept at the top of the bundle
    outfile: 'dist/cli.mjs',
    external: ['node-pty', 'bufferutil', 'utf-8-validate'],
    // The `fixture` adapter's CLI (host/testing/fixture/fixture-adapter.ts looks for it next to the bundle).
    assets: [{ from: 'host/testing/fixture/fixture-cli.mjs', to: 'dist/fixture-cli.mjs' }],
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

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  target: 'node18',
  minify: true,
  legalComments: 'none',
  define: { __BRIDGE_VERSION__: JSON.stringify(packageJson.version), __BRIDGE_SNAPSHOT__: 'false' },
  logLevel: 'warning',
};

/** Code as brotli (best quality), in base64: what an embedded stage and the jail's srt bundle carry. */
const packed64 = (code) =>
  brotliCompressSync(code, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: code.length } }).toString('base64');

/**
 * The bridge's two stages in one file (why two: docs/bridge-internals.md#two-stage-start).
 * Stage 2 (bridge/after-ready.ts) is bundled separately as a CommonJS-style
 * function body and embedded in stage 1 (bridge/main.ts) as one string literal
 * (brotli, base64: ~115 KiB), which the parser skims instead of pre-parsing
 * ~350 KiB of functions. Stage 1's after-ready-loader.ts is replaced by one that
 * unpacks that string and compiles it with vm.compileFunction after the ready
 * line, with a `require` rooted at the bundle file
 * (`createRequire(import.meta.url)`): builtins, and node-pty (external,
 * optional) from a node_modules next to the bridge, exactly where an
 * `import('node-pty')` from the bundle would look. Dynamic imports in
 * stage 2 become require() calls (`supported`), since a compiled function
 * has no module to import from. Modules both stages use (limits, auth,
 * version) are in both copies; they hold no shared state. A keeper's egress
 * proxy (bridge/jail/kept-egress.ts) is embedded the same way on its own, so
 * a keeper loads that, not all of stage 2.
 */
async function embeddedStage(stage, external) {
  const built = await build({
    ...common,
    entryPoints: [stage.entryPoint],
    format: 'cjs',
    supported: { 'dynamic-import': false },
    external,
    plugins: [zodEnglishOnly],
    write: false,
    metafile: stage.preloadBuiltins === true,
  });
  const builtins = stage.preloadBuiltins === true ? builtinsRequiredBy(built.metafile) : [];
  // Brotli + base64: ~1/3 of the bytes Node reads, decodes and scans at start (a string literal is
  // also copied and hashed by the parser); decompressing when it loads takes ~1 ms.
  const packed = packed64(built.outputFiles[0].contents);
  const loaderPath = path.join(root, stage.loader);
  const plugin = (format) => ({
    name: `embedded-${stage.exportName}`,
    setup(pluginBuild) {
      pluginBuild.onLoad({ filter: /-loader\.ts$/ }, (args) =>
        path.resolve(args.path) === loaderPath ? { contents: loaderSource(packed, stage, format, builtins), loader: 'js', resolveDir: path.dirname(loaderPath) } : undefined,
      );
    },
  });
  return { esm: plugin('esm'), cjs: plugin('cjs') };
}

/** The node builtins a stage's bundle requires (esbuild's metafile), `node:` names, each once, in the order first met. */
function builtinsRequiredBy(metafile) {
  const [output] = Object.values(metafile.outputs);
  const names = output.imports.filter((i) => i.external && isBuiltin(i.path)).map((i) => (i.path.startsWith('node:') ? i.path : `node:${i.path}`));
  return [...new Set(names)];
}

/**
 * The module that replaces an embedded stage's loader: `exportName()` unpacks the stage, loads the
 * builtins it requires when the stage asks for that (`preloadBuiltins`), and compiles and runs it, with
 * a `require` rooted at the bridge file. In the ES module (the bridge file) the literal sits
 * in a function that is never called: the parser only skims it, and its text is read back as a slice
 * of the module's source (kept anyway), so no second copy stays in the heap. In the snapshot script
 * (CommonJS, no import.meta) the literal is a string in the snapshot's heap, dropped once unpacked,
 * and the bridge file is the one the bridge was started as (process.argv[1]).
 */
function loaderSource(packed, stage, format, builtins) {
  const esm = format === 'esm';
  return [
    esm ? `function packed() { return ${JSON.stringify(packed)}; }` : `let packed = ${JSON.stringify(packed)};`,
    `export async function ${stage.exportName}() {`,
    esm
      ? "  const [{ createRequire }, { compileFunction }, { brotliDecompressSync }, { dirname }, { fileURLToPath }] = await Promise.all([import('node:module'), import('node:vm'), import('node:zlib'), import('node:path'), import('node:url')]);"
      : "  const [{ createRequire }, { compileFunction }, { brotliDecompressSync }, { dirname, resolve }] = ['node:module', 'node:vm', 'node:zlib', 'node:path'].map((name) => require(name));",
    ...(esm
      ? ['  const text = packed.toString();', "  const base64 = text.slice(text.indexOf('\"') + 1, text.lastIndexOf('\"'));"]
      : ['  const base64 = packed;', "  packed = '';"]),
    "  const code = brotliDecompressSync(Buffer.from(base64, 'base64')).toString('utf8');",
    esm ? '  const filename = fileURLToPath(import.meta.url);' : '  const filename = resolve(process.argv[1]);',
    '  const module = { exports: {} };',
    `  const run = compileFunction(code, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: \`\${filename} (${stage.label})\` });`,
    `  const stageRequire = createRequire(${esm ? 'import.meta.url' : 'filename'});`,
    ...(builtins.length > 0 ? [`  for (const name of ${JSON.stringify(builtins)}) stageRequire(name);`] : []),
    '  run(module.exports, stageRequire, module, filename, dirname(filename));',
    '  return module.exports;',
    '}',
  ].join('\n');
}

/**
 * Stage 1's node builtins through process.getBuiltinModule (Node ≥ 20.16 /
 * 22.3) instead of static ESM imports: an ESM import of a builtin builds a
 * module facade that reads every export, which runs lazy getters (node:fs's
 * ReadStream loads fs streams, node:util's loads parse_args, MIME, perf
 * hooks): ~0.5 ms of a ~28 ms start. Older Nodes import them as before
 * (top-level await). The export list is the build machine's Node's; a name
 * another version lacks is undefined, which only matters if stage 1 used it.
 */
const builtinsWithoutFacade = {
  name: 'builtins-without-facade',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^node:[a-z_/]+$/ }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'builtin-get' } : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: 'builtin-get' }, async (args) => {
      const real = await import(args.path);
      const names = Object.keys(real).filter((name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name));
      const spec = JSON.stringify(args.path);
      return {
        contents: [
          `const m = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule(${spec}) : await import(${spec});`,
          'const get = (name) => m[name];',
          'export default m;',
          // Pure calls, so the names stage 1 does not use are dropped (a plain `m.name` read is kept: it might be a getter).
          ...names.map((name) => `export const ${name} = /* @__PURE__ */ get(${JSON.stringify(name)});`),
        ].join('\n'),
        loader: 'js',
      };
    });
  },
};

const srtPkg = '@anthropic-ai/sandbox-runtime';

/**
 * The changes made to srt in the bundle, each a replacement of code the build finds exactly once (a srt whose code
 * differs fails the build):
 * - the wait for its socat relay's socket (initializeLinuxNetworkBridge) looks every 5 ms instead of sleeping 0, 100,
 *   200 then 300 ms between looks: socat is never ready at the first two looks, so every jail helper slept 100 ms
 *   there. The budget is srt's own (600 ms);
 * - `whichSync` looks along PATH in the process, as `which` does (the first regular, executable file; a name with a
 *   slash is checked as it is), instead of running `which`: a process at srt's initialize and at every wrap.
 */
const srtChanges = [
  {
    file: /[\\/]sandbox-runtime[\\/]dist[\\/]sandbox[\\/]linux-sandbox-utils\.js$/,
    replace: [
      ['    const maxAttempts = 5;\n    for (let i = 0; i < maxAttempts; i++) {', '    const maxAttempts = 121;\n    for (let i = 0; i < maxAttempts; i++) {'],
      ['        await new Promise(resolve => setTimeout(resolve, i * 100));', '        await new Promise(resolve => setTimeout(resolve, 5));'],
    ],
  },
  {
    file: /[\\/]sandbox-runtime[\\/]dist[\\/]utils[\\/]which\.js$/,
    replace: [
      [
        `    const result = spawnSync('which', [bin], {\n        encoding: 'utf8',\n        stdio: ['ignore', 'pipe', 'ignore'],\n        timeout: 1000,\n    });\n    if (result.status === 0 && result.stdout) {\n        return result.stdout.trim();\n    }\n    return null;`,
        [
          "    const executable = (file) => { try { return statSync(file).isFile() && (accessSync(file, constants.X_OK), true); } catch { return false; } };",
          "    if (bin.includes('/')) return executable(bin) ? bin : null;",
          "    for (const dir of (process.env.PATH ?? '').split(':')) if (dir !== '' && executable(`${dir}/${bin}`)) return `${dir}/${bin}`;",
          '    return null;',
        ].join('\n'),
      ],
      ["import { spawnSync } from 'node:child_process';", "import { accessSync, constants, statSync } from 'node:fs';"],
    ],
  },
];
const srtPatches = {
  name: 'srt-changes',
  setup(pluginBuild) {
    for (const change of srtChanges) {
      pluginBuild.onLoad({ filter: change.file }, (args) => {
        let contents = readFileSync(args.path, 'utf8');
        for (const [from, to] of change.replace) {
          if (contents.split(from).length !== 2) throw new Error(`${args.path}: not the code the bundle changes (${JSON.stringify(from.slice(0, 80))})`);
          contents = contents.replace(from, to);
        }
        return { contents, loader: 'js' };
      });
    }
  },
};

/**
 * sandbox-runtime for the jail helper as one file beside the bridge (bridge/jail/srt-bundle.ts says how it is
 * used): the pinned srt's SandboxManager as a CommonJS function body, brotli, base64, after a header line naming the
 * srt it was built from. `import.meta.url` becomes a parameter the loader passes: the installed srt's
 * dist/sandbox/ module, so srt finds its vendored files (seccomp filter, apply-seccomp) in the installed package.
 * Any warning fails the build: one is how esbuild says a CommonJS bundle lost something (another `import.meta` use).
 */
async function buildJailSrt(outfile) {
  const pkgJson = JSON.parse(readFileSync(path.join(root, 'node_modules', srtPkg, 'package.json'), 'utf8'));
  if (pkgJson.version !== packageJson.dependencies[srtPkg]) {
    throw new Error(`${srtPkg} ${pkgJson.version} is installed, package.json pins ${packageJson.dependencies[srtPkg]}: run npm ci`);
  }
  const built = await build({
    ...common,
    define: { 'import.meta.url': '__hbSrtModuleUrl' },
    stdin: { contents: `export { SandboxManager } from '${srtPkg}/dist/sandbox/sandbox-manager.js';`, resolveDir: root, loader: 'js' },
    format: 'cjs',
    supported: { 'dynamic-import': false },
    // Optional, never on Linux: resolved at run time from the installed srt, as srt itself would.
    external: ['@microsoft/mxc-sdk'],
    plugins: [srtPatches],
    write: false,
  });
  if (built.warnings.length > 0) throw new Error(`${outfile}: esbuild warned: ${built.warnings.map((warning) => warning.text).join('; ')}`);
  const code = built.outputFiles[0].contents;
  const packed = packed64(code);
  writeFileSync(path.join(root, outfile), `harness-bridge jail-srt ${srtPkg}@${pkgJson.version} ${pkgJson.license}\n${packed}\n`);
  console.log(`${outfile}: ${(statSync(path.join(root, outfile)).size / 1024).toFixed(1)} KiB (${(code.length / 1024).toFixed(1)} KiB unpacked)`);
}

export async function buildEntries(names = []) {
  const selected = names.length === 0 ? entries : entries.filter((entry) => names.includes(entry.name));
  if (selected.length === 0) throw new Error(`no entry named ${names.join(', ')}; known: ${entries.map((e) => e.name).join(', ')}`);
  const results = [];
  for (const entry of selected) {
    const stages = await Promise.all((entry.embedded ?? []).map((stage) => embeddedStage(stage, entry.external)));
    await build({
      ...common,
      entryPoints: [entry.entryPoint],
      outfile: entry.outfile,
      format: 'esm',
      external: entry.external,
      // Stage 1 of the bridge has no CommonJS dependency: no require/__dirname shim to pay for at start.
      ...(entry.embedded ? {} : { banner: { js: banner } }),
      plugins: [zodEnglishOnly, ...stages.map((stage) => stage.esm), ...(entry.embedded ? [builtinsWithoutFacade] : [])],
    });
    if (entry.jailSrt) await buildJailSrt(entry.jailSrt.outfile);
    if (entry.snapshot) {
      await build({
        ...common,
        entryPoints: [entry.entryPoint],
        outfile: entry.snapshot.outfile,
        format: 'cjs',
        // A snapshot's module code runs once, at build time: every builtin through require, no import().
        supported: { 'dynamic-import': false },
        define: { ...common.define, __BRIDGE_SNAPSHOT__: 'true' },
        external: entry.external,
        plugins: [zodEnglishOnly, ...stages.map((stage) => stage.cjs)],
      });
      const snapshotBytes = statSync(new URL(entry.snapshot.outfile, `file://${root}/`)).size;
      console.log(`${entry.snapshot.outfile}: ${(snapshotBytes / 1024).toFixed(1)} KiB`);
    }
    for (const asset of entry.assets ?? []) copyFileSync(path.join(root, asset.from), path.join(root, asset.to));
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
