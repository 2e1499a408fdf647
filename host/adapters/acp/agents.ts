// The ACP agents the kit is tested on (docs/acp.md), as presets of acpAdapter: their npm package
// pinned, their command and how each takes its model endpoint. Any other agent: acpAdapter itself.
import type { CliAdapter, CliPackage } from '../../adapter-kit/adapter.ts';
import { CREDENTIAL_ENV } from '../../adapter-kit/cli-launch.ts';
import { acpAdapter, type AcpState } from './acp.ts';

export type AcpPresetOptions = {
  /** Host path of the installed agent (else the sandbox's `cli/node_modules/.bin/<bin>`). */
  binPath?: string;
  /** Env for the agent: its model endpoint and key. */
  extraEnv?: Record<string, string>;
  modelId?: string;
  /** Launch `survive` (default true; CliAdapterOptions). */
  survive?: boolean;
};

/** Zed's Claude Code ACP agent (the Claude Agent SDK, which bundles Claude Code). ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY in extraEnv. */
export const claudeCodeAcpCli: CliPackage = { package: '@zed-industries/claude-code-acp', version: '0.16.2', bin: 'claude-code-acp' };

export function claudeCodeAcpAdapter(options: AcpPresetOptions = {}): CliAdapter<AcpState> {
  return acpAdapter({
    id: 'claude-code-acp',
    command: [claudeCodeAcpCli.bin],
    cli: claudeCodeAcpCli,
    ...(options.binPath ? { binPath: options.binPath } : {}),
    env: { ...options.extraEnv },
    passEnv: CREDENTIAL_ENV.anthropic,
    ...(options.modelId ? { modelId: options.modelId } : {}),
    modelEnvVar: 'ANTHROPIC_MODEL',
    ...(options.survive === undefined ? {} : { survive: options.survive }),
  });
}

/** Zed's Codex ACP agent (a native binary). OPENAI_BASE_URL / OPENAI_API_KEY in extraEnv select a custom Responses provider. */
export const codexAcpCli: CliPackage = { package: '@zed-industries/codex-acp', version: '0.16.0', bin: 'codex-acp' };

export function codexAcpAdapter(options: AcpPresetOptions = {}): CliAdapter<AcpState> {
  const custom = options.extraEnv?.OPENAI_BASE_URL !== undefined;
  const config: Record<string, string | boolean> = {
    sandbox_mode: 'danger-full-access', // the harness sandbox is the isolation; Codex's bwrap needs namespaces it may not get
    'features.plugins': false,
    'analytics.enabled': false,
    ...(options.modelId ? { model: options.modelId } : {}),
    ...(custom
      ? { model_provider: 'harness', 'model_providers.harness.name': 'harness', 'model_providers.harness.base_url': options.extraEnv!.OPENAI_BASE_URL!, 'model_providers.harness.env_key': 'OPENAI_API_KEY', 'model_providers.harness.wire_api': 'responses' }
      : {}),
  };
  return acpAdapter({
    id: 'codex-acp',
    command: [codexAcpCli.bin, ...Object.entries(config).flatMap(([key, value]) => ['-c', `${key}=${JSON.stringify(value)}`])],
    cli: codexAcpCli,
    homeVars: ['CODEX_HOME'],
    // The session's permission mode as Codex's approval policy: untrusted commands then ask (session/request_permission).
    launchArgs: (ctx) => ['-c', `approval_policy=${JSON.stringify(ctx.permissionMode === 'allow-all' ? 'never' : 'untrusted')}`],
    ...(options.binPath ? { binPath: options.binPath } : {}),
    env: { ...options.extraEnv },
    passEnv: CREDENTIAL_ENV.openai,
    ...(options.modelId ? { modelId: options.modelId } : {}),
    ...(options.survive === undefined ? {} : { survive: options.survive }),
  });
}

