// Where isolation's first-part time goes, phase by phase (docs/bridge-internals.md#first-output): the jail
// helper run the way the bridge runs it (`node bridge.mjs --jail-helper <sandbox-runtime's index.js>`, the
// bundled srt beside the bridge file: bridge/jail/srt-bundle.ts; JSON lines on stdin/stdout:
// bridge/jail/jail-helper.ts), timed from outside, with the phases the helper reports in its ready line:
//   ready         helper spawned → {"t":"ready"}: its start (Node's and the bridge file's), sandbox-runtime's
//                 load, and SandboxManager.initialize (its dependency checks, its proxy relays)
//   installed     for comparison: a Node process that imports the installed sandbox-runtime and exits
//   first wrap    wrap → {"t":"wrapped"} (srt's scan of the cwd for files to protect, the bwrap command line)
//   next wrap     the same, warm
//   jailed exec   the wrapped `/bin/true` run to its exit (bubblewrap's namespaces, the seccomp helper,
//                 srt's relays inside) against `/bin/true` run bare
// Run as this process's uid (the bridge runs its helper as the CLI's); the cwd is a small project dir.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { REPO, childEnv, median, tempDir, withTimeout } from './common.mjs';

const SRT_INDEX = path.join(REPO, 'node_modules/@anthropic-ai/sandbox-runtime/dist/index.js');
const BRIDGE = path.join(REPO, 'dist/bridge.mjs');
const STEP_MS = 30_000;

/** Runs argv to its exit; the wall time in ms. */
function timedRun(argv, options = {}) {
  const t0 = performance.now();
  return withTimeout(
    new Promise((resolve, reject) => {
      const child = spawn(argv[0], argv.slice(1), { stdio: 'ignore', env: childEnv(), ...options });
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${argv.join(' ').slice(0, 120)} exited ${code}`))));
    }),
    STEP_MS,
    argv[0],
  );
}

/** One helper: its ready, two wraps, and the wrapped command run; each in ms. */
async function helperOnce(project) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BRIDGE, '--jail-helper', SRT_INDEX], { cwd: '/', stdio: ['pipe', 'pipe', 'pipe'], env: childEnv() });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-2000)));
  const replies = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (what) => {
    const { value, done } = await withTimeout(replies.next(), STEP_MS, `jail helper: ${what}`);
    if (done) throw new Error(`the jail helper ended before ${what}: ${stderr}`);
    const reply = JSON.parse(value);
    if (reply.t === 'error') throw new Error(`the jail helper: ${reply.message}`);
    return reply;
  };
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const network = { allowedDomains: [], deniedDomains: [], httpProxyPort: 9, socksProxyPort: 9 };
  const filesystem = { denyRead: [], allowRead: [], allowWrite: [project], denyWrite: [] };
  try {
    send({ t: 'init', config: { network, filesystem } });
    const { srt, ms } = await next('ready');
    if (srt !== 'bundle') throw new Error(`the jail helper loaded the ${srt} sandbox-runtime, not the bundle beside ${BRIDGE}`);
    const ready = performance.now() - t0;
    const wrapMs = [];
    let command = '';
    for (let id = 1; id <= 2; id++) {
      const t1 = performance.now();
      send({ t: 'wrap', id, command: '/bin/true', filesystem, cwd: project });
      command = (await next('wrapped')).command;
      wrapMs.push(performance.now() - t1);
    }
    const jailed = await timedRun(['/bin/sh', '-c', `exec ${command}`], { cwd: project });
    return { ready, start: ms.start, load: ms.load, initialize: ms.initialize, firstWrap: wrapMs[0], nextWrap: wrapMs[1], jailed };
  } finally {
    child.stdin.end();
    child.kill('SIGTERM');
  }
}

/** The phases' medians over `repeats` helpers (one more first, uncounted, to warm the page cache). */
export async function jailPhases(repeats) {
  const project = path.join(tempDir('jail-phases'), 'project');
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'README.md'), 'a small project\n');
  const importFile = path.join(tempDir('jail-phases-import'), 'import.mjs');
  writeFileSync(importFile, `await import(${JSON.stringify(SRT_INDEX)});\n`);
  await helperOnce(project);
  const runs = { nodeImport: [], nodeBare: [], ready: [], start: [], load: [], initialize: [], firstWrap: [], nextWrap: [], jailed: [], bare: [] };
  for (let i = 0; i < repeats; i++) {
    runs.nodeBare.push(await timedRun([process.execPath, '-e', '0']));
    runs.nodeImport.push(await timedRun([process.execPath, importFile]));
    const helper = await helperOnce(project);
    for (const key of ['ready', 'start', 'load', 'initialize', 'firstWrap', 'nextWrap', 'jailed']) runs[key].push(helper[key]);
    runs.bare.push(await timedRun(['/bin/true']));
  }
  return Object.fromEntries(Object.entries(runs).map(([key, values]) => [key, median(values)]));
}
