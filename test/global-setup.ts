// vitest globalSetup: builds dist/ once before any test file runs, so
// `npx vitest run` alone works (integration tests spawn dist/bridge.mjs).
import { buildEntries } from '../esbuild.config.mjs';

export default async function setup(): Promise<void> {
  await buildEntries();
}
