// The host kit for the bench scenarios that drive ours through it (host-channel, sessions).
// It is TypeScript: bundle just what the scenarios need (channel, turn
// translation, harness, local sandbox provider, a bench adapter whose
// translator maps each stdout record to one HarnessV1 `raw` part — the same
// part the AI SDK driver emits) into a temp ESM file.
import path from 'node:path';
import { ESM_BUNDLE, REPO, tempDir } from './common.mjs';

const OURS_ENTRY = `
import { createBridgeChannel } from './host/channel/index.ts';
import { TurnTranslation } from './host/adapter-kit/turn-translation.ts';
import { defineCliAdapter } from './host/adapter-kit/adapter.ts';
export const adapter = defineCliAdapter({
  harnessId: 'bench',
  builtinTools: {},
  launch: () => ({ argv: ['true'] }),
  threadId: () => undefined,
  translator: {
    init: () => null,
    step: (state, record) => ({ state, parts: record.kind === 'stdout' ? [{ type: 'raw', rawValue: record.data.text }] : [] }),
  },
});
export { createBridgeChannel, TurnTranslation };
export { createBridgeHarness } from './host/harness.ts';
export { createLocalSandboxProvider } from './host/sandbox/local/provider.ts';
/** The same translator as a session adapter: one-shot CLI, optional translator snapshots. */
export function sessionAdapter(argv, snapshots, survive = false) {
  return defineCliAdapter({
    harnessId: 'bench',
    builtinTools: {},
    launch: () => ({ argv, ...(survive ? { survive: true } : {}) }),
    threadId: () => undefined,
    translator: {
      init: () => 0,
      step: (state, record) => ({ state, parts: record.kind === 'stdout' ? [{ type: 'raw', rawValue: record.data.text }] : [] }),
      ...(snapshots ? { snapshot: (state) => state, restore: (json) => Number(json) } : {}),
    },
  });
}
`;

/** Bundles the host kit into a temp ESM file; returns its path. */
export async function bundleOursHost() {
  const { build } = await import('esbuild');
  const outfile = path.join(tempDir('host-bundle'), 'ours-host.mjs');
  await build({
    stdin: { contents: OURS_ENTRY, resolveDir: REPO, loader: 'ts', sourcefile: 'bench-host-entry.ts' },
    outfile,
    ...ESM_BUNDLE,
  });
  return outfile;
}

export async function loadOursHost() {
  return import(await bundleOursHost());
}

