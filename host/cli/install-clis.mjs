// The coding-agent CLIs' installer: installs any npm-published CLI an adapter
// declares (its `cli`: package, version, bin) into a cache outside any repo
// ($HARNESS_BRIDGE_CLI_CACHE, else /var/cache/harness-bridge/clis as root, else
// ~/.cache/harness-bridge/clis: cacheRoot()), and names the reference adapters' pins. Owns:
// pins, cache layout, idempotence (marker file) and concurrency (temp dir +
// atomic rename). Leaves to callers: how the CLI is run (env, args, sandboxing).
// Product code (`harness-bridge run/demo` install a real CLI on first use; the
// CLI bundle includes it) kept as plain .mjs so bare `node` can load it before
// any build: scripts/install-clis.mjs is its command line.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Pinned CLIs: the versions the adapters, their captured fixtures (test/fixtures/<cli>/) and the README's adapter table are written against; bump them together. */
export const CLIS = Object.freeze({
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.328', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.169.0', bin: 'codex' },
  pi: { pkg: '@mariozechner/pi-coding-agent', version: '0.73.1', bin: 'pi' },
  // ACP agents the generic ACP adapter is tested on (host/adapters/acp/agents.ts, docs/acp.md).
  'claude-code-acp': { pkg: '@zed-industries/claude-code-acp', version: '0.16.2', bin: 'claude-code-acp' },
  'codex-acp': { pkg: '@zed-industries/codex-acp', version: '0.16.0', bin: 'codex-acp' },
  'qwen-code': { pkg: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' },
  'gemini-cli': { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
});

const MARKER = '.harness-bridge-installed.json';
// npm install of a CLI takes seconds to a minute; 10 minutes means something hangs.
const maxInstallMs = 10 * 60_000;

/**
 * Cache root: $HARNESS_BRIDGE_CLI_CACHE, else ~/.cache/harness-bridge/clis — except for root,
 * whose CLIs go to /var/cache/harness-bridge/clis: a root bridge runs each CLI under a uid of
 * its own (docs/security.md), which cannot enter root's 0700 home.
 */
export function cacheRoot() {
  const env = process.env.HARNESS_BRIDGE_CLI_CACHE;
  if (env && env.length > 0) return resolve(env);
  if (process.getuid?.() === 0) return '/var/cache/harness-bridge/clis';
  return join(homedir(), '.cache', 'harness-bridge', 'clis');
}

// npm's package-name rule; a version or tag npm takes as is (1.2.3, 1.2.3-beta.1, next); a bare file name.
// Checked because they become npm's arguments and cache paths: nothing may read as an option or climb out.
const packagePattern = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;
const versionPattern = /^[0-9A-Za-z][0-9A-Za-z.+_-]*$/;
const binPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A CLI to install: a reference name (a key of CLIS), or a spec `{ package, version, bin }` (an adapter's
 * `cli`; `pkg` is accepted for `package`). Returns the spec with the cache key: the reference name when the
 * spec is a reference pin (their cache dirs predate specs), else the package name made path-safe.
 */
function specFor(nameOrSpec) {
  if (typeof nameOrSpec === 'string') {
    const spec = CLIS[nameOrSpec];
    if (!spec) throw new RangeError(`unknown CLI "${nameOrSpec}"; expected one of ${Object.keys(CLIS).join(', ')}, or a { package, version, bin } spec`);
    return { key: nameOrSpec, ...spec };
  }
  const pkg = nameOrSpec?.package ?? nameOrSpec?.pkg;
  const { version, bin } = nameOrSpec ?? {};
  if (typeof pkg !== 'string' || !packagePattern.test(pkg)) throw new RangeError(`CLI spec: package ${JSON.stringify(pkg)} is not an npm package name`);
  if (typeof version !== 'string' || !versionPattern.test(version)) throw new RangeError(`CLI spec ${pkg}: version ${JSON.stringify(version)} is not a version (pin one, e.g. 1.2.3)`);
  if (typeof bin !== 'string' || !binPattern.test(bin)) throw new RangeError(`CLI spec ${pkg}: bin ${JSON.stringify(bin)} is not an executable name`);
  const pinned = Object.entries(CLIS).find(([, spec]) => spec.pkg === pkg && spec.version === version && spec.bin === bin);
  return { key: pinned ? pinned[0] : pkg.replace(/^@/, '').replace(/\//g, '+'), pkg, version, bin };
}

/** Where the CLI lives once installed (does not install). */
export function cliPaths(nameOrSpec) {
  const spec = specFor(nameOrSpec);
  const dir = join(cacheRoot(), `${spec.key}-${spec.version}`);
  return { dir, binPath: join(dir, 'node_modules', '.bin', spec.bin), markerPath: join(dir, MARKER) };
}

function run(cmd, args, opts) {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), maxInstallMs);
    child.on('error', (err) => { clearTimeout(timer); fail(err); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) ok(out);
      else fail(new Error(`${cmd} ${args.join(' ')} failed (code ${code}, signal ${signal}):\n${out.slice(-4000)}`));
    });
  });
}

async function isInstalled(paths, spec) {
  if (!existsSync(paths.markerPath) || !existsSync(paths.binPath)) return false;
  try {
    const marker = JSON.parse(await readFile(paths.markerPath, 'utf8'));
    return marker.pkg === spec.pkg && marker.version === spec.version;
  } catch {
    return false; // unreadable marker: reinstall
  }
}

/**
 * Ensure the CLI (a reference name, or an adapter's `{ package, version, bin }`) is installed; returns its
 * absolute bin path and install dir. Idempotent (marker file) and safe against concurrent callers: each
 * installs into its own temp dir and renames it into place; a loser of the rename race uses the winner's copy.
 */
export async function ensureCli(nameOrSpec) {
  const spec = specFor(nameOrSpec);
  const name = spec.key;
  const paths = cliPaths(nameOrSpec);
  if (await isInstalled(paths, spec)) return { binPath: paths.binPath, dir: paths.dir };

  const root = cacheRoot();
  await mkdir(root, { recursive: true });
  const tmp = join(root, `.tmp-${name}-${spec.version}-${process.pid}-${Date.now()}`);
  await mkdir(tmp, { recursive: true });
  try {
    await run('npm', ['install', '--prefix', tmp, '--no-audit', '--no-fund', '--no-save', `${spec.pkg}@${spec.version}`], {
      cwd: tmp,
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    const tmpBin = join(tmp, 'node_modules', '.bin', spec.bin);
    if (!existsSync(tmpBin)) throw new Error(`installed ${spec.pkg}@${spec.version} but ${tmpBin} is missing`);
    await writeFile(join(tmp, MARKER), JSON.stringify({ pkg: spec.pkg, version: spec.version, bin: spec.bin }) + '\n');
    if (existsSync(paths.dir) && !(await isInstalled(paths, spec))) {
      // A half-finished dir from an older layout or a crash: move it aside, then retry the rename.
      await rm(paths.dir, { recursive: true, force: true });
    }
    try {
      await rename(tmp, paths.dir);
    } catch (err) {
      // ENOTEMPTY/EEXIST: another process won the race. Use its copy if it is complete.
      if (!(await isInstalled(paths, spec))) throw err;
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  if (!(await isInstalled(paths, spec))) throw new Error(`install of ${name} did not produce ${paths.markerPath}`);
  return { binPath: paths.binPath, dir: paths.dir };
}
