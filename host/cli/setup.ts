// What `run`, `demo` and the demo's second process share: installing a real
// CLI into the cache (install-clis.mjs) and choosing the model a real CLI
// talks to — the scripted model in this process (offline, the default) or,
// when ANTHROPIC_API_KEY is set, the real Anthropic API (the key reaches the
// CLI through the inherited environment, never through a launch spec, so no
// recording or journal ever holds it).
import { existsSync } from 'node:fs';
import { adapterIds, findAdapter, withHostInstalledCli, type AdapterEntry, type AnyCliAdapter } from '../adapters/registry.ts';
import { CliError, CliUsageError } from './args.ts';
import { startDemoModel } from './demo-model.ts';
import { CLIS, cliPaths, ensureCli, type CliName } from './install-clis.mjs';

export type ModelChoice =
  | { readonly kind: 'none' }
  | { readonly kind: 'scripted'; readonly url: string }
  | { readonly kind: 'anthropic-api' };

export type Prepared = {
  readonly entry: AdapterEntry;
  readonly adapter: AnyCliAdapter;
  readonly model: ModelChoice;
  readonly binPath: string | undefined;
  /** Stops what this process started (the scripted model). */
  close(): Promise<void>;
};

export type PrepareOptions = {
  readonly log: (line: string) => void;
  /** Reuse a scripted model another process started (the demo's second process). */
  readonly modelUrl?: string;
};

export function requireAdapter(command: string, id: string): AdapterEntry {
  const entry = findAdapter(id);
  if (!entry) throw new CliUsageError(`${command}: unknown adapter ${JSON.stringify(id)}; known: ${adapterIds().join(', ')}`);
  return entry;
}

const cliNames: Readonly<Record<string, CliName>> = { 'claude-code': 'claude-code' };

export async function prepareAdapter(entry: AdapterEntry, options: PrepareOptions): Promise<Prepared> {
  if (!entry.realCli) return { entry, adapter: entry.create(), model: { kind: 'none' }, binPath: undefined, close: async () => undefined };
  const cliName = cliNames[entry.id];
  if (!cliName) throw new CliError(`adapter ${entry.id} has no pinned CLI in host/cli/install-clis.mjs`);
  const spec = CLIS[cliName];
  let binPath: string;
  if (existsSync(cliPaths(cliName).markerPath)) {
    binPath = cliPaths(cliName).binPath;
    options.log(`${spec.pkg}@${spec.version} is in the cache (${cliPaths(cliName).dir})`);
  } else {
    options.log(`installing ${spec.pkg}@${spec.version} into the CLI cache (first run only; npm, usually under a minute)…`);
    const started = Date.now();
    const ticker = setInterval(() => options.log(`  … still installing (${Math.round((Date.now() - started) / 1000)} s)`), 10_000);
    try {
      binPath = (await ensureCli(cliName)).binPath;
    } catch (error) {
      throw new CliError(`could not install ${spec.pkg}@${spec.version}: ${(error as Error).message.split('\n')[0]}`);
    } finally {
      clearInterval(ticker);
    }
    options.log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  let model: ModelChoice;
  let close = async () => undefined as void;
  let extraEnv: Record<string, string> | undefined;
  if (process.env.ANTHROPIC_API_KEY) {
    // The real API. The key is inherited by the bridge and the CLI from this process's env.
    model = { kind: 'anthropic-api' };
  } else {
    let url = options.modelUrl;
    if (url === undefined) {
      const server = await startDemoModel();
      url = server.url;
      close = () => server.close();
    }
    model = { kind: 'scripted', url };
    // 'sk-test' is no credential: the scripted model ignores it; the CLI only refuses to start without one.
    extraEnv = { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-test' };
  }
  // The CLI is already installed on this machine (the local sandbox shares its filesystem): skip the in-sandbox npm install.
  const adapter = withHostInstalledCli(entry.create({ binPath, ...(extraEnv ? { extraEnv } : {}) }));
  return { entry, adapter, model, binPath, close };
}

export function describeModel(model: ModelChoice): string {
  switch (model.kind) {
    case 'none':
      return 'no model (the fixture CLI is deterministic)';
    case 'scripted':
      return `the scripted model on ${model.url} (offline, no API key)`;
    case 'anthropic-api':
      return 'the real Anthropic API (ANTHROPIC_API_KEY is set)';
  }
}
