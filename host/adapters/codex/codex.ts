// Codex CLI 0.169.0 as a harness-bridge adapter: one long-lived `codex app-server`
// per session, driven with JSON-RPC lines on stdin (rpc.ts), its
// notifications and approval requests translated into HarnessV1 parts by a pure
// reducer. Transport, slices, host tools over the bridge's MCP endpoint and
// recovery are the kit's. Line shapes: test/fixtures/codex/README.md.
import { posix } from 'node:path';
import { z } from 'zod';
import type { LaunchSpecInput } from '../../../protocol/v1/launch-spec.ts';
import { defineCliAdapter, type CliAdapter, type LaunchContext } from '../../adapter-kit/adapter.ts';
import { cliBinPath, CREDENTIAL_ENV, npmCli, sessionLaunch, type CliAdapterOptions } from '../../adapter-kit/cli-launch.ts';
import { createLineBuffers, readJsonLine } from '../../adapter-kit/json-lines.ts';
import { createStreamState, writerStep } from '../../adapter-kit/part-writer.ts';
import { lineBuffersSchema, snapshotCodec, streamStateSchema, type SnapshotState } from '../../adapter-kit/snapshot.ts';
import { compactBetweenTurns, promptText } from '../../adapter-kit/stdin-encoders.ts';
import { countsFromInclusiveInput } from '../../adapter-kit/usage.ts';
import { lineSchema, type Counts, type Item } from './lines.ts';
import * as rpc from './rpc.ts';
import { codexBuiltinTools, codexItemTools, codexToolName } from './tools.ts';

export const codexVersion = '0.169.0';
const id = 'codex';
/** Our name for the bridge's MCP server (Codex shows its tools to the model in namespace `mcp__host`). */
const hostServer = 'host';

const cli = { package: '@openai/codex', version: codexVersion, bin: 'codex' };

export type CodexOptions = CliAdapterOptions;

const toml = (value: string | boolean) => JSON.stringify(value); // a JSON string or boolean is a TOML one

export function codexLaunch(options: CodexOptions, ctx: LaunchContext): LaunchSpecInput {
  const home = posix.join(ctx.stateDir, 'codex-home');
  const custom = options.extraEnv?.OPENAI_BASE_URL !== undefined;
  const config: Record<string, string | boolean> = {
    sandbox_mode: 'danger-full-access', // the harness sandbox is the isolation; Codex's bwrap needs namespaces it may not get
    'features.plugins': false, // no plugin sync look-ups at start-up
    'analytics.enabled': false,
    ...((ctx.modelId ?? options.modelId) ? { model: (ctx.modelId ?? options.modelId)! } : {}), // the turn's model (a per-turn choice, else options.modelId)
    ...(custom ? { model_provider: 'harness', 'model_providers.harness.name': 'harness', 'model_providers.harness.env_key': 'OPENAI_API_KEY', 'model_providers.harness.wire_api': 'responses' } : {}),
    ...(ctx.mcp ? { 'mcp_servers.host.bearer_token_env_var': ctx.mcp.tokenEnvVar, 'mcp_servers.host.default_tools_approval_mode': 'approve' } : {}),
  };
  // Values only the spawned process knows (the MCP port changes per bridge) are read by sh from env, so argv holds names only.
  const fromEnv: Record<string, string> = { ...(ctx.mcp ? { 'mcp_servers.host.url': ctx.mcp.urlEnvVar } : {}), ...(custom ? { 'model_providers.harness.base_url': 'OPENAI_BASE_URL' } : {}) };
  const script = `mkdir -p "$CODEX_HOME" && exec "$0" "$@"${Object.entries(fromEnv).map(([key, env]) => ` -c "${key}=\\"$${env}\\""`).join('')}`;
  return sessionLaunch(ctx, options.survive, {
    argv: ['sh', '-c', script, cliBinPath(cli, ctx, options.binPath), 'app-server', ...Object.entries(config).flatMap(([key, value]) => ['-c', `${key}=${toml(value)}`])],
    env: { HOME: home, CODEX_HOME: posix.join(home, '.codex'), ...options.extraEnv },
    passEnv: CREDENTIAL_ENV.openai,
    turnEnd: [
      { prefix: '{"method":"turn/completed"' }, // a prefix also fires on a split line (it repeats the turn's items)
      { prefix: `{"id":"${rpc.rpcIds.threadStart}",` }, // the kit's thread-start exchange
      { regex: `^\\{"error":.*"id":"(${rpc.rpcIds.turnStart}|${rpc.rpcIds.threadStart}|${rpc.rpcIds.compactStart})"\\}$` }, // refused: no turn/completed follows
    ],
    interrupt: { input: '' }, // turn/interrupt names the running turn: encodeInterrupt sends it
  });
}

