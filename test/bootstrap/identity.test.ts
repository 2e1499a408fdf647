// Recipe identity: stable for the same content (any key order, any file
// order, any process), different for any change of a byte, a path, a command
// or the command order; a golden value catches accidental encoding changes.
// Property runs are seeded (FC_SEED overrides) and print the seed on failure.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineBootstrapRecipe, recipeIdentity } from '../../bootstrap/index.ts';
import type { HarnessV1Bootstrap } from '../../protocol/harness-v1/index.ts';

const seed = Number(process.env.FC_SEED ?? 20_240_611);
const numRuns = 200;
const repoRoot = resolve(import.meta.dirname, '../..');

function property<T>(name: string, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => boolean | void): void {
  it(name, () => {
    try {
      fc.assert(fc.property(arbitrary, predicate), { seed, numRuns });
    } catch (error) {
      console.log(`[fast-check] "${name}" failed with seed ${seed} (rerun: FC_SEED=${seed})`);
      throw error;
    }
  });
}

const text = fc.string({ unit: 'binary', maxLength: 40 });
const pathArb = fc.string({ unit: 'binary', minLength: 1, maxLength: 20 });
const fileArb = fc.record({ path: pathArb, content: text });
const commandArb = fc.record({ command: text, workingDirectory: fc.option(text, { nil: undefined }) }, { requiredKeys: ['command'] });
const recipeArb = fc.record({
  harnessId: fc.constantFrom('claude-code', 'codex', 'pi'),
  bootstrapDir: text,
  files: fc.uniqueArray(fileArb, { selector: (file) => file.path, maxLength: 5 }),
  commands: fc.array(commandArb, { maxLength: 4 }),
});

type Recipe = { harnessId: string; bootstrapDir: string; files: Array<{ path: string; content: string }>; commands: Array<{ command: string; workingDirectory?: string }> };

/** Same recipe, every object rebuilt with its keys inserted in a shuffled order. */
function reorderKeys<T extends object>(value: T, order: number[]): T {
  const keys = Object.keys(value);
  const shuffled = keys.map((key, i) => ({ key, rank: order[i % order.length]! * 31 + i })).sort((a, b) => a.rank - b.rank);
  const out: Record<string, unknown> = {};
  for (const { key } of shuffled) {
    const inner = (value as Record<string, unknown>)[key];
    out[key] = Array.isArray(inner) ? inner.map((item) => (typeof item === 'object' && item ? reorderKeys(item, order) : item)) : inner;
  }
  return out as T;
}

function withCommands(recipe: Recipe, commands: Recipe['commands']): Recipe {
  return { ...recipe, commands };
}

