// The adapter registry: adapter id → factory, so tools (the harness-bridge
// CLI, replay, the chaos suite) can name an adapter on a command line. It only
// builds adapters; what they do is theirs. 'fixture' is the deterministic
// adapter over the fixture CLI (host/testing/fixture/fixture-adapter.ts).
// An adapter outside the kit is named by its module's path instead of an id
// (loadAdapterModule; the module shape is documented there and in
// docs/writing-an-adapter.md#run-it).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineCliAdapter, type CliAdapter } from '../adapter-kit/adapter.ts';
import type { CliProfile } from '../testing/scripted-model/profiles.ts';
import { claudeCodeAdapter } from './claude-code/claude-code.ts';
import { codexAdapter } from './codex/codex.ts';
import { fixtureAdapter } from '../testing/fixture/fixture-adapter.ts';
import { piAdapter } from './pi/pi.ts';
import { piChatCompletionsProvider } from './pi/provider.ts';
import { claudeCodeAcpAdapter, codexAcpAdapter } from './acp/agents.ts';

/** What a registry factory accepts; each adapter uses what applies to it. */
export type AdapterOptions = {
  readonly modelId?: string;
  /** Host path of an already installed CLI (skips nothing by itself; see `withHostInstalledCli`). */
  readonly binPath?: string;
  /** Extra env for the CLI (e.g. the model endpoint and key). */
  readonly extraEnv?: Record<string, string>;
  /**
   * The scripted model server `harness-bridge run` started on 127.0.0.1 (offline): its base URL (the API
   * paths are /v1/messages, /v1/responses, /v1/chat/completions) and a key to pass (it accepts any).
   * Point the CLI at it; `extraEnv` still wins.
   */
  readonly scriptedModel?: { readonly url: string; readonly apiKey: string };
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
  /** Loaded from this module (an adapter outside the kit). */
  readonly modulePath?: string;
  /** False for a module that exports an adapter rather than a factory: `create` ignores its options. */
  readonly takesOptions?: boolean;
  /** What the scripted model knows about its CLI (the module's `modelProfiles`); default the reference profiles. */
  readonly modelProfiles?: ReadonlyArray<CliProfile>;
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
    create: (options = {}) => {
      const { scriptedModel: m } = options;
      const extraEnv = m ? { ANTHROPIC_BASE_URL: m.url, ANTHROPIC_API_KEY: m.apiKey, ...options.extraEnv } : options.extraEnv;
      return claudeCodeAdapter({
        ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(extraEnv === undefined ? {} : { extraEnv }),
      });
    },
  },
  {
    id: 'codex',
    description: 'Codex CLI (codex app-server, JSON-RPC over stdio)',
    realCli: true,
    // A model endpoint: OPENAI_BASE_URL (+ OPENAI_API_KEY) in extraEnv selects a custom Responses provider.
    create: (options = {}) => {
      const { scriptedModel: m } = options;
      const extraEnv = m ? { OPENAI_BASE_URL: `${m.url}/v1`, OPENAI_API_KEY: m.apiKey, ...options.extraEnv } : options.extraEnv;
      const modelId = options.modelId ?? (m ? 'gpt-5.5' : undefined); // any name: the scripted model echoes it
      return codexAdapter({
        ...(modelId === undefined ? {} : { modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(extraEnv === undefined ? {} : { extraEnv }),
      });
    },
  },
  {
    id: 'pi',
    description: 'pi (pi --mode rpc, with the harness-bridge extension for host tools and approvals)',
    realCli: true,
    // A model endpoint: piAdapter's `provider`; here, HARNESS_PI_PROVIDER (its JSON, see pi/extension.ts) in extraEnv and modelId '<provider>/<model>'.
    create: (options = {}) => {
      const { scriptedModel: m } = options;
      return piAdapter({
        ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(options.extraEnv === undefined ? {} : { extraEnv: options.extraEnv }),
        ...(m ? { provider: piChatCompletionsProvider({ id: 'scripted', baseUrl: `${m.url}/v1`, apiKey: m.apiKey, models: ['scripted-model'] }) } : {}),
      });
    },
  },
  {
    id: 'claude-code-acp',
    description: "Zed's Claude Code ACP agent through the generic ACP adapter (docs/acp.md)",
    realCli: true,
    create: (options = {}) => {
      const { scriptedModel: m } = options;
      const extraEnv = m ? { ANTHROPIC_BASE_URL: m.url, ANTHROPIC_API_KEY: m.apiKey, ...options.extraEnv } : options.extraEnv;
      return claudeCodeAcpAdapter({
        ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(extraEnv === undefined ? {} : { extraEnv }),
      });
    },
  },
  {
    id: 'codex-acp',
    description: "Zed's Codex ACP agent through the generic ACP adapter (docs/acp.md)",
    realCli: true,
    create: (options = {}) => {
      const { scriptedModel: m } = options;
      const extraEnv = m ? { OPENAI_BASE_URL: `${m.url}/v1`, OPENAI_API_KEY: m.apiKey, ...options.extraEnv } : options.extraEnv;
      const modelId = options.modelId ?? (m ? 'gpt-5.5' : undefined); // any name: the scripted model echoes it
      return codexAcpAdapter({
        ...(modelId === undefined ? {} : { modelId }),
        ...(options.binPath === undefined ? {} : { binPath: options.binPath }),
        ...(extraEnv === undefined ? {} : { extraEnv }),
      });
    },
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

/** Whether a command line's adapter value names a module rather than a registry id: a path, or a file name with a JS/TS extension. */
export function isAdapterPath(value: string): boolean {
  return /^[./]/.test(value) || value.includes('/') || /\.(mjs|cjs|js|ts|mts|cts)$/.test(value);
}

/** Raised when an adapter module cannot be used; the message says why and what to do. */
export class AdapterModuleError extends Error {
  override name = 'AdapterModuleError';
}

type Factory = (options: AdapterOptions) => unknown;

/** A definition or adapter object from a module, checked and made a CliAdapter (defineCliAdapter checks the harnessId). */
function asAdapter(value: unknown, where: string): AnyCliAdapter {
  const v = value as Partial<Record<string, unknown>> & { translator?: Partial<Record<string, unknown>> } | null;
  const missing = [
    typeof v?.harnessId === 'string' ? undefined : 'harnessId (a kebab-case string)',
    typeof v?.launch === 'function' ? undefined : 'launch(context)',
    typeof v?.threadId === 'function' ? undefined : 'threadId(record)',
    typeof v?.translator?.init === 'function' && typeof v?.translator?.step === 'function' ? undefined : 'translator { init, step }',
  ].filter((m): m is string => m !== undefined);
  if (typeof v !== 'object' || v === null || missing.length > 0) {
    throw new AdapterModuleError(`${where} is not a CLI adapter: it lacks ${missing.join(', ') || 'everything'} (build it with defineCliAdapter from harness-bridge/adapter-kit)`);
  }
  const { kind: _kind, ...definition } = v as AnyCliAdapter;
  try {
    return defineCliAdapter({ ...definition, builtinTools: (definition.builtinTools as AnyCliAdapter['builtinTools'] | undefined) ?? {} });
  } catch (error) {
    throw new AdapterModuleError(`${where}: ${(error as Error).message}`);
  }
}

/**
 * An adapter outside the kit, from the ES module at `path` (resolved against `cwd`), as a registry entry.
 * The module exports, as its default export or as `adapter`:
 * - an adapter (`defineCliAdapter({...})`), or
 * - a factory `(options: AdapterOptions) => adapter`, which gets what the kit prepared: `binPath` of the CLI
 *   it installed from the adapter's `cli` declaration, `scriptedModel` (the offline model's URL and key),
 *   `modelId`, `extraEnv`. It is called once without options to read the declaration.
 * Optionally `modelProfiles` (a CliProfile or an array: what the scripted model knows about the CLI) and
 * `description`. Plain JavaScript (.mjs, .js); TypeScript only where this Node strips types itself (Node 20
 * does not: compile the module first).
 */
export async function loadAdapterModule(path: string, cwd: string = process.cwd()): Promise<AdapterEntry> {
  const file = resolve(cwd, path);
  const features = process.features as { typescript?: unknown };
  if (/\.(ts|mts|cts)$/.test(file) && !features.typescript) {
    throw new AdapterModuleError(
      `${path}: Node ${process.version} cannot load TypeScript; compile the adapter to JavaScript (npx tsc, or npx esbuild ${path} --format=esm --platform=node --outfile=adapter.mjs) and pass the .mjs (or use Node 23.6+, which strips types)`,
    );
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const hint = e.code === 'ERR_MODULE_NOT_FOUND' && /harness-bridge/.test(e.message) ? ' (install harness-bridge where the module can import it: npm i harness-bridge)' : '';
    throw new AdapterModuleError(`cannot load adapter module ${path}: ${e.message}${hint}`);
  }
  const exported = mod.default ?? mod.adapter;
  if (exported === undefined) throw new AdapterModuleError(`${path} exports no adapter: export default (or export const adapter =) an adapter or a factory (options) => adapter`);
  const takesOptions = typeof exported === 'function';
  const create = (options: AdapterOptions = {}): AnyCliAdapter => asAdapter(takesOptions ? (exported as Factory)(options) : exported, `${path}'s ${mod.default === undefined ? 'adapter' : 'default'} export${takesOptions ? ' (called)' : ''}`);
  const first = create();
  const profiles = mod.modelProfiles ?? mod.modelProfile;
  const modelProfiles = profiles === undefined ? undefined : ((Array.isArray(profiles) ? profiles : [profiles]) as CliProfile[]);
  return {
    id: first.harnessId,
    description: typeof mod.description === 'string' ? mod.description : `${first.harnessId} (from ${path})`,
    realCli: first.cli !== undefined,
    create,
    modulePath: file,
    takesOptions,
    ...(modelProfiles === undefined ? {} : { modelProfiles }),
  };
}

/** A registry id or an adapter module's path, as an entry; undefined for an unknown id. Module errors throw AdapterModuleError. */
export async function resolveAdapterEntry(value: string): Promise<AdapterEntry | undefined> {
  return isAdapterPath(value) ? loadAdapterModule(value) : findAdapter(value);
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