/** What a snapshot holds: the state but `modelId` (configuration, not state: restore takes the adapter's own). */
const snapshotShape = {
  lines: lineBuffersSchema,
  stream: streamStateSchema,
  /** Codex's own thread id, and the id of its running turn once turn/started said so (turn/steer and turn/interrupt name them). */
  threadId: z.string().nullable(),
  turnId: z.string().nullable(),
  /** approvalId → Codex's JSON-RPC request id, for encodeApproval. */
  approvals: z.record(z.string(), z.union([z.string(), z.number()])),
  /** This turn is our thread/compact/start (doCompact): its compaction is manual, any other auto. */
  compact: z.boolean(),
};
export type CodexState = SnapshotState<typeof snapshotShape> & { modelId: string | undefined };
const snapshotVersion = 2;

const toCounts = (c: Counts) =>
  countsFromInclusiveInput({ input: c.inputTokens, cacheRead: c.cachedInputTokens, cacheWrite: c.cacheWriteInputTokens, output: c.outputTokens, reasoning: c.reasoningOutputTokens });
const callInput = (it: Item) =>
  it.type === 'fileChange' ? { changes: (it.changes ?? []).map((c) => ({ path: c.path, kind: c.kind.type, diff: c.diff })) } : it.type === 'webSearch' ? { query: it.query } : { command: it.command, cwd: it.cwd };
const fileEvents: Record<string, 'create' | 'modify' | 'delete'> = { add: 'create', update: 'modify', delete: 'delete' };
/** Session-level notifications that race the turn's start (they land in it or between turns): no part, so runs compare equal. */
const sessionNoise = new Set(['thread/started', 'mcpServer/startupStatus/updated', 'remoteControl/status/changed']);

const step = writerStep<CodexState>((s, record, out) => {
  if (record.kind === 'turn-start') {
    s.threadId = /"threadId":"([^"]+)"/.exec(record.data.input ?? '')?.[1] ?? null; // our turn/start names it
    s.compact = (record.data.input ?? '').includes(`"id":"${rpc.rpcIds.compactStart}"`);
    out.start(s.modelId);
  }
  if (record.kind === 'turn-end') out.endTurn(record, id);
  const line = readJsonLine(s.lines, record, lineSchema);
  if (!line) return;
  if (!line.ok || line.stream === 'stderr') out.rawLine(line);
  else if (!('method' in line.value)) {
    const L = line.value; // an answer to one of our requests
    // The turn/start answer names the turn before Codex runs it: turn/interrupt then fails "no active
    // turn to interrupt". turnId is set by turn/started, once the turn can be interrupted and steered.
    const request = L.id === rpc.rpcIds.turnStart ? 'turn/start' : L.id === rpc.rpcIds.compactStart ? 'thread/compact/start' : undefined;
    if (!request || !L.error) return out.rawLine(line);
    out.push({ type: 'error', error: { message: `codex refused ${request}: ${L.error.message}` } });
    out.finish({ unified: 'error', raw: `${request} refused` });
  } else {
    const { method, id: requestId, params: p = {} } = line.value;
    const it = p.item;
    const tool = it ? codexItemTools[it.type] : undefined;
    const block = it?.type === 'agentMessage' ? 'text' : it?.type === 'reasoning' ? 'reasoning' : undefined;
    if (sessionNoise.has(method)) return;
    if (requestId !== undefined && /^item\/(commandExecution|fileChange)\/requestApproval$/.test(method) && p.itemId) {
      const approvalId = `codex-approval-${requestId}`;
      s.approvals[approvalId] = requestId;
      out.push({ type: 'tool-approval-request', approvalId, toolCallId: p.itemId });
    } else if (method === 'turn/started' && p.turn) {
      s.turnId = p.turn.id;
      out.rawLine(line);
    } else if (method === 'item/started' && it && block) {
      out.releaseStep();
      out.open(block, `${block}-${record.seq}`, it.id);
    } else if (method === 'item/started' && it && (tool || (it.type === 'mcpToolCall' && it.server))) {
      out.releaseStep();
      if (it.server === hostServer) return; // the kit emits host calls from the bridge's tool-call records
      const toolName = codexToolName(it) ?? `mcp__${it.server}__${it.tool}`;
      out.toolCall({ toolCallId: it.id, toolName, input: tool ? callInput(it) : it.arguments, nativeName: tool?.nativeName ?? toolName });
    } else if (/^item\/(agentMessage\/delta|reasoning\/(summaryTextDelta|textDelta))$/.test(method) && p.itemId) out.delta(p.delta, p.itemId);
    else if (method === 'item/completed' && it && block) {
      const text = it.type === 'agentMessage' ? it.text : [...(it.summary ?? []), ...(it.content ?? [])].join('\n');
      out.endBlock(block, `${it.type}-${record.seq}`, it.id, text); // the whole text, for an item that did not stream
    } else if (method === 'item/completed' && it && out.call(it.id)) {
      const failed = it.status !== 'completed' || (it.exitCode ?? 0) !== 0;
      const result = it.type === 'commandExecution' ? (it.aggregatedOutput ?? it.status ?? '') : it.type === 'fileChange' ? (it.status ?? '') : (it.result ?? it.error ?? '');
      out.toolResult(it.id, { result, isError: failed, ...(it.exitCode == null ? {} : { providerMetadata: { [id]: { exitCode: it.exitCode } } }) });
      for (const c of failed ? [] : (it.changes ?? [])) if (fileEvents[c.kind.type]) out.push({ type: 'file-change', event: fileEvents[c.kind.type]!, path: c.path });
    } else if (method === 'item/completed' && it?.type === 'contextCompaction') {
      // Codex keeps the summary to itself (the item has only an id); the next model request carries it.
      out.push({ type: 'compaction', trigger: s.compact ? 'manual' : 'auto', summary: '' });
    } else if (method === 'thread/tokenUsage/updated' && p.tokenUsage) {
      // Its finish-step waits: whether this response was the turn's last is known only at what comes next.
      out.holdStep(toCounts(p.tokenUsage.last));
    } else if (method === 'turn/completed' && p.turn) {
      const { status, error } = p.turn;
      // An interrupted turn: unified 'other', raw 'interrupted' (no unified 'interrupted' exists; docs/adapter-notes.md#finish-reasons).
      const unified = status === 'completed' ? 'stop' : status === 'interrupted' ? 'other' : 'error';
      out.releaseStep({ unified, raw: status === 'interrupted' ? status : undefined });
      if (unified === 'error') out.push({ type: 'error', error: { message: error?.message ?? `codex turn ${status}`, codexErrorInfo: error?.codexErrorInfo ?? null } });
      out.finish({ unified, raw: status }); // no Codex ids: they differ per session, parts must not
    } else out.rawLine(line);
  }
});