describe('recipeIdentity', () => {
  it('is 64 lowercase hex characters', () => {
    expect(recipeIdentity({ harnessId: 'x', bootstrapDir: 'd', files: [], commands: [] })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches the golden value for a fixed recipe (an encoding change must fail here, loudly)', () => {
    const recipe = defineBootstrapRecipe({
      harnessId: 'claude-code',
      bootstrapDir: '.harness-bridge/claude-code',
      files: [
        { path: '.harness-bridge/claude-code/bridge.mjs', content: 'console.log("bridge");\n' },
        { path: '.harness-bridge/claude-code/a b/ü.txt', content: 'żółw 🐢\n' },
      ],
      commands: [{ command: 'node --version' }, { command: 'npm i -g x', workingDirectory: '/opt' }],
    });
    expect(recipeIdentity(recipe)).toBe('f5b4277fbe7cb13e36c7537b3859cc1238f1bd1cad686f2b289e5d68ce1b496f');
  });

  property('same content in any key order and any file order gives the same identity',
    fc.tuple(recipeArb, fc.array(fc.nat(100), { minLength: 1, maxLength: 8 }), fc.nat()),
    ([recipe, order, rotation]) => {
      const files = recipe.files.map((_, i, all) => all[(i + rotation) % all.length]!);
      const shuffled = reorderKeys({ ...recipe, files }, order);
      expect(recipeIdentity(shuffled)).toBe(recipeIdentity(recipe));
    });

  property('changing one byte of one file changes the identity',
    fc.tuple(recipeArb.filter((r) => r.files.length > 0), fc.nat(), fc.nat(), fc.integer({ min: 1, max: 0x7f })),
    ([recipe, pick, position, delta]) => {
      const index = pick % recipe.files.length;
      const file = recipe.files[index]!;
      const chars = [...file.content];
      const at = position % Math.max(chars.length, 1);
      // Replace one code point with a different ASCII one (or add one to an empty file).
      const replacement = String.fromCodePoint(chars[at] === String.fromCodePoint(delta) ? (delta % 0x7f) + 1 : delta);
      const content = chars.length === 0 ? replacement : [...chars.slice(0, at), replacement, ...chars.slice(at + 1)].join('');
      fc.pre(content !== file.content);
      const files = recipe.files.map((f, i) => (i === index ? { ...f, content } : f));
      expect(recipeIdentity({ ...recipe, files })).not.toBe(recipeIdentity(recipe));
    });

  property('changing one path changes the identity',
    fc.tuple(recipeArb.filter((r) => r.files.length > 0), fc.nat(), pathArb),
    ([recipe, pick, newPath]) => {
      const index = pick % recipe.files.length;
      fc.pre(!recipe.files.some((f) => f.path === newPath));
      const files = recipe.files.map((f, i) => (i === index ? { ...f, path: newPath } : f));
      expect(recipeIdentity({ ...recipe, files })).not.toBe(recipeIdentity(recipe));
    });

  property('changing, adding or removing a command changes the identity',
    fc.tuple(recipeArb, commandArb, fc.nat()),
    ([recipe, extra, pick]) => {
      const base = recipeIdentity(recipe);
      expect(recipeIdentity(withCommands(recipe, [...recipe.commands, extra]))).not.toBe(base);
      if (recipe.commands.length > 0) {
        const index = pick % recipe.commands.length;
        expect(recipeIdentity(withCommands(recipe, recipe.commands.filter((_, i) => i !== index)))).not.toBe(base);
        const changed = recipe.commands.map((c, i) => (i === index ? { ...c, command: `${c.command} ` } : c));
        expect(recipeIdentity(withCommands(recipe, changed))).not.toBe(base);
      }
    });

  property('reordering two different commands changes the identity',
    fc.tuple(recipeArb.filter((r) => r.commands.length >= 2), fc.nat(), fc.nat()),
    ([recipe, a, b]) => {
      const i = a % recipe.commands.length;
      const j = b % recipe.commands.length;
      const [ci, cj] = [recipe.commands[i]!, recipe.commands[j]!];
      fc.pre(ci.command !== cj.command || ci.workingDirectory !== cj.workingDirectory);
      const swapped = recipe.commands.map((c, k) => (k === i ? cj : k === j ? ci : c));
      expect(recipeIdentity(withCommands(recipe, swapped))).not.toBe(recipeIdentity(recipe));
    });

  property('moving text across a field boundary changes the identity (length prefixes)',
    fc.tuple(text, text, fc.nat()),
    ([left, right, cut]) => {
      const joined = left + right;
      const at = cut % (joined.length + 1);
      fc.pre(at !== left.length);
      const a = { harnessId: 'h', bootstrapDir: 'd', files: [{ path: `p${left}`, content: right }], commands: [] };
      const b = { harnessId: 'h', bootstrapDir: 'd', files: [{ path: `p${joined.slice(0, at)}`, content: joined.slice(at) }], commands: [] };
      expect(recipeIdentity(b)).not.toBe(recipeIdentity(a));
    });

  it('absent and empty working directories differ', () => {
    const base = { harnessId: 'h', bootstrapDir: 'd', files: [] };
    expect(recipeIdentity({ ...base, commands: [{ command: 'x' }] })).not.toBe(recipeIdentity({ ...base, commands: [{ command: 'x', workingDirectory: '' }] }));
  });

  it('encodes exactly as documented: length-prefixed fields, version folded in, files by code unit (B < a < z < é)', () => {
    const files = [{ path: 'a', content: '1' }, { path: 'é', content: '3' }, { path: 'B', content: '2' }, { path: 'z', content: '4' }];
    const recipe: HarnessV1Bootstrap = { harnessId: 'h', bootstrapDir: 'd', files, commands: [{ command: 'c' }, { command: 'w', workingDirectory: 'x' }] };
    const f = (value: string) => `${Buffer.byteLength(value)}:${value}`;
    // localeCompare would give a, B, é, z; code units give B, a, z, é.
    const encoding = [
      'harness-bridge/bootstrap-recipe', '1', 'h', 'd', '4', 'B', '2', 'a', '1', 'z', '4', 'é', '3', '2', 'c', '-', 'w', '+', 'x',
    ].map(f).join('');
    expect(recipeIdentity(recipe)).toBe(createHash('sha256').update(encoding, 'utf8').digest('hex'));
    expect(recipeIdentity({ ...recipe, files: [...files].reverse() })).toBe(recipeIdentity(recipe));
  });

  it('is computed from what the recipe holds when asked: a plain recipe changed in place gets a new identity; a frozen one cannot change and keeps its own', () => {
    const plain = { harnessId: 'h', bootstrapDir: 'd', files: [{ path: 'f', content: 'one' }], commands: [{ command: 'c' }] };
    const before = recipeIdentity(plain);
    plain.files[0]!.content = 'two';
    expect(recipeIdentity(plain)).not.toBe(before);
    expect(recipeIdentity(plain)).toBe(recipeIdentity({ ...plain, files: [{ path: 'f', content: 'two' }] }));
    plain.commands.push({ command: 'more' });
    expect(recipeIdentity(plain)).toBe(recipeIdentity(structuredClone(plain)));

    const frozen = defineBootstrapRecipe({ harnessId: 'h', bootstrapDir: 'd', files: [{ path: 'f', content: 'ünï\u{1F600}' }], commands: [{ command: 'c' }] });
    const first = recipeIdentity(frozen);
    expect(Object.isFrozen(frozen.files[0])).toBe(true);
    expect(recipeIdentity(frozen)).toBe(first);
    expect(first).toBe(recipeIdentity(structuredClone(frozen) as HarnessV1Bootstrap));
  });

  it('is the same in another process', async () => {
    const samples = fc.sample(recipeArb, { seed, numRuns: 25 });
    const dir = await mkdtemp(join(tmpdir(), 'hb-identity-'));
    try {
      const input = join(dir, 'recipes.json');
      await writeFile(input, JSON.stringify(samples));
      const script = join(dir, 'identities.mts');
      await writeFile(
        script,
        `import { readFileSync } from 'node:fs';
import { recipeIdentity } from ${JSON.stringify(join(repoRoot, 'bootstrap/identity.ts'))};
const recipes = JSON.parse(readFileSync(process.argv[2], 'utf8'));
process.stdout.write(JSON.stringify(recipes.map(recipeIdentity)));
`,
      );
      const child = spawnSync(join(repoRoot, 'node_modules/.bin/tsx'), [script, input], { encoding: 'utf8', timeout: 30_000 });
      expect(child.status, child.stderr).toBe(0);
      // JSON drops `workingDirectory: undefined` keys; the identity treats absent and undefined alike.
      expect(JSON.parse(child.stdout)).toEqual(samples.map((recipe: Recipe) => recipeIdentity(recipe)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
