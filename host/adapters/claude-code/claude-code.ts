// Claude Code 2.1.328 as a harness-bridge adapter: one long-lived
// `claude -p --input-format stream-json` process per session, fed user lines
// and control responses on stdin. Its stream-json is the kit's
// (host/adapter-kit/stream-json.ts: the translator, the stdin lines, the
// format's half of the launch spec); this file says how to run Claude Code —
// argv, env, the bridge's MCP endpoint in --mcp-config — and what its tools are
// (tools.ts: names, which ones edit files). Line shapes:
// test/fixtures/claude-code/README.md.
//
// Messages written while a turn runs: every user line carries a fresh `uuid`,
// and the launch's inputAck holds the turn open until Claude's
// `command_lifecycle` `started` names it, so the answer to a message Claude
// queued behind the turn's `result` stays in the turn
// (docs/bridge-internals.md#input-ack).
import { posix } from 'node:path';
import { defineCliAdapter, type CliAdapter, type LaunchContext } from '../../adapter-kit/adapter.ts';
import { cliBinPath, CREDENTIAL_ENV, npmCli, sessionLaunch, type CliAdapterOptions } from '../../adapter-kit/cli-launch.ts';
import type { PartWriter } from '../../adapter-kit/part-writer.ts';
import { skillDirectoryFiles } from '../../adapter-kit/skill-files.ts';
import { promptText } from '../../adapter-kit/stdin-encoders.ts';
import { streamJsonApproval, streamJsonInputAck, streamJsonLaunch, streamJsonThreadId, streamJsonTranslator, streamJsonUserLine, type StreamJsonState } from '../../adapter-kit/stream-json.ts';
import type { LaunchSpecInput } from '../../../protocol/v1/launch-spec.ts';
import { fileResult } from './lines.ts';
import { claudeCodeBuiltinTools, claudeToolName } from './tools.ts';

export const claudeCodeVersion = '2.1.328';
/** Our name for the bridge's MCP server: its tools reach the model as `mcp__host__<tool>`. */
const hostServer = 'host';
const id = 'claude-code';
const cli = { package: '@anthropic-ai/claude-code', version: claudeCodeVersion, bin: 'claude' };

export type ClaudeCodeOptions = CliAdapterOptions;
export type ClaudeCodeState = StreamJsonState;

/** Points the CLI at the bridge's MCP endpoint by reference: the bridge puts URL and token in the CLI's env and Claude expands `${VAR}` in --mcp-config (argv is journaled; the token must never be). */
export function hostMcpArgs(mcp: LaunchContext['mcp']): string[] {
  if (!mcp) return [];
  const server = { type: 'http', url: `\${${mcp.urlEnvVar}}`, headers: { Authorization: `Bearer \${${mcp.tokenEnvVar}}` } };
  return ['--mcp-config', JSON.stringify({ mcpServers: { [hostServer]: server } }), '--strict-mcp-config', '--allowedTools', `mcp__${hostServer}`];
}

function launch(options: ClaudeCodeOptions, ctx: LaunchContext): LaunchSpecInput {
  const home = posix.join(ctx.stateDir, 'claude-home');
  const mode = { 'allow-all': 'bypassPermissions', 'allow-edits': 'acceptEdits', 'allow-reads': 'default' }[ctx.permissionMode];
  const argv = [
    cliBinPath(cli, ctx, options.binPath),
    ...['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'],
    // Not `--resume <thread>`: the bridge reuses the live process only while argv stays the same. The config dir
    // is this session's alone, so --continue means our thread, and in an empty dir it starts one.
    '--continue',
    ...['--permission-mode', mode, ...(ctx.permissionMode === 'allow-all' ? [] : ['--permission-prompt-tool', 'stdio'])],
    // The turn's model (a per-turn choice, else options.modelId): a different one respawns the CLI, which --continue keeps on its thread.
    ...((ctx.modelId ?? options.modelId) ? ['--model', (ctx.modelId ?? options.modelId)!] : []),
    ...hostMcpArgs(ctx.mcp),
  ];
  const env = {
    HOME: home,
    CLAUDE_CONFIG_DIR: posix.join(home, '.claude'),
    ENABLE_TOOL_SEARCH: 'false', // else MCP tools hide behind ToolSearch
    ...(ctx.permissionMode === 'allow-all' ? { IS_SANDBOX: '1' } : {}), // sandboxes run as root, where bypass needs it
    ...CLAUDE_CODE_QUIET_ENV,
    ...options.extraEnv,
  };
  return sessionLaunch(ctx, options.survive, { argv, env, passEnv: CREDENTIAL_ENV.anthropic, ...streamJsonLaunch, inputAck: streamJsonInputAck });
}

/** A file tool's successful result (Write, Edit, NotebookEdit: toolUseKind 'edit') names the file it created or changed. */
function fileChange(result: { toolName: string; isError: boolean; toolUseResult: unknown }, out: PartWriter): void {
  const file = fileResult.safeParse(result.toolUseResult);
  if (file.success && !result.isError && claudeCodeBuiltinTools[result.toolName as 'write']?.toolUseKind === 'edit') {
    out.push({ type: 'file-change', event: file.data.type === 'create' ? 'create' : 'modify', path: file.data.filePath });
  }
}

/** What keeps Claude Code off the network but for its model (telemetry, updates, error reports). */
export const CLAUDE_CODE_QUIET_ENV = Object.freeze({ DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' });

/** Claude Code over the bridge. `binPath` overrides the bootstrapped CLI; `extraEnv` (e.g. ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY) wins over ours. */
export function claudeCodeAdapter(options: ClaudeCodeOptions = {}): CliAdapter<ClaudeCodeState> {
  return defineCliAdapter<ClaudeCodeState>({
    harnessId: id,
    builtinTools: claudeCodeBuiltinTools,
    supportsBuiltinToolApprovals: true,
    ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
    ...npmCli(cli, undefined, options.binPath),
    launch: (ctx) => launch(options, ctx),
    encodePrompt: (prompt) => streamJsonUserLine(promptText(prompt)),
    encodeUserMessage: (text) => streamJsonUserLine(text),
    encodeApproval: (answer, state) => streamJsonApproval(id, answer, state),
    encodeCompact: (instructions) => streamJsonUserLine(instructions ? `/compact ${instructions}` : '/compact'),
    skillFiles: skillDirectoryFiles('.claude/skills'),
    threadId: streamJsonThreadId,
    translator: streamJsonTranslator({ harnessId: id, cli: 'claude', toolName: claudeToolName, isHostTool: (name) => name.startsWith(`mcp__${hostServer}__`), onToolResult: fileChange }),
  });
}
