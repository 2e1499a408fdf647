// exec-transport (docs/remote-providers.md#hosted-exec): what reaching the bridge through a sandbox's
// exec stream costs, beside reaching its port. One fixture turn of N lines through the host kit (a
// BridgeSession), three ways, on the local provider:
//   port    — the session's getPortEndpoint (the default when a provider has ports);
//   exec    — the exec transport over the session's spawn, bytes as they are (what `docker exec` gives);
//   hosted  — the same over a simulated hosted exec API (test/fixtures/hosted-sandbox.ts: output as
//             strings, each stdin write delayed 2 ms, 50 writes a second), with base64 lines and 2 ms
//             batched writes, as docs/remote-providers.md tells such a provider to set.
// Figures per way: the first part after doPromptTurn, the whole turn in lines/s, and for hosted the
// stdin writes the API was billed. The AI SDK's bridge has no exec transport: its columns are n/a;
// the ratios are hosted/exec and exec/port.
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ESM_BUNDLE, REPEATS, REPO, banner, fmt, median, removeDir, runScenario, scaled, tempDir } from './lib/common.mjs';

const SCENARIO = 'exec-transport';
const LINES = scaled(20_000, 20);

const ENTRY = `
export { createBridgeHarness } from './host/harness.ts';
export { createLocalSandboxProvider } from './host/sandbox/local/provider.ts';
export { fixtureAdapter } from './test/fixtures/fixture-adapter.ts';
export { hostedExecSession } from './test/fixtures/hosted-sandbox.ts';
`;

async function loadKit() {
  const { build } = await import('esbuild');
  const outfile = path.join(tempDir('exec-bundle'), 'exec-kit.mjs');
  await build({ stdin: { contents: ENTRY, resolveDir: REPO, loader: 'ts', sourcefile: 'bench-exec-entry.ts' }, outfile, ...ESM_BUNDLE });
  // The fixture adapter finds its CLI beside its module: here, beside the bundle.
  copyFileSync(path.join(REPO, 'host/testing/fixture/fixture-cli.mjs'), path.join(path.dirname(outfile), 'fixture-cli.mjs'));
  return import(outfile);
}

/** One turn of LINES lines through `sandbox`: ms to the first part, ms to the turn's end, the text deltas seen. */
async function turn(kit, sandbox, sessionId, settings) {
  const harness = kit.createBridgeHarness(kit.fixtureAdapter(), { bridgeFile: path.join(REPO, 'dist/bridge.mjs'), probeTimeoutMs: 3_000, ...settings });
  const session = await harness.doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: sandbox.defaultWorkingDirectory });
  try {
    let first;
    let deltas = 0;
    const t0 = performance.now();
    const control = await session.doPromptTurn({
      prompt: `bench LINES:${LINES}`,
      emit: (part) => {
        first ??= performance.now() - t0;
        if (part.type === 'text-delta') deltas++;
      },
    });
    await control.done;
    const ms = performance.now() - t0;
    if (deltas !== LINES) throw new Error(`${sessionId}: ${deltas} of ${LINES} lines arrived`);
    return { first, ms };
  } finally {
    await session.doDestroy();
  }
}

runScenario(async () => {
  banner(SCENARIO, `one fixture turn of ${LINES} lines through the port, the exec stream, and a simulated hosted exec API`);
  const kit = await loadKit();
  const root = tempDir('exec-root');
  const provider = kit.createLocalSandboxProvider({ root: path.join(root, 'sandboxes'), templatesRoot: path.join(root, 'templates') });
  const ways = {
    port: async (box) => ({ sandbox: box }),
    exec: async (box) => ({ sandbox: { ...box.restricted(), defaultWorkingDirectory: box.defaultWorkingDirectory } }),
    hosted: async (box) => {
      const hosted = kit.hostedExecSession(box);
      return { sandbox: hosted.session, settings: { execTransport: { framing: 'base64-lines', batchWritesMs: 2 } }, figures: hosted.figures };
    },
  };
  const results = {};
  let writes = [];
  try {
    for (const [name, open] of Object.entries(ways)) {
      const runs = [];
      for (let rep = 0; rep < REPEATS; rep++) {
        const box = await provider.createSession({ sessionId: `${name}-${rep}` });
        try {
          const { sandbox, settings, figures } = await open(box);
          runs.push(await turn(kit, sandbox, `${name}-${rep}`, settings));
          if (figures) writes.push(figures.stdinWrites);
        } finally {
          await box.destroy();
        }
      }
      const ms = median(runs.map((r) => r.ms));
      results[name] = { first: median(runs.map((r) => r.first)), rate: (LINES / ms) * 1000 };
      console.log(`  ${name.padEnd(6)} first part ${fmt(results[name].first, 1)} ms · ${fmt(results[name].rate)} lines/s (median of ${runs.length})`);
    }
  } finally {
    removeDir(root);
  }
  const { port, exec, hosted } = results;
  console.log(
    `[bench] ${SCENARIO} ours=${fmt(hosted.rate)}lines/s aisdk=n/a rawws=n/a ratio ours/aisdk=n/a ` +
      `hosted/exec rate=${(hosted.rate / exec.rate).toFixed(2)}× first=${fmt(hosted.first, 1)}/${fmt(exec.first, 1)} ms ` +
      `exec/port rate=${(exec.rate / port.rate).toFixed(2)}× first=${fmt(exec.first, 1)}/${fmt(port.first, 1)} ms ` +
      `hosted-stdin-writes=${median(writes)} lines=${LINES}`,
  );
});
