// size: bytes of the one-file bridge. ours is dist/bridge.mjs as built by
// `npm run build`; aisdk and rawws are esbuild bundles (bundle, esm, node20,
// not minified, everything inlined) of the bench drivers, so all three are
// "one self-contained file". The AI SDK's own dist/bridge/index.js (ws left
// external, as its adapters ship it) is printed for reference.
import { statSync } from 'node:fs';
import path from 'node:path';
import { REPO, banner, benchLine, floor, runScenario } from './lib/common.mjs';
import { TARGETS, fileSize, prepareTargets } from './lib/targets.mjs';

const SCENARIO = 'size';
const LIMIT = 500 * 1000; // issue 2 / issue 4: dist/bridge.mjs < 500 KB

await runScenario(async () => {
  banner(SCENARIO, 'bytes of the single-file bridge', 1);
  const { available } = await prepareTargets();
  const results = {};
  for (const target of TARGETS) {
    if (available[target] !== true) {
      console.log(`  ${target.padEnd(6)} skipped: ${available[target]}`);
      results[target] = 'skipped';
      continue;
    }
    results[target] = fileSize(target);
    console.log(`  ${target.padEnd(6)} ${results[target].toLocaleString('en-US')} B (${(results[target] / 1024).toFixed(1)} KiB)`);
  }
  const sdkDist = statSync(path.join(REPO, 'node_modules/@ai-sdk/harness/dist/bridge/index.js')).size;
  console.log(`  (AI SDK runBridge alone, dist/bridge/index.js with ws external: ${sdkDist.toLocaleString('en-US')} B)`);
  const ok = typeof results.ours === 'number' ? results.ours < LIMIT : undefined;
  console.log(`  floor (issues 2, 4): dist/bridge.mjs < 500 KB — ${floor(ok)}`);
  benchLine(SCENARIO, results, 'B', `floor<500KB=${floor(ok)}`);
});