/**
 * Qwen Code in ACP mode (`qwen --acp`), on an OpenAI-compatible endpoint: OPENAI_BASE_URL / OPENAI_API_KEY in extraEnv,
 * the model in `modelId`. It keeps MCP tools out of its tool list until its tool_search describes them, then calls
 * them through its tool_call tool (docs/acp.md#qwen-code).
 */
export const qwenCodeCli: CliPackage = { package: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' };

export function qwenCodeAdapter(options: AcpPresetOptions = {}): CliAdapter<AcpState> {
  return acpAdapter({
    id: 'qwen-code',
    command: [qwenCodeCli.bin, '--acp', '--auth-type', 'openai'],
    cli: qwenCodeCli,
    ...(options.binPath ? { binPath: options.binPath } : {}),
    // Its ACP mode discovers MCP servers in the background and does not wait for them before the model's first
    // request: a loaded machine then searched for the host tools before the bridge's server was listed. This has
    // session/new answer only once the servers are discovered.
    env: { QWEN_CODE_LEGACY_MCP_BLOCKING: '1', ...options.extraEnv },
    passEnv: CREDENTIAL_ENV.openai,
    ...(options.modelId ? { modelId: options.modelId } : {}),
    modelEnvVar: 'OPENAI_MODEL',
    ...(options.survive === undefined ? {} : { survive: options.survive }),
  });
}

/**
 * Google's Gemini CLI in ACP mode (`gemini --acp`), on a Google GenAI endpoint: GOOGLE_GEMINI_BASE_URL /
 * GEMINI_API_KEY in extraEnv, the model in `modelId`. Its settings file trusts the project folder (Gemini CLI
 * starts no MCP server, the bridge's host tools included, in a folder it does not trust; the harness sandbox is
 * the isolation) and turns its usage statistics off. Its prelude renames the saved chat files before each start,
 * which keeps a session loaded within the minute it began (docs/acp.md#gemini-cli).
 */
export const geminiCliCli: CliPackage = { package: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' };

export const geminiCliSettings = { security: { folderTrust: { enabled: false } }, privacy: { usageStatisticsEnabled: false } };

/**
 * Gemini CLI names a chat file `session-<minute>-<first 8 of the session id>.jsonl` and, starting a process that then
 * loads a session, first opens a fresh chat under that name for the same id: within the minute the session began,
 * that appends to the saved file and resets its messages, and `session/load` finds nothing to resume. Saved files
 * move aside (`-kept`) before the agent starts; Gemini CLI finds a session by the id inside the file, not its name.
 */
const geminiKeepChats = `for f in "$HOME"/.gemini/tmp/*/chats/session-*.jsonl; do
  case "$f" in *-kept.jsonl) continue ;; esac
  [ -f "$f" ] && mv -f "$f" "\${f%.jsonl}-kept.jsonl"
done`;

export function geminiCliAdapter(options: AcpPresetOptions = {}): CliAdapter<AcpState> {
  return acpAdapter({
    id: 'gemini-cli',
    command: [geminiCliCli.bin, '--acp'],
    cli: geminiCliCli,
    ...(options.binPath ? { binPath: options.binPath } : {}),
    env: { ...options.extraEnv },
    passEnv: CREDENTIAL_ENV.gemini,
    homeFiles: [{ path: '.gemini/settings.json', content: `${JSON.stringify(geminiCliSettings, null, 2)}\n` }],
    prelude: geminiKeepChats,
    // It answers session/load, then replays the history; the command list it sends next closes the replay.
    historyEndsWith: 'available_commands_update',
    // Its ACP file service takes any refused read for a failure (a JSON-RPC error never reaches it as ENOENT), so
    // writing a new file through the client fails: it reads and writes the project itself, inside the jail.
    clientFs: false,
    ...(options.modelId ? { modelId: options.modelId } : {}),
    modelEnvVar: 'GEMINI_MODEL',
    ...(options.survive === undefined ? {} : { survive: options.survive }),
  });
}
