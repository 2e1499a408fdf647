// Recipes as plain data: defineBootstrapRecipe validates and freezes one, and
// bridgeRecipe builds the standard one (the one-file bridge under
// bootstrapDir plus an adapter's extra files and install commands). No
// sandbox I/O here; the identity lives in identity.ts, applying in apply.ts.
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HarnessV1Bootstrap, HarnessV1BootstrapCommand, HarnessV1BootstrapFile } from '../protocol/harness-v1/index.ts';
import { BRIDGE_JAIL_SRT, BRIDGE_SNAPSHOT, snapshotBuildCommand } from './bridge-command.mjs';
import { BootstrapError } from './errors.ts';

/** Folded into every identity; bump it when the meaning or encoding of a recipe changes. */
export const bootstrapRecipeFormatVersion = 1;

/** Name of the bridge bundle inside bootstrapDir. */
export const bridgeFileName = 'bridge.mjs';

/** Recipes ship text files; anything bigger than this is a mistake (the bridge bundle is < 500 KB). */
export const maxRecipeFileBytes = 16 * 1024 * 1024;

const safeHarnessId = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isWellFormed(value: string): boolean {
  return !loneSurrogate.test(value);
}

function invalid(message: string): never {
  throw new BootstrapError('invalid-recipe', message);
}

function checkText(value: unknown, what: string): string {
  if (typeof value !== 'string') invalid(`${what} must be a string`);
  // A lone surrogate would encode as U+FFFD and collide with a real one in the identity.
  if (!isWellFormed(value)) invalid(`${what} is not well-formed UTF-16`);
  if (value.includes('\0')) invalid(`${what} must not contain NUL`);
  return value;
}

/** Validates and freezes a recipe (a copy: later changes to the input do not leak in). */
export function defineBootstrapRecipe(recipe: {
  harnessId: string;
  bootstrapDir: string;
  files: ReadonlyArray<HarnessV1BootstrapFile>;
  commands: ReadonlyArray<HarnessV1BootstrapCommand>;
}): HarnessV1Bootstrap {
  const harnessId = checkText(recipe.harnessId, 'harnessId');
  if (!safeHarnessId.test(harnessId)) invalid(`harnessId ${JSON.stringify(harnessId)} must match ${safeHarnessId}`);
  const bootstrapDir = checkText(recipe.bootstrapDir, 'bootstrapDir');
  if (bootstrapDir.length === 0) invalid('bootstrapDir must not be empty');
  const seen = new Set<string>();
  const files = recipe.files.map((file, i) => {
    const path = checkText(file.path, `files[${i}].path`);
    const content = typeof file.content === 'string' ? file.content : invalid(`files[${i}].content must be a string`);
    if (!isWellFormed(content)) invalid(`files[${i}].content is not well-formed UTF-16`);
    if (path.length === 0) invalid(`files[${i}].path must not be empty`);
    if (seen.has(path)) invalid(`files[${i}].path ${JSON.stringify(path)} appears twice`);
    if (Buffer.byteLength(content) > maxRecipeFileBytes) invalid(`files[${i}] is larger than ${maxRecipeFileBytes} bytes`);
    seen.add(path);
    return Object.freeze({ path, content });
  });
  const commands = recipe.commands.map((command, i) => {
    const text = checkText(command.command, `commands[${i}].command`);
    if (command.workingDirectory === undefined) return Object.freeze({ command: text });
    return Object.freeze({ command: text, workingDirectory: checkText(command.workingDirectory, `commands[${i}].workingDirectory`) });
  });
  return Object.freeze({ harnessId, bootstrapDir, files: Object.freeze(files), commands: Object.freeze(commands) });
}

/**
 * Default bootstrapDir: `.harness-bridge/<harnessId>` under the sandbox's
 * default working directory. Not /tmp: some providers mount /tmp as tmpfs, so
 * it never reaches a snapshot and every session would reinstall. Relative
 * unless a working directory is given: relative paths resolve against the
 * sandbox's default working directory (SandboxSession semantics), which keeps
 * the identity the same across providers whose base directories differ.
 */
export function defaultBootstrapDir(harnessId: string, defaultWorkingDirectory?: string): string {
  const relative = posix.join('.harness-bridge', harnessId);
  return defaultWorkingDirectory === undefined ? relative : posix.join(defaultWorkingDirectory, relative);
}

/** Where the built bridge bundle sits in this repo (dist/bridge.mjs). */
export function defaultBridgeFile(): string {
  return fileURLToPath(new URL('../dist/bridge.mjs', import.meta.url));
}

