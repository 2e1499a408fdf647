// The layout's import rules, read from the sources themselves (every static
// import/export, type-only ones included, and every import()):
// - protocol/ imports nothing of ours outside protocol/;
// - bridge/ and bootstrap/ import only themselves and protocol/;
// - host/ never imports bridge/ (it reaches the daemon over the socket only);
// - outside host/channel/, the channel is reached through its index.ts only;
// - no product file imports test/ or scripts/;
// - no import cycle among product files;
// - every package a product file imports is a dependency in package.json.
// Files over 400 lines are listed as a warning (a second concept may hide inside).
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const productDirs = ['protocol', 'bridge', 'bootstrap', 'host'] as const;
type Area = (typeof productDirs)[number];

/** Which areas each area may import from (itself included). */
const allowed: Record<Area, readonly Area[]> = {
  protocol: ['protocol'],
  bridge: ['bridge', 'protocol'],
  bootstrap: ['bootstrap', 'protocol'],
  host: ['host', 'protocol', 'bootstrap'],
};

/** Optional native modules loaded at run time only when present (the bundles mark them external). */
const optionalPackages = new Set(['node-pty', 'bufferutil', 'utf-8-validate']);

function productFiles(): string[] {
  return productDirs.flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name) && !/\.d\.m?ts$/.test(entry.name))
      .map((entry) => relative(root, join(entry.parentPath, entry.name))),
  );
}

type Edge = { from: string; to: string };

/** Every relative import of `files` resolved to a repo path, and every bare specifier. */
function readImports(files: readonly string[]): { edges: Edge[]; packages: Map<string, string[]> } {
  const edges: Edge[] = [];
  const packages = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (fileName.startsWith('.')) {
        edges.push({ from: file, to: relative(root, resolve(root, dirname(file), fileName)) });
        continue;
      }
      if (fileName.startsWith('node:') || builtinModules.includes(fileName)) continue;
      const name = fileName.startsWith('@') ? fileName.split('/').slice(0, 2).join('/') : fileName.split('/')[0]!;
      packages.set(name, [...(packages.get(name) ?? []), file]);
    }
  }
  return { edges, packages };
}

function areaOf(path: string): string {
  return path.split('/')[0]!;
}

/** Strongly connected components with more than one file (or a file importing itself): Tarjan. */
function cycles(nodes: readonly string[], edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>(nodes.map((node) => [node, []]));
  for (const { from, to } of edges) if (next.has(to)) next.get(from)!.push(to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node)!) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || next.get(node)!.includes(node)) found.push(component.sort());
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

describe('import rules', () => {
  const files = productFiles();
  const { edges, packages } = readImports(files);

  it('reads the whole product tree (and warns of files over 400 lines)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(300);
    const long = files
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 400)
      .sort((a, b) => b.lines - a.lines);
    if (long.length > 0) console.warn(`files over 400 lines:\n${long.map(({ file, lines }) => `  ${lines} ${file}`).join('\n')}`);
  });

  it('each area imports only the areas it may (protocol ← bridge, bootstrap ← host; host never imports bridge)', () => {
    const broken = edges
      .filter(({ from, to }) => !(allowed[areaOf(from) as Area] as readonly string[]).includes(areaOf(to)))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(broken.sort()).toEqual([]);
  });

  it('outside host/channel/, the channel is imported through its entry (host/channel/index.ts) only', () => {
    const broken = edges
      .filter(({ from, to }) => to.startsWith('host/channel/') && to !== 'host/channel/index.ts' && !from.startsWith('host/channel/'))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(broken).toEqual([]);
  });

  it('no product file imports test/ or scripts/', () => {
    const broken = edges.filter(({ to }) => ['test', 'scripts'].includes(areaOf(to))).map(({ from, to }) => `${from} -> ${to}`);
    expect(broken).toEqual([]);
  });

  it('every relative import names a file that exists', () => {
    const known = new Set(files);
    const dangling = edges
      .filter(({ to }) => !known.has(to) && !/\.d\.m?ts$/.test(to) && !to.endsWith('package.json'))
      .map(({ from, to }) => `${from} -> ${to}`);
    expect(dangling).toEqual([]);
  });

  it('no import cycles among product files (type-only imports count)', () => {
    expect(cycles(files, edges)).toEqual([]);
  });

  it('every package a product file imports is a dependency (or peer) in package.json', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    const undeclared = [...packages]
      .filter(([name]) => !declared.has(name) && !optionalPackages.has(name))
      .map(([name, users]) => `${name} (${users.slice(0, 3).join(', ')})`);
    expect(undeclared).toEqual([]);
  });
});

describe('the cycle finder', () => {
  it('finds a two-file cycle and a self-import, and nothing in a chain', () => {
    const found = cycles(
      ['a', 'b', 'c', 'd'],
      [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
        { from: 'c', to: 'c' },
        { from: 'b', to: 'd' },
      ],
    );
    expect(found).toEqual([['a', 'b'], ['c']]);
  });
});