/**
 * Codex over the bridge. `binPath` overrides the bootstrapped CLI; `extraEnv` is added to its env: `OPENAI_BASE_URL`
 * there (ignored by Codex itself) selects a custom Responses provider, keyed by `OPENAI_API_KEY`.
 */
export function codexAdapter(options: CodexOptions = {}): CliAdapter<CodexState> {
  return defineCliAdapter<CodexState>({
    harnessId: id,
    builtinTools: codexBuiltinTools,
    supportsBuiltinToolApprovals: true,
    ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
    ...npmCli(cli, undefined, options.binPath),
    launch: (ctx) => codexLaunch(options, ctx),
    encodeThreadStart: () => rpc.threadStart(),
    encodePrompt: (prompt) => {
      if (prompt.threadId === undefined) throw new Error('codex: no thread yet (the kit runs encodeThreadStart first)');
      return rpc.turnStart(prompt.threadId, promptText(prompt), prompt.permissionMode === 'allow-all' ? 'never' : 'untrusted');
    },
    encodeUserMessage: (text, state) => {
      if (!state.threadId || !state.turnId) throw new Error('codex: the turn has not started yet; send the message once its first part arrived');
      return rpc.turnSteer(state.threadId, state.turnId, text);
    },
    // thread/compact/start takes no instructions: customInstructions are not Codex's to follow.
    encodeCompact: (_instructions, context) => rpc.compactStart(compactBetweenTurns(id, context, 'thread/compact/start interrupts a running turn')),
    encodeInterrupt: (state) => (state.threadId && state.turnId ? rpc.turnInterrupt(state.threadId, state.turnId) : undefined),
    encodeApproval: ({ approvalId, approved }, state) => {
      const requestId = state.approvals[approvalId];
      if (requestId === undefined) throw new Error(`codex: no approval request ${approvalId} in this turn`);
      return rpc.response(requestId, { decision: approved ? 'accept' : 'decline' });
    },
    threadId: (record) => (record.kind === 'stdout' ? rpc.threadIdOf(record.data.text) : undefined),
    translator: {
      init: () => ({ lines: createLineBuffers(), stream: createStreamState(), modelId: options.modelId, threadId: null, turnId: null, approvals: {}, compact: false }),
      step,
      ...snapshotCodec(id, snapshotVersion, snapshotShape, { modelId: options.modelId }),
    },
  });
}
