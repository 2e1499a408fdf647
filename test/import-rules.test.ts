// The layout's import rules, read from the sources themselves (every static
// import/export, type-only ones included, and every import()):
// - protocol/ imports nothing of ours outside protocol/;
// - bridge/ and bootstrap/ import only themselves and protocol/;
// - host/ never imports bridge/ (it reaches the daemon over the socket only);
// - outside host/channel/, the channel is reached through its index.ts only;
// - no product file imports test/ or scripts/;
// - no import cycle among product files;
// - every package a product file imports is declared in package.json;
// - the published entries (package.json `exports`) reach only dependencies and
//   peers: no devDependency (not @ai-sdk/harness, not ai), type-only imports
//   included, since the shipped .d.ts carry them. Code that only ships bundled
//   (the bridge, the CLI) may use devDependencies: esbuild inlines them.
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

/**
 * The one way into bridge/ from host/: the network policy engine. The host's end of a sandbox's egress tunnel
 * (host/reach/egress-tunnel.ts, docs/remote-providers.md#egress-tunnel) decides each tunnelled connection with the
 * bridge's own EgressProxy, so a tunnelled and a local CLI are policed by the same code. Only node builtins below it.
 */
const sharedPolicyEngine: ReadonlySet<string> = new Set(['bridge/jail/egress-proxy.ts', 'bridge/jail/bridge-ports.ts', 'bridge/jail/named-endpoints.ts', 'bridge/jail/compiled-policy.ts']);

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
function readImports(files: readonly string[]): { edges: Edge[]; packages: Map<string, string[]>; lookups: Edge[] } {
  const edges: Edge[] = [];
  const lookups: Edge[] = [];
  const packages = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    // Files a module reads or runs at run time, next to itself (the fixture CLI): they ship with it.
    for (const match of text.matchAll(/new URL\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g)) {
      lookups.push({ from: file, to: relative(root, resolve(root, dirname(file), match[2]!)) });
    }
    const { importedFiles } = ts.preProcessFile(text, true, true);
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
  return { edges, packages, lookups };
}

type Manifest = Record<string, Record<string, string | { types: string; default: string }> | undefined>;

/** The source file behind each `exports` entry: ./lib/host/index.js → host/index.ts. */
function exportedSources(manifest: Manifest): string[] {
  return Object.entries(manifest.exports ?? {})
    .filter(([key]) => key !== './package.json')
    .map(([, target]) => (typeof target === 'string' ? target : target.default).replace(/^\.\/lib\//, '').replace(/\.js$/, '.ts'));
}

/** Every product file reachable from `roots` over relative imports and run-time lookups. */
function reachable(roots: readonly string[], edges: readonly Edge[]): Set<string> {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const seen = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...(next.get(file) ?? []));
  }
  return seen;
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
  const { edges, packages, lookups } = readImports(files);

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
      .filter(({ from, to }) => !(from === 'host/reach/egress-tunnel.ts' && sharedPolicyEngine.has(to)))
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

  // What the bridge bundle builds at start (docs/bridge-internals.md#memory): esbuild drops the zod
  // functions nothing reaches only through a namespace import; `import { z }` keeps all of zod.
  it('bridge/ and protocol/ import zod as a namespace (import * as z from zod), never { z }', () => {
    const named = files.filter(
      (file) => ['bridge', 'protocol'].includes(areaOf(file)) && /^import\s+\{\s*z\s*\}\s+from\s+'zod'/m.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(named).toEqual([]);
  });

  // Every schema a bundled module defines is built at start, used or not.
  it('bridge/ takes values from protocol/v1 through their own modules (the index builds every frame schema); types may come from the index', () => {
    const throughIndex = files.filter(
      (file) => areaOf(file) === 'bridge' && /^import\s+(?!type\b)[^;]*?from\s+'[^']*protocol\/v1\/index\.ts'/m.test(readFileSync(join(root, file), 'utf8')),
    );
    expect(throughIndex).toEqual([]);
  });

  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
  const runtime = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
  const declared = new Set([...runtime, ...Object.keys(manifest.devDependencies ?? {})]);

  it('every package a product file imports is declared in package.json', () => {
    const undeclared = [...packages]
      .filter(([name]) => !declared.has(name) && !optionalPackages.has(name))
      .map(([name, users]) => `${name} (${users.slice(0, 3).join(', ')})`);
    expect(undeclared).toEqual([]);
  });

  it('the published entries (package.json exports) import only dependencies and peers: no devDependency, type-only imports included', () => {
    const roots = exportedSources(manifest);
    expect(roots, 'the exports map names the host kit, the adapters, adapter-kit, bootstrap, protocol and testing').toEqual(
      expect.arrayContaining(['host/index.ts', 'host/adapters/claude-code/index.ts', 'host/adapter-kit/index.ts', 'bootstrap/index.ts', 'protocol/index.ts', 'host/testing/index.ts']),
    );
    for (const entry of roots) expect(files, `${entry} exists`).toContain(entry);
    const graph = reachable(roots, [...edges, ...lookups]);
    expect(graph.size, 'the walk reaches the kit').toBeGreaterThan(100);
    expect([...graph].filter((file) => areaOf(file) === 'bridge' && !sharedPolicyEngine.has(file)), 'the kit reaches the daemon over the socket only').toEqual([]);
    const engineImports = edges.filter(({ from }) => sharedPolicyEngine.has(from)).map(({ to }) => to);
    expect(engineImports.filter((to) => !sharedPolicyEngine.has(to) && areaOf(to) !== 'protocol'), 'the shared policy engine stays self-contained').toEqual([]);
    const devOnly = [...packages]
      .flatMap(([name, users]) => users.filter((file) => graph.has(file)).map((file) => ({ name, file })))
      .filter(({ name }) => !runtime.has(name) && !optionalPackages.has(name))
      .map(({ name, file }) => `${name} (${file})`);
    expect(devOnly.sort()).toEqual([]);
    // The AI SDK's agent layer is the user's choice, never our run-time need.
    for (const name of ['@ai-sdk/harness', 'ai']) expect(runtime.has(name), `${name} is not a dependency or peer`).toBe(false);
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
