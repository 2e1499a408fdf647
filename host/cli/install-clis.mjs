// The pinned coding-agent CLIs and their installer: installs them from npm
// into a cache outside any repo (~/.cache/harness-bridge/clis). Owns: pins,
// cache layout, idempotence (marker file) and concurrency (temp dir + atomic
// rename). Leaves to callers: how the CLI is run (env, args, sandboxing).
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

function specFor(name) {
  const spec = CLIS[name];
  if (!spec) throw new RangeError(`unknown CLI "${name}"; expected one of ${Object.keys(CLIS).join(', ')}`);
  return spec;
}

/** Where the CLI lives once installed (does not install). */
export function cliPaths(name) {
  const spec = specFor(name);
  const dir = join(cacheRoot(), `${name}-${spec.version}`);
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
 * Ensure the pinned CLI is installed; returns its absolute bin path and install dir.
 * Idempotent (marker file) and safe against concurrent callers: each installs into its own
 * temp dir and renames it into place; a loser of the rename race uses the winner's copy.
 */
export async function ensureCli(name) {
  const spec = specFor(name);
  const paths = cliPaths(name);
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
