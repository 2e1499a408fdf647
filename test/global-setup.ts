// vitest globalSetup: builds dist/ once before any test file runs, so
// `npx vitest run` alone works (integration tests spawn dist/bridge.mjs).
// Skipped when the lane runner (scripts/test-lanes.mjs) built dist/ and lib/ from this tree before
// this lane (HARNESS_BRIDGE_BUILT=1): lanes running at once must not rewrite dist/bridge.mjs while
// another lane's bridges start from it.
import { buildEntries } from '../esbuild.config.mjs';

export default async function setup(): Promise<void> {
  if (process.env.HARNESS_BRIDGE_BUILT === '1') return;
  await buildEntries();
}
