// A recipe's identity: SHA-256 (64 hex) over a canonical byte encoding. Every
// field is length-prefixed (byte length, ':', UTF-8 bytes), so no content can
// fake a field boundary; the recipe-format version is folded in; files are
// sorted by path by UTF-16 code unit (never a locale compare); commands keep
// their order. Same content → same identity in any process on any machine.
import { createHash, type Hash } from 'node:crypto';
import type { HarnessV1Bootstrap } from '../protocol/harness-v1/index.ts';
import { bootstrapRecipeFormatVersion } from './recipe.ts';

const domain = 'harness-bridge/bootstrap-recipe';

// Strings go into the hash as they are: a Buffer copy of each file (the bridge bundle is ~220 KiB) would live
// until the next GC, and in a host starting many sessions those copies fragment the native heap.
function field(hash: Hash, value: string): void {
  hash.update(`${Buffer.byteLength(value, 'utf8')}:`);
  hash.update(value, 'utf8');
}

/** A recipe from defineBootstrapRecipe is frozen through and through: its identities cannot change, so each is computed once. */
function frozen(recipe: HarnessV1Bootstrap): boolean {
  return (
    Object.isFrozen(recipe) &&
    Object.isFrozen(recipe.files) &&
    Object.isFrozen(recipe.commands) &&
    recipe.files.every((file) => Object.isFrozen(file)) &&
    recipe.commands.every((command) => Object.isFrozen(command))
  );
}

/** The identity of a frozen recipe, computed once (`known` holds each kind's). */
function memoized(known: WeakMap<HarnessV1Bootstrap, string>, recipe: HarnessV1Bootstrap, compute: () => string): string {
  const hit = known.get(recipe);
  if (hit !== undefined) return hit;
  const identity = compute();
  if (frozen(recipe)) known.set(recipe, identity);
  return identity;
}

const identities = new WeakMap<HarnessV1Bootstrap, string>();
const sdkIdentities = new WeakMap<HarnessV1Bootstrap, string>();

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function recipeIdentity(recipe: HarnessV1Bootstrap): string {
  return memoized(identities, recipe, () => canonicalIdentity(recipe));
}

function canonicalIdentity(recipe: HarnessV1Bootstrap): string {
  const hash = createHash('sha256');
  field(hash, domain);
  field(hash, String(bootstrapRecipeFormatVersion));
  field(hash, recipe.harnessId);
  field(hash, recipe.bootstrapDir);
  const files = [...recipe.files].sort((a, b) => byCodeUnit(a.path, b.path) || byCodeUnit(a.content, b.content));
  field(hash, String(files.length));
  for (const file of files) {
    field(hash, file.path);
    field(hash, file.content);
  }
  field(hash, String(recipe.commands.length));
  for (const command of recipe.commands) {
    field(hash, command.command);
    // Absent and empty working directories differ: mark presence explicitly.
    if (command.workingDirectory === undefined) field(hash, '-');
    else {
      field(hash, '+');
      field(hash, command.workingDirectory);
    }
  }
  return hash.digest('hex');
}

/**
 * The identity @ai-sdk/harness 1.0.x gives the same recipe (its HarnessAgent
 * names its applied-marker `<bootstrapDir>/.bootstrap-<this>.ok`): SHA-256 over
 * harnessId, bootstrapDir, the files sorted by `localeCompare` of their paths
 * (path, content), JSON of the commands and its recipe-schema version 1, each
 * followed by a NUL; the first 8 bytes, in hex. Kept byte-compatible so an
 * apply by either side is seen by the other (apply.ts); ours stays the
 * canonical identity (length-prefixed, locale-free).
 */
export function sdkRecipeIdentity(recipe: HarnessV1Bootstrap): string {
  return memoized(sdkIdentities, recipe, () => {
    const hash = createHash('sha256');
    const push = (value: string) => hash.update(value, 'utf8').update('\0');
    push(recipe.harnessId);
    push(recipe.bootstrapDir);
    for (const file of [...recipe.files].sort((a, b) => a.path.localeCompare(b.path))) {
      push(file.path);
      push(file.content);
    }
    push(JSON.stringify(recipe.commands));
    push('1');
    return hash.digest().subarray(0, 8).toString('hex');
  });
}

/** Bytes the recipe carries (file paths and contents, commands), for reporting. */
export function recipeBytes(recipe: HarnessV1Bootstrap): number {
  let total = 0;
  for (const file of recipe.files) total += Buffer.byteLength(file.path) + Buffer.byteLength(file.content);
  for (const command of recipe.commands) total += Buffer.byteLength(command.command) + Buffer.byteLength(command.workingDirectory ?? '');
  return total;
}