/** The bundles beside the bridge, as last read, by path: a harness per request reads and decodes ~400 KiB otherwise. */
const sources = new Map<string, { stamp: string; text: string }>();

/** A file's text, read again only when its inode, size or times changed. */
async function readSource(path: string): Promise<string> {
  const info = await stat(path, { bigint: true });
  const stamp = `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
  const known = sources.get(path);
  if (known?.stamp === stamp) return known.text;
  const text = await readFile(path, 'utf8');
  if (sources.size >= 16) sources.clear();
  sources.set(path, { stamp, text });
  return text;
}

/**
 * The standard recipe: the bridge bundle at `<bootstrapDir>/bridge.mjs`, then
 * the adapter's extra files and install commands. A relative extra-file path is
 * placed under bootstrapDir (an adapter cannot know where that is: the harness
 * settings choose it), like the bridge file; an absolute one is kept. `bridgeFile`
 * is read on the host when the recipe is built; `bridgeSource` skips the read.
 *
 * Beside the bridge also goes sandbox-runtime bundled for the jail helper (`jail-srt.txt`, read next to
 * `bridgeFile`, or given as `jailSrtSource`; `null` leaves it out): without it a jail helper imports the
 * installed sandbox-runtime, about 0.1 s slower (bridge/jail/srt-bundle.ts). A bridge file built
 * without one beside it (a custom build) gets none.
 *
 * `startupSnapshot`: also the snapshot script beside the bridge (read next to
 * `bridgeFile`, dist/bridge-snapshot.cjs, or given as `snapshotSource`) and a
 * first command that builds the bridge's V8 startup snapshot in the sandbox with
 * its `node` (docs/bridge-internals.md#startup-snapshot): a faster start for
 * more memory per bridge. A bridge launched with another node binary, or where
 * the build failed, starts without it.
 */
export async function bridgeRecipe(options: {
  harnessId: string;
  bootstrapDir?: string;
  defaultWorkingDirectory?: string;
  bridgeFile?: string;
  bridgeSource?: string;
  startupSnapshot?: boolean;
  snapshotSource?: string;
  jailSrtSource?: string | null;
  extraFiles?: ReadonlyArray<HarnessV1BootstrapFile>;
  commands?: ReadonlyArray<HarnessV1BootstrapCommand>;
}): Promise<HarnessV1Bootstrap> {
  const bootstrapDir = options.bootstrapDir ?? defaultBootstrapDir(options.harnessId, options.defaultWorkingDirectory);
  let bridgeSource = options.bridgeSource;
  const bridgeFile = options.bridgeFile ?? defaultBridgeFile();
  if (bridgeSource === undefined) {
    try {
      bridgeSource = await readSource(bridgeFile);
    } catch (error) {
      throw new BootstrapError('bridge-file-missing', `cannot read the bridge bundle ${bridgeFile} (run npm run build)`, { cause: error });
    }
  }
  let snapshotSource = options.snapshotSource;
  if (options.startupSnapshot === true && snapshotSource === undefined) {
    const script = join(dirname(bridgeFile), BRIDGE_SNAPSHOT.script);
    try {
      snapshotSource = await readSource(script);
    } catch (error) {
      throw new BootstrapError('bridge-file-missing', `startupSnapshot: cannot read the snapshot script ${script} beside the bridge bundle (run npm run build)`, { cause: error });
    }
  }
  let jailSrtSource = options.jailSrtSource;
  if (jailSrtSource === undefined) jailSrtSource = await readSource(join(dirname(bridgeFile), BRIDGE_JAIL_SRT)).catch(() => null);
  const snapshot =
    options.startupSnapshot !== true || snapshotSource === undefined
      ? undefined
      : {
          file: { path: posix.join(bootstrapDir, BRIDGE_SNAPSHOT.script), content: snapshotSource },
          command: { command: `export HB_NODE=node HB_FILE=${bridgeFileName}; ${snapshotBuildCommand()}`, workingDirectory: bootstrapDir },
        };
  return defineBootstrapRecipe({
    harnessId: options.harnessId,
    bootstrapDir,
    files: [
      { path: posix.join(bootstrapDir, bridgeFileName), content: bridgeSource },
      ...(jailSrtSource === null ? [] : [{ path: posix.join(bootstrapDir, BRIDGE_JAIL_SRT), content: jailSrtSource }]),
      ...(snapshot ? [snapshot.file] : []),
      ...(options.extraFiles ?? []).map((file) => (file.path.startsWith('/') ? file : { ...file, path: posix.join(bootstrapDir, file.path) })),
    ],
    commands: [...(snapshot ? [snapshot.command] : []), ...(options.commands ?? [])],
  });
}

