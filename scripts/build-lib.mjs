// Builds the package's library, lib/: the JS and .d.ts of the public entries'
// graph (tsconfig.build.json lists the entries; package.json `exports` names
// them), mirroring the source tree, so lib/host/index.js is host/index.ts.
// After tsc:
// - plain .mjs modules the graph imports or runs (bootstrap/bridge-command.mjs,
//   the fixture CLI) are copied beside their emitted neighbours, with their
//   .d.mts;
// - a run-time file lookup, `new URL('<relative>', import.meta.url)`, that
//   reaches a build output outside the mirrored tree (bootstrap/recipe.ts's
//   ../dist/bridge.mjs) is re-pointed so that from lib/ it reaches the same
//   package file (lib/ is one level deeper than the sources);
// - relative `./x.ts` specifiers in the .d.ts become `./x.js` (what every
//   TypeScript resolution mode, old or new, reads as `./x.d.ts`);
// - every relative specifier and lookup in lib/ is checked to name a file that
//   exists (or, for dist/, one that `npm run build` makes).
// Usage: node scripts/build-lib.mjs [--allow-type-errors]
//   --allow-type-errors: emit and finish even when tsc reports errors (they are
//   still printed, and the exit code is 0); for trying the package while the
//   tree is being fixed. Without it a type error fails the build.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
export const libDir = path.join(root, 'lib');
/** Source areas lib/ mirrors; anything else a lookup reaches is a package file outside lib/ (dist/). */
const mirrored = ['host', 'bootstrap', 'protocol'];
/** Build outputs the package ships that lib/ may look up at run time (made by esbuild.config.mjs). */
const shippedBuildOutputs = ['dist/bridge.mjs', 'dist/bridge-snapshot.cjs', 'dist/cli.mjs', 'dist/fixture-cli.mjs'];
const lookupPattern = /new URL\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g;

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

const posixRelative = (from, to) => {
  const rel = path.relative(from, to).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
};

function runTsc(allowTypeErrors) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const args = [tsc, '-p', path.join(root, 'tsconfig.build.json'), ...(allowTypeErrors ? ['--noEmitOnError', 'false'] : [])];
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  if (result.status === 0) return;
  const output = `${result.stdout}${result.stderr}`.trim();
  const errors = output.split('\n').filter((line) => /error TS\d+/.test(line)).length;
  if (!allowTypeErrors) throw new Error(`tsc -p tsconfig.build.json failed (${errors} errors):\n${output}`);
  console.warn(`lib/: emitted despite ${errors} type errors (--allow-type-errors)`);
}

/** A lib/ path → the source path it mirrors. */
const sourceOf = (libPath) => path.join(root, path.relative(libDir, libPath));
/** A source path → its mirror in lib/. */
const libOf = (sourcePath) => path.join(libDir, path.relative(root, sourcePath));

/** Copies a plain .mjs source (and its .d.mts) to its mirror in lib/; returns whether it was new. */
function copyModule(source, copied) {
  if (copied.has(source)) return false;
  if (!existsSync(source)) throw new Error(`lib/ needs ${path.relative(root, source)}, which does not exist`);
  mkdirSync(path.dirname(libOf(source)), { recursive: true });
  copyFileSync(source, libOf(source));
  const types = source.replace(/\.mjs$/, '.d.mts');
  if (existsSync(types)) copyFileSync(types, libOf(types));
  copied.add(source);
  return true;
}

const isRelative = (specifier) => specifier.startsWith('./') || specifier.startsWith('../');

/** Relative module specifiers in a file, with the span of each one's text (static, type-only and dynamic imports). */
function specifiers(text) {
  return ts.preProcessFile(text, true, true)
    .importedFiles.filter(({ fileName }) => isRelative(fileName))
    .map(({ fileName, pos }) => {
      // preProcessFile's pos is the opening quote's on some forms and the text's on others: find the text.
      const start = text.startsWith(fileName, pos) ? pos : text.startsWith(fileName, pos + 1) ? pos + 1 : -1;
      if (start < 0) throw new Error(`cannot locate the specifier ${fileName} at ${pos}`);
      return { fileName, pos: start, end: start + fileName.length };
    });
}

/** Rewrites [pos, end) spans of `text` from the end backwards. */
function splice(text, edits) {
  let out = text;
  for (const { pos, end, value } of [...edits].sort((a, b) => b.pos - a.pos)) out = out.slice(0, pos) + value + out.slice(end);
  return out;
}

