#!/usr/bin/env node
// The bridge bundle starts on each pinned Node runtime (scripts/install-node.mjs): dist/bridge.mjs is
// started in a fresh state dir with a fresh token and must print its bridge-ready line; then it is
// stopped. Run by `npm test` (lane "runtimes") after the build. Exit 1 naming the runtime that failed.
// Usage: node scripts/check-runtimes.mjs [22|24|all]...
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode, RUNTIMES } from './install-node.mjs';

const bundle = fileURLToPath(new URL('../dist/bridge.mjs', import.meta.url));

/** Starts the bundle on `node`; resolves with its bridge-ready line, rejects with its output otherwise. */
function startBridge(node) {
  const dir = mkdtempSync(join(tmpdir(), 'hb-runtime-'));
  const state = join(dir, 'state');
  mkdirSync(state, { mode: 0o700 });
  chmodSync(state, 0o700);
  writeFileSync(join(state, 'token.new.check'), randomBytes(24).toString('hex'), { mode: 0o600 });
  return new Promise((resolveStart, rejectStart) => {
    const child = spawn(node, [bundle, '--state-dir', state, '--port', '0', '--host', '127.0.0.1', '--token-file', 'token.new.check', '--isolation', 'none'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let ready;
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000); // a hang guard, not a timing
    const onData = (chunk) => {
      out += chunk.toString('utf8');
      const line = out.split('\n').find((l) => l.includes('"bridge-ready"'));
      if (line && !ready) {
        ready = line;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      rmSync(dir, { recursive: true, force: true });
      if (ready) resolveStart(ready);
      else rejectStart(new Error(`exited (${code ?? signal}) without bridge-ready:\n${out}`));
    });
  });
}

const args = process.argv.slice(2);
const majors = args.length === 0 || args.includes('all') ? Object.keys(RUNTIMES) : args;
let failed = 0;
for (const major of majors) {
  const node = ensureNode(major);
  try {
    const ready = JSON.parse(await startBridge(node));
    process.stdout.write(`[figures] runtime node=${RUNTIMES[major]} bridge-bundle=ready version=${ready.version}\n`);
  } catch (error) {
    failed++;
    process.stdout.write(`[figures] runtime node=${RUNTIMES[major]} bridge-bundle=FAILED\n${error instanceof Error ? error.message : String(error)}\n`);
  }
}
process.exit(failed > 0 ? 1 : 0);
