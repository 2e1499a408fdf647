// The adapter registry: adapter id → factory, so tools (the harness-bridge
// CLI, replay, the chaos suite) can name an adapter on a command line. It only
// builds adapters; what they do is theirs. 'fixture' is the deterministic
// adapter over the fixture CLI (host/testing/fixture/fixture-adapter.ts).
import { defineCliAdapter, type CliAdapter } from '../adapter-kit/adapter.ts';
import { claudeCodeAdapter } from './claude-code/claude-code.ts';
import { codexAdapter } from './codex/codex.ts';
import { fixtureAdapter } from '../testing/fixture/fixture-adapter.ts';
import { piAdapter } from './pi/pi.ts';

/** What a registry factory accepts; each adapter uses what applies to it. */
export type AdapterOptions = {
  readonly modelId?: string;
  /** Host path of an already installed CLI (skips nothing by itself; see `withHostInstalledCli`). */
  readonly binPath?: string;
  /** Extra env for the CLI (e.g. the model endpoint and key). */
  readonly extraEnv?: Record<string, string>;
};

// The registry hands out adapters of different state types; callers only pass them to the
// generic kit (createBridgeHarness, TurnTranslation), which is generic over the state.
export type AnyCliAdapter = CliAdapter<any>;

export type AdapterEntry = {
  readonly id: string;
  readonly description: string;
  /** True when the adapter drives a real CLI that must be installed (and talks to a model). */
  readonly realCli: boolean;
  create(options?: AdapterOptions): AnyCliAdapter;
};

const entries: ReadonlyArray<AdapterEntry> = [
  {
    id: 'fixture',
    description: 'the fixture CLI (fixture-cli.mjs --echo, shipped with the bundle): no model, deterministic',
    realCli: false,
    create: () => fixtureAdapter(),
  },
  {
    id: 'claude-code',
    description: 'Claude Code (claude -p, stream-json)',
    realCli: true,
    create: (options = {}) =>
      claudeCodeAdapter({
        ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(options.extraEnv === undefined ? {} : { extraEnv: options.extraEnv }),
      }),
  },
  {
    id: 'codex',
    description: 'Codex CLI (codex app-server, JSON-RPC over stdio)',
    realCli: true,
    // A model endpoint: OPENAI_BASE_URL (+ OPENAI_API_KEY) in extraEnv selects a custom Responses provider.
    create: (options = {}) =>
      codexAdapter({
        ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(options.extraEnv === undefined ? {} : { extraEnv: options.extraEnv }),
      }),
  },
  {
    id: 'pi',
    description: 'pi (pi --mode rpc, with the harness-bridge extension for host tools and approvals)',
    realCli: true,
    // A model endpoint: piAdapter's `provider`; here, HARNESS_PI_PROVIDER (its JSON, see pi/extension.ts) in extraEnv and modelId '<provider>/<model>'.
    create: (options = {}) =>
      piAdapter({
        ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(options.extraEnv === undefined ? {} : { extraEnv: options.extraEnv }),
      }),
  },
];

export const adapterRegistry: ReadonlyMap<string, AdapterEntry> = new Map(entries.map((entry) => [entry.id, entry]));

export function adapterIds(): string[] {
  return [...adapterRegistry.keys()];
}

/** The registry entry for `id`, or undefined. */
export function findAdapter(id: string): AdapterEntry | undefined {
  return adapterRegistry.get(id);
}

/**
 * The adapter without its in-sandbox install commands, for hosts that already
 * installed the CLI on this machine and pass its `binPath` (the local sandbox
 * shares the host's filesystem). Its recipe is then the bridge file plus the
 * adapter's own files (pi's extension), which no host install provides.
 */
export function withHostInstalledCli(adapter: AnyCliAdapter): AnyCliAdapter {
  const { kind: _kind, install, ...definition } = adapter;
  return defineCliAdapter(install?.files ? { ...definition, install: { files: install.files } } : definition);
}