export function buildLib({ allowTypeErrors = false } = {}) {
  rmSync(libDir, { recursive: true, force: true });
  runTsc(allowTypeErrors);
  const copied = new Set();

  // Plain .mjs modules: copy what the emitted graph imports, then what those import (transitively).
  let pending = walk(libDir).filter((file) => /\.(js|mjs|d\.ts|d\.mts)$/.test(file));
  while (pending.length > 0) {
    const next = [];
    for (const file of pending) {
      for (const { fileName } of specifiers(readFileSync(file, 'utf8'))) {
        if (!fileName.endsWith('.mjs')) continue;
        const source = path.resolve(path.dirname(sourceOf(file)), fileName);
        if (copyModule(source, copied)) next.push(libOf(source));
      }
    }
    pending = next;
  }

  // Run-time lookups: a product file is copied beside its emitted neighbour; a build output is re-pointed.
  for (const file of walk(libDir).filter((f) => /\.m?js$/.test(f))) {
    const text = readFileSync(file, 'utf8');
    let changed = false;
    const out = text.replace(lookupPattern, (whole, quote, relative) => {
      const target = path.resolve(path.dirname(sourceOf(file)), relative);
      const area = path.relative(root, target).split(path.sep)[0];
      if (mirrored.includes(area)) {
        copyModule(target, copied);
        return whole;
      }
      const packagePath = path.relative(root, target).split(path.sep).join('/');
      if (!shippedBuildOutputs.includes(packagePath)) {
        throw new Error(`${path.relative(root, file)} looks up ${packagePath}, which the package does not ship (${shippedBuildOutputs.join(', ')})`);
      }
      changed = true;
      return `new URL(${quote}${posixRelative(path.dirname(file), target)}${quote}, import.meta.url)`;
    });
    if (changed) writeFileSync(file, out);
  }

  // Declarations: ./x.ts → ./x.js (./x.mjs stays; it resolves to the copied x.d.mts).
  for (const file of walk(libDir).filter((f) => f.endsWith('.d.ts'))) {
    const text = readFileSync(file, 'utf8');
    const edits = specifiers(text)
      .filter(({ fileName }) => /\.ts$/.test(fileName) && !/\.d\.ts$/.test(fileName))
      .map(({ fileName, pos, end }) => ({ pos, end, value: fileName.replace(/\.ts$/, '.js') }));
    if (edits.length > 0) writeFileSync(file, splice(text, edits));
  }

  const problems = checkLib();
  if (problems.length > 0) throw new Error(`lib/ has dangling references:\n  ${problems.join('\n  ')}`);
  const files = walk(libDir);
  console.log(`lib/: ${files.length} files (${files.filter((f) => /\.d\.m?ts$/.test(f)).length} declarations, ${copied.size} copied .mjs modules)`);
  return { files: files.map((f) => path.relative(root, f)) };
}

/**
 * Every relative specifier in lib/ names a file in lib/ (a .d.ts's `./x.js` its
 * `./x.d.ts`, a `./x.mjs` its `./x.d.mts`), and every run-time lookup names a
 * file in lib/ or a shipped build output. Returns the broken ones.
 */
export function checkLib() {
  const problems = [];
  for (const file of walk(libDir)) {
    const where = path.relative(root, file);
    const text = readFileSync(file, 'utf8');
    const declaration = /\.d\.m?ts$/.test(file);
    if (declaration || /\.m?js$/.test(file)) {
      for (const { fileName } of specifiers(text)) {
        const target = path.resolve(path.dirname(file), fileName);
        const wanted = declaration ? target.replace(/\.js$/, '.d.ts').replace(/\.mjs$/, '.d.mts') : target;
        if (declaration && /\.ts$/.test(fileName) && !/\.d\.ts$/.test(fileName)) problems.push(`${where}: declaration imports ${fileName} (.ts)`);
        else if (!existsSync(wanted)) problems.push(`${where}: ${fileName} (${path.relative(root, wanted)} missing)`);
      }
    }
    if (!/\.m?js$/.test(file)) continue;
    for (const match of text.matchAll(lookupPattern)) {
      const target = path.resolve(path.dirname(file), match[2]);
      const packagePath = path.relative(root, target).split(path.sep).join('/');
      if (packagePath.startsWith('lib/') ? !existsSync(target) : !shippedBuildOutputs.includes(packagePath)) {
        problems.push(`${where}: looks up ${match[2]} (${packagePath})`);
      }
    }
  }
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  buildLib({ allowTypeErrors: process.argv.includes('--allow-type-errors') });
}
