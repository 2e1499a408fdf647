// What `run`, `demo` and the demo's second process share: finding the adapter
// (a registry id, or an adapter module's path), installing the CLI it declares
// into the cache (install-clis.mjs) and choosing the model a real CLI talks to —
// the scripted model in this process (offline, the default) or, for Claude Code
// when ANTHROPIC_API_KEY is set, the real Anthropic API (the key reaches the
// CLI through the inherited environment, never through a launch spec, so no
// recording or journal ever holds it).
import { existsSync } from 'node:fs';
import {
  AdapterModuleError,
  adapterIds,
  findAdapter,
  isAdapterPath,
  loadAdapterModule,
  withHostInstalledCli,
  type AdapterEntry,
  type AdapterOptions,
  type AnyCliAdapter,
} from '../adapters/registry.ts';
import { referenceProfiles } from '../testing/scripted-model/profiles.ts';
import { startModelServer } from '../testing/scripted-model/server.ts';
import { CliError, CliUsageError } from './args.ts';
import { startDemoModel } from './demo-model.ts';
import { cliPaths, ensureCli } from './install-clis.mjs';

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
  if (!entry) throw new CliUsageError(`${command}: unknown adapter ${JSON.stringify(id)}; known: ${adapterIds().join(', ')}, or the path of an adapter module (./my-adapter.mjs)`);
  return entry;
}

/** `--adapter <id|path>`: a registry entry, or the adapter module at that path (registry.ts loadAdapterModule). */
export async function resolveAdapterArg(command: string, value: string): Promise<AdapterEntry> {
  if (!isAdapterPath(value)) return requireAdapter(command, value);
  try {
    return await loadAdapterModule(value);
  } catch (error) {
    if (error instanceof AdapterModuleError) throw new CliError(`${command}: ${error.message}`, /cannot load TypeScript|exports no adapter|is not a CLI adapter/.test(error.message) ? 2 : 1);
    throw error;
  }
}

/** Installs the CLI the adapter declares into the cache (once), saying what it does; its bin path. */
async function installDeclaredCli(cli: NonNullable<AnyCliAdapter['cli']>, log: (line: string) => void): Promise<string> {
  const name = `${cli.package}@${cli.version}`;
  let paths: ReturnType<typeof cliPaths>;
  try {
    paths = cliPaths(cli);
  } catch (error) {
    throw new CliError(`the adapter's cli declaration is unusable: ${(error as Error).message}`);
  }
  if (existsSync(paths.markerPath)) {
    log(`${name} is in the cache (${paths.dir})`);
    return paths.binPath;
  }
  log(`installing ${name} into the CLI cache (first run only; npm, usually under a minute)…`);
  const started = Date.now();
  const ticker = setInterval(() => log(`  … still installing (${Math.round((Date.now() - started) / 1000)} s)`), 10_000);
  try {
    const { binPath } = await ensureCli(cli);
    log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return binPath;
  } catch (error) {
    throw new CliError(`could not install ${name}: ${(error as Error).message.split('\n')[0]}`);
  } finally {
    clearInterval(ticker);
  }
}

export async function prepareAdapter(entry: AdapterEntry, options: PrepareOptions): Promise<Prepared> {
  const declared = entry.create(); // a first instance, for the CLI it declares
  // A factory module gets the scripted model also when its CLI is not on npm (docs/writing-an-adapter.md#tutorial: tiny-cli).
  const factoryModule = entry.modulePath !== undefined && entry.takesOptions !== false;
  if (!entry.realCli && !factoryModule) return { entry, adapter: declared, model: { kind: 'none' }, binPath: undefined, close: async () => undefined };
  const cli = declared.cli;
  if (!cli && !factoryModule) throw new CliError(`adapter ${entry.id} declares no CLI to install (its \`cli\`: npm package, version, bin)`);
  // A module that exports an adapter object cannot be told where the kit installed its CLI: its own install commands run in the sandbox.
  const hostInstall = entry.takesOptions !== false && cli !== undefined;
  let binPath: string | undefined;
  if (!cli) options.log(`${entry.modulePath ?? entry.id} declares no npm CLI (\`cli\`): nothing to install; its factory gets the scripted model`);
  else if (hostInstall) binPath = await installDeclaredCli(cli, options.log);
  else options.log(`${entry.modulePath ?? entry.id} exports an adapter, not a factory: its CLI is installed by its own install commands, in the sandbox (export (options) => adapter to get options.binPath of the kit's cached install)`);
  let model: ModelChoice;
  let close = async () => undefined as void;
  let scriptedModel: AdapterOptions['scriptedModel'];
  if (entry.id === 'claude-code' && entry.modulePath === undefined && process.env.ANTHROPIC_API_KEY) {
    // The real API. The key is inherited by the bridge and the CLI from this process's env.
    model = { kind: 'anthropic-api' };
  } else {
    let url = options.modelUrl;
    if (url === undefined) {
      // Claude Code's turn may be the demo's (SCENARIO:demo): the demo model. Any other CLI: the scripted model server, all three APIs.
      const server =
        entry.id === 'claude-code' && entry.modulePath === undefined
          ? await startDemoModel()
          : await startModelServer({ profiles: entry.modelProfiles ?? referenceProfiles });
      url = server.url;
      close = () => server.close();
    }
    model = { kind: 'scripted', url };
    // 'sk-test' is no credential: the scripted model ignores it; the CLI only refuses to start without one.
    scriptedModel = { url, apiKey: 'sk-test' };
  }
  const adapter = entry.create({ ...(binPath === undefined ? {} : { binPath }), ...(scriptedModel ? { scriptedModel } : {}) });
  // The CLI is already installed on this machine (the local sandbox shares its filesystem): skip the in-sandbox npm install.
  return { entry, adapter: hostInstall ? withHostInstalledCli(adapter) : adapter, model, binPath, close };
}

export function describeModel(model: ModelChoice): string {
  switch (model.kind) {
    case 'none':
      return 'no model (no real CLI: the adapter declares none to install; the fixture CLI is deterministic)';
    case 'scripted':
      return `the scripted model on ${model.url} (offline, no API key)`;
    case 'anthropic-api':
      return 'the real Anthropic API (ANTHROPIC_API_KEY is set)';
  }
}
