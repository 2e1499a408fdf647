// The adapter registry: adapter id → factory, so tools (the harness-bridge
// CLI, replay, the chaos suite) can name an adapter on a command line. It only
// builds adapters; what they do is theirs. 'fixture' is the test adapter over
// test/fixtures/fixture-cli.mjs.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineCliAdapter, type CliAdapter } from '../adapter.ts';
import { fixtureAdapter, fixtureCliPath } from '../../test/fixtures/fixture-adapter.ts';
import { claudeCodeAdapter } from './claude-code.ts';
import { codexAdapter } from './codex.ts';
import { piAdapter } from './pi.ts';

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
    description: 'the test fixture CLI (test/fixtures/fixture-cli.mjs --echo): no model, deterministic',
    realCli: false,
    create: () => fixtureWithLocatedCli(),
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
    // A model endpoint: piAdapter's `provider`; here, HARNESS_PI_PROVIDER (its JSON, see pi-extension.ts) in extraEnv and modelId '<provider>/<model>'.
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

/**
 * The fixture adapter names its CLI relative to its own module; inside a bundle
 * (dist/cli.mjs) that points into dist/, so look for the script from here and
 * upward and rewrite the launch argv to the copy that exists.
 */
function fixtureWithLocatedCli(): AnyCliAdapter {
  const base = fixtureAdapter();
  const located = locateFixtureCli();
  if (located === fixtureCliPath) return base;
  return defineCliAdapter({
    ...base,
    launch: (context) => {
      const spec = base.launch(context);
      return { ...spec, argv: spec.argv.map((arg) => (arg === fixtureCliPath ? located : arg)) };
    },
  });
}

function locateFixtureCli(): string {
  if (existsSync(fixtureCliPath)) return fixtureCliPath;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const candidate = join(dir, 'test', 'fixtures', 'fixture-cli.mjs');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return fixtureCliPath; // not shipped here: the launch fails with spawn-failed naming this path
}
