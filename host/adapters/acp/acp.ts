// Any Agent Client Protocol agent as a harness-bridge adapter (docs/acp.md): one long-lived agent
// process per session, parameterised by the agent's command. Every spawned process gets the
// handshake as launch `start` (initialize; plus session/load when the session has a thread), the
// first prompt of a session runs session/new as the kit's thread-start exchange (thread id = the
// ACP sessionId), prompts are session/prompt, abort is session/cancel. The agent's requests are
// answered by the kit's responder (fs confined to the project dir; permissions under allow-all)
// or, for permissions otherwise, become HarnessV1 approvals. The translator is a pure reducer of
// session/update notifications.
import { posix } from 'node:path';
import type { JSONValue } from '@ai-sdk/provider';
import { z } from 'zod';
import type { HarnessV1BootstrapFile } from '../../../protocol/harness-v1/bootstrap.ts';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import type { LaunchSpecInput } from '../../../protocol/v1/launch-spec.ts';
import { defineCliAdapter, type CliAdapter, type CliPackage, type LaunchContext } from '../../adapter-kit/adapter.ts';
import { cliBinPath, npmCli } from '../../adapter-kit/cli-launch.ts';
import { createLineBuffers, readJsonLine } from '../../adapter-kit/json-lines.ts';
import { createStreamState, partWriter } from '../../adapter-kit/part-writer.ts';
import { lineBuffersSchema, snapshotCodec, streamStateSchema, type SnapshotState } from '../../adapter-kit/snapshot.ts';
import { FileNotFoundError, jsonRpc, type CliRequest, type Responder, type ResponderIo } from '../../adapter-kit/responder.ts';
import { countsFromInclusiveInput, usageFromCounts } from '../../adapter-kit/usage.ts';
import { acpBuiltinTools, acpToolName } from './tools.ts';
import * as rpc from './rpc.ts';

export type AcpAgentOptions = {
  /** The adapter's harnessId (kebab-case): `claude-code-acp`, `codex-acp`, `my-agent`. */
  id: string;
  /** The agent's command line; `binPath` (when given) replaces argv[0]. */
  command: ReadonlyArray<string>;
  binPath?: string;
  /** Arguments added per launch (codex-acp takes its approval policy from the session's permission mode this way). */
  launchArgs?: (ctx: LaunchContext) => ReadonlyArray<string>;
  /** The npm package the agent comes from, pinned (the kit installs and caches it). */
  cli?: CliPackage;
  /** Env for the agent (its model endpoint and key go here). HOME defaults to `<stateDir>/acp-home`. */
  env?: Record<string, string>;
  /** Variables of the sandbox's environment the agent gets by name (its credentials; launch passEnv, docs/security.md#cli-env). */
  passEnv?: ReadonlyArray<string>;
  /** Env vars set to the agent's home dir too (CODEX_HOME for codex-acp): the bridge creates it, the agent may need it to exist. */
  homeVars?: ReadonlyArray<string>;
  /** The model to report on stream-start, and to pass in `modelEnvVar` when set. */
  modelId?: string;
  /** The env var through which the agent takes its model (ANTHROPIC_MODEL for claude-code-acp); unset: the agent's default. */
  modelEnvVar?: string;
  /**
   * The agent has ACP's loadSession (default true): a new process on a session with a thread resumes it
   * with session/load. False: docs/acp.md#resume (the live process keeps the thread; a new one refuses).
   */
  loadSession?: boolean;
  /** Advertise fs/read_text_file and fs/write_text_file (default true): the kit answers them inside the project dir. */
  clientFs?: boolean;
  /** Launch `survive` (default true), as the reference adapters take it (CliAdapterOptions). */
  survive?: boolean;
  /** Files the bootstrap recipe writes (a relative path lands under bootstrapDir; LaunchContext.bootstrapDir says where). */
  files?: ReadonlyArray<HarnessV1BootstrapFile>;
  /**
   * Files for the agent's HOME (its config: `.qwen/settings.json`, `.gemini/settings.json`), path relative to HOME.
   * The recipe writes them under `<bootstrapDir>/acp-home-files`; every launch copies them into HOME before the agent
   * starts (over the agent's own changes to them).
   */
  homeFiles?: ReadonlyArray<HarnessV1BootstrapFile>;
  /**
   * Shell run before the agent, in the agent's env and cwd (`sh -c '<prelude>\nexec "$@"' <agent argv>`): export a
   * variable computed from another, write a file that must name the bridge's MCP env (HARNESS_BRIDGE_MCP_URL is set).
   * The agent's argv (with `binPath` as argv[0]) stays the positional arguments, so neither is written by hand.
   */
  prelude?: string;
  /**
   * The session/update kind that ends the history a session/load replays, for an agent that replays it after answering
   * the load (Gemini CLI: `available_commands_update`). Unset: the history ends with the answer, as the ACP spec has it.
   * A refused load ends it at once.
   */
  historyEndsWith?: string;
};

/** What a snapshot holds: the state but `modelId` (configuration: restore takes the adapter's own). */
const snapshotShape = {
  lines: lineBuffersSchema,
  stream: streamStateSchema,
  /** The ACP sessionId this turn prompts (read from our session/prompt or session/load). */
  sessionId: z.string().nullable(),
  /** Our session/load is in flight in this turn: the history it replays as updates is not this turn's. */
  loading: z.boolean(),
  /** The prompt said allow-all: the responder answers permission requests, no approval part. */
  allowAll: z.boolean(),
  /** The agent's own calls by toolCallId, until their result: name and input so far, whether the call part went out, the files an edit touches. */
  tools: z.record(
    z.string(),
    z.strictObject({ name: z.string(), input: z.json(), emitted: z.boolean(), paths: z.array(z.string()), created: z.array(z.string()).optional() }),
  ),
  /** Tool call ids of the bridge's own MCP server in this turn. */
  hostCalls: z.record(z.string(), z.literal(true)),
  /** approvalId → the request's JSON-RPC id and the options to pick. */
  approvals: z.record(z.string(), z.strictObject({ id: z.union([z.string(), z.number()]), allow: z.string().nullable(), reject: z.string().nullable() })),
};
const snapshotVersion = 1;
export type AcpState = SnapshotState<typeof snapshotShape> & { modelId: string | undefined };
type ToolCall = AcpState['tools'][string];

const hostServerPrefix = 'mcp__host__';
/**
 * A call of the bridge's MCP server (named `host` in session/new), by its title: claude-code-acp titles it
 * `mcp__host__<tool>`, codex-acp `Tool: host/<tool>`, gemini-cli and Qwen Code `<tool> (host MCP Server)`.
 */
const isHostCall = (u: Pick<rpc.AcpUpdate, 'kind' | 'title' | 'content'>) =>
  acpToolName(u).startsWith(hostServerPrefix) || ((u.kind == null || u.kind === 'other') && /^Tool: host\/|^\S+ \(host MCP Server\)$/.test(u.title ?? ''));

/** Where the recipe puts homeFiles, relative to bootstrapDir. */
const homeFilesDir = 'acp-home-files';

function launchOf(o: AcpAgentOptions, ctx: LaunchContext): LaunchSpecInput {
  const agent = [...o.command, ...(o.launchArgs?.(ctx) ?? [])];
  if (o.binPath) agent[0] = o.binPath;
  const prelude = [
    ...(o.homeFiles?.length ? [`mkdir -p "$HOME" && cp -R ${shellQuote(posix.join(ctx.bootstrapDir, homeFilesDir))}/. "$HOME"/ || exit 126`] : []),
    ...(o.prelude ? [o.prelude] : []),
  ];
  const argv = prelude.length === 0 ? agent : ['sh', '-c', `${prelude.join('\n')}\nexec "$@"`, 'acp-agent', ...agent];
  const model = ctx.modelId ?? o.modelId;
  const home = posix.join(ctx.stateDir, 'acp-home');
  const steps: NonNullable<LaunchSpecInput['start']> = [{ input: rpc.initialize(o.clientFs !== false), until: [{ path: ['id'], equals: rpc.acpIds.initialize }] }];
  // A process on an existing thread loads it first (docs/acp.md#resume); session/new is the kit's thread-start turn.
  if (ctx.threadId !== undefined) steps.push({ input: rpc.loadSession(ctx.threadId, ctx.sessionWorkDir, ctx.mcp), until: [{ path: ['id'], equals: rpc.acpIds.loadSession }] });
  return {
    argv,
    env: { HOME: home, ...Object.fromEntries((o.homeVars ?? []).map((name) => [name, home])), ...(o.modelEnvVar && model ? { [o.modelEnvVar]: model } : {}), ...o.env },
    ...(o.passEnv ? { passEnv: [...o.passEnv] } : {}),
    cwd: ctx.sessionWorkDir,
    stdin: 'pipe',
    lifetime: 'session',
    start: steps,
    ...(ctx.mcp ? { stdinSecrets: [ctx.mcp.urlEnvVar, ctx.mcp.tokenEnvVar] } : {}),
    turnEnd: [{ json: { path: ['id'], equals: rpc.acpIds.prompt } }, { json: { path: ['id'], equals: rpc.acpIds.newSession } }],
    interrupt: { input: '' }, // session/cancel names the session: encodeInterrupt sends it
    ...(o.survive !== false ? { survive: true } : {}),
  };
}

const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

const finishOf = (stopReason: string | undefined) =>
  stopReason === 'end_turn'
    ? ({ unified: 'stop', raw: stopReason } as const)
    : stopReason === 'max_tokens'
      ? ({ unified: 'length', raw: stopReason } as const)
      : stopReason === 'refusal'
        ? ({ unified: 'content-filter', raw: stopReason } as const)
        : ({ unified: 'other', raw: stopReason ?? 'unknown' } as const);

/** Session-level updates with no place in the stream. */
const noise = new Set(['available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'usage_update', 'user_message_chunk']);

const step = (historyEndsWith: string | undefined) => (s: AcpState, record: JournalRecord): { state: AcpState; parts: HarnessV1StreamPart[] } => {
  const parts: HarnessV1StreamPart[] = [];
  const out = partWriter(s.stream, parts);
  if (s.stream.finished) return { state: s, parts };
  if (record.kind === 'turn-start') {
    const input = record.data.input ?? '';
    s.sessionId = /"sessionId":"([^"]+)"/.exec(input)?.[1] ?? s.sessionId;
    s.allowAll = input.includes(`"${rpc.metaKey}":{"permissionMode":"allow-all"}`);
    out.start(s.modelId);
  }
  if (record.kind === 'stdin' && record.data.text.includes(`"id":"${rpc.acpIds.loadSession}"`)) s.loading = true;
  if (record.kind === 'turn-end') out.endTurn(record, 'acp');
  const line = readJsonLine(s.lines, record, rpc.lineSchema);
  if (!line) return { state: s, parts };
  if (!line.ok || line.stream === 'stderr') {
    out.raw(line.stream === 'stderr' ? { stderr: line.json } : line.json);
    return { state: s, parts };
  }
  const L = line.value;
  if (!('method' in L)) {
    // An answer to one of our requests.
    if (L.id === rpc.acpIds.loadSession) s.loading = historyEndsWith !== undefined && !L.error;
    // The handshake's answers say nothing about the turn (a respawned process's turn has them, an earlier one not); a refusal is shown.
    const handshake = L.id === rpc.acpIds.initialize || L.id === rpc.acpIds.loadSession || L.id === rpc.acpIds.newSession;
    if (handshake && !L.error) return { state: s, parts };
    if (L.id !== rpc.acpIds.prompt) return out.raw(line.json), { state: s, parts };
    if (L.error) {
      const data = (L.error as { data?: unknown }).data;
      out.push({ type: 'error', error: { message: `the agent refused session/prompt: ${L.error.message}${data === undefined ? '' : ` ${JSON.stringify(data)}`}` } });
      out.finish({ unified: 'error', raw: 'session/prompt refused' });
      return { state: s, parts };
    }
    const u = rpc.promptUsage(L.result);
    const counts = u ? countsFromInclusiveInput({ input: u.inputTokens, cacheRead: u.cachedReadTokens, cacheWrite: u.cachedWriteTokens, output: u.outputTokens, reasoning: u.thoughtTokens }) : undefined;
    // ACP reports no model steps: the prompt's answer ends the one step this turn shows, with the turn's usage.
    out.endStep(finishOf(L.result?.stopReason), counts);
    out.finish(finishOf(L.result?.stopReason), usageFromCounts(counts));
    return { state: s, parts };
  }
  const { method, id: requestId, params } = L;
  if (method === 'session/update' && params?.update) {
    if (s.loading) {
      if (params.update.sessionUpdate === historyEndsWith) s.loading = false;
      return { state: s, parts };
    }
    update(s, out, params.update, record.seq);
  } else if (method === 'session/request_permission' && requestId !== undefined && params?.toolCall) {
    // The responder allows it: allow-all, or a call of the bridge's own MCP server (the host answers the call itself).
    if (s.allowAll || isHostCall(params.toolCall as rpc.AcpUpdate)) return { state: s, parts };
    const toolCallId = params.toolCall.toolCallId;
    const asked = params.toolCall as rpc.AcpUpdate;
    const call = (s.tools[toolCallId] ??= { name: acpToolName(asked), input: {}, emitted: false, paths: [] });
    // The request names the call again, often with its input (an agent may send it nowhere else): the call part says it.
    learn(call, asked);
    if (!call.emitted && JSON.stringify(call.input) === '{}') call.input = (describedInput(asked) ?? {}) as ToolCall['input'];
    emitCall(s, out, toolCallId, call);
    const options = params.options ?? [];
    // The first kind listed that the agent offers: once before always (the host approves this call, not the tool for good).
    const pick = (...kinds: string[]) => kinds.map((k) => options.find((o) => o.kind === k)).find((o) => o !== undefined)?.optionId ?? null;
    const approvalId = `acp-approval-${requestId}`;
    s.approvals[approvalId] = { id: requestId, allow: pick('allow_once', 'allow_always'), reject: pick('reject_once', 'reject_always') };
    out.push({ type: 'tool-approval-request', approvalId, toolCallId });
  } else if (method.startsWith('fs/')) {
    // Answered by the responder; nothing for the stream.
  } else out.raw(line.json);
  return { state: s, parts };
};

/**
 * A call's result: its text content when the agent sends one; else the output text of its rawOutput
 * (codex-acp: `formatted_output`, `aggregated_output`, `stdout`); else rawOutput as it is.
 */
function resultOf(text: string, raw: JSONValue | undefined): NonNullable<JSONValue> {
  if (text !== '') return text;
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const fields = raw as Record<string, JSONValue | undefined>;
    for (const key of ['formatted_output', 'aggregated_output', 'output', 'stdout']) {
      const value = fields[key];
      if (typeof value === 'string') return value;
    }
  }
  return raw ?? '';
}

/** What an update (or a permission request's toolCall) says about a call not yet emitted, and the files its diffs touch. */
function learn(call: ToolCall, u: rpc.AcpUpdate): void {
  // The files an edit call touches: its diff content (ACP's `locations` may also name files it only reads).
  for (const c of Array.isArray(u.content) ? u.content : []) {
    if (c.type !== 'diff' || !c.path) continue;
    if (!call.paths.includes(c.path)) call.paths.push(c.path);
    if (!c.oldText && !(call.created ??= []).includes(c.path)) call.created.push(c.path);
  }
  if (call.emitted) return;
  if (u.kind || u.title) call.name = acpToolName(u);
  if (u.rawInput !== undefined && JSON.stringify(u.rawInput) !== '{}') call.input = u.rawInput as ToolCall['input'];
}

/** A call's input when the agent sends no rawInput: what its diff, locations or title say (ACP requires none of them). */
function describedInput(u: rpc.AcpUpdate): NonNullable<JSONValue> | undefined {
  const diff = Array.isArray(u.content) ? u.content.find((c) => c.type === 'diff' && c.path) : undefined;
  if (diff) return { path: diff.path!, ...(diff.oldText ? { oldText: diff.oldText } : {}), ...(diff.newText === undefined ? {} : { newText: diff.newText }) };
  const locations = ((u as { locations?: Array<{ path?: unknown }> }).locations ?? []).map((l) => l.path).filter((p): p is string => typeof p === 'string');
  if (locations.length > 0) return { paths: locations };
  return u.title ? { title: u.title } : undefined;
}

function emitCall(s: AcpState, out: ReturnType<typeof partWriter>, toolCallId: string, call: ToolCall): void {
  if (call.emitted) return;
  call.emitted = true;
  out.close();
  out.push({ type: 'tool-call', toolCallId, toolName: call.name, input: JSON.stringify(call.input ?? {}), providerExecuted: true });
}

function update(s: AcpState, out: ReturnType<typeof partWriter>, u: rpc.AcpUpdate, seq: number): void {
  const kind = u.sessionUpdate;
  if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
    const type = kind === 'agent_message_chunk' ? 'text' : 'reasoning';
    const text = !Array.isArray(u.content) && u.content?.type === 'text' ? u.content.text : undefined;
    if (s.stream.block?.type !== type) out.open(type, `${type}-${seq}`);
    out.delta(text);
  } else if ((kind === 'tool_call' || kind === 'tool_call_update') && u.toolCallId) {
    const name = acpToolName(u);
    // The kit emits host calls from the bridge's tool-call records; later updates of one may lack its title.
    if (isHostCall(u)) s.hostCalls[u.toolCallId] = true;
    if (s.hostCalls[u.toolCallId]) return;
    const call = (s.tools[u.toolCallId] ??= { name, input: {}, emitted: false, paths: [] });
    learn(call, u);
    const status = u.status ?? (kind === 'tool_call' ? 'pending' : undefined);
    // Announced while its input still streams (pending, input {}): the call part waits for its input or its run.
    if (JSON.stringify(call.input) !== '{}' || status === 'in_progress' || status === 'completed' || status === 'failed') emitCall(s, out, u.toolCallId, call);
    if (status === 'completed' || status === 'failed') {
      const text = Array.isArray(u.content) ? u.content.map((c) => c.content?.text ?? '').join('') : '';
      out.push({ type: 'tool-result', toolCallId: u.toolCallId, toolName: call.name, result: resultOf(text, u.rawOutput as JSONValue | undefined), isError: status === 'failed' });
      // A diff without old text made the file: create; any other diff changed it (whatever the call's name).
      if (status === 'completed') for (const path of call.paths) out.push({ type: 'file-change', event: call.created?.includes(path) ? 'create' : 'modify', path });
      delete s.tools[u.toolCallId];
    }
  } else if (!noise.has(kind)) out.raw({ sessionUpdate: kind, ...(u as object) });
}

/**
 * The responder: fs requests inside the project dir; a permission request under allow-all is
 * allowed (otherwise it is the host's approval, answered by encodeApproval); anything else gets
 * JSON-RPC "method not found", so the agent never waits on us.
 */
export function acpResponder(): Responder {
  return {
    request: jsonRpc.request,
    answered: jsonRpc.answered,
    async answer(request: CliRequest, io: ResponderIo): Promise<string | undefined> {
      const p = (request.params ?? {}) as { path?: string; content?: string; line?: number | null; limit?: number | null; options?: Array<{ optionId: string; kind: string }> };
      try {
        if (request.method === 'session/request_permission') {
          const call = (request.params as { toolCall?: rpc.AcpUpdate } | undefined)?.toolCall;
          if (io.permissionMode !== 'allow-all' && !(call && isHostCall(call))) return undefined; // the host's approval (translator)
          const allow = p.options?.find((o) => o.kind === 'allow_once') ?? p.options?.find((o) => o.kind === 'allow_always');
          return jsonRpc.result(request.key, allow ? { outcome: { outcome: 'selected', optionId: allow.optionId } } : { outcome: { outcome: 'cancelled' } });
        }
        if (request.method === 'fs/read_text_file') {
          const text = await io.readTextFile(String(p.path));
          const lines = text.split('\n');
          const from = Math.max(0, (p.line ?? 1) - 1);
          const content = p.line == null && p.limit == null ? text : lines.slice(from, p.limit == null ? undefined : from + p.limit).join('\n');
          return jsonRpc.result(request.key, { content });
        }
        if (request.method === 'fs/write_text_file') {
          await io.writeTextFile(String(p.path), String(p.content ?? ''));
          return jsonRpc.result(request.key, null);
        }
        return jsonRpc.error(request.key, -32601, `harness-bridge does not serve ${request.method}`);
      } catch (error) {
        // ACP's "Resource not found" (-32002): agents tell a new file from a failed read by it (Gemini CLI by its message).
        if (error instanceof FileNotFoundError) return jsonRpc.error(request.key, -32002, `Resource not found: ${error.path}`);
        return jsonRpc.error(request.key, -32000, (error as Error).message);
      }
    },
  };
}

/** The recipe's part: the agent's npm install (none with a binPath), its files and its home files. */
function installOf(o: AcpAgentOptions): Pick<CliAdapter<AcpState>, 'cli' | 'install'> {
  const home = (o.homeFiles ?? []).map((f) => {
    const path = posix.normalize(f.path);
    if (path.startsWith('/') || path === '..' || path.startsWith('../') || path === '.') throw new RangeError(`acp ${o.id}: homeFiles path ${JSON.stringify(f.path)} must be relative to HOME and stay inside it`);
    return { path: posix.join(homeFilesDir, path), content: f.content };
  });
  const files = [...(o.files ?? []), ...home];
  if (o.cli) return npmCli(o.cli, files.length > 0 ? files : undefined, o.binPath);
  return files.length > 0 ? { install: { files } } : {};
}

/** Any ACP agent over the bridge. */
export function acpAdapter(o: AcpAgentOptions): CliAdapter<AcpState> {
  return defineCliAdapter<AcpState>({
    harnessId: o.id,
    builtinTools: acpBuiltinTools,
    supportsBuiltinToolApprovals: true,
    ...(o.modelId === undefined ? {} : { modelId: o.modelId }),
    ...installOf(o),
    launch: (ctx) => launchOf(o.cli && !o.binPath ? { ...o, binPath: cliBinPath(o.cli, ctx) } : o, ctx),
    encodeThreadStart: (context) => {
      if (!context) throw new Error('acp: session/new needs the thread-start context (the kit always passes it)');
      return rpc.newSession(context.sessionWorkDir, context.mcp);
    },
    encodePrompt: ({ text, instructions, threadId, permissionMode }) => {
      if (threadId === undefined) throw new Error('acp: no session yet (the kit runs session/new first)');
      return rpc.prompt(threadId, instructions ? `${instructions}\n\n${text}` : text, permissionMode ?? 'allow-all');
    },
    encodeInterrupt: (state) => (state.sessionId ? rpc.cancel(state.sessionId) : undefined),
    encodeApproval: ({ approvalId, approved }, state) => {
      const a = state.approvals[approvalId];
      if (!a) throw new Error(`acp: no permission request ${approvalId} in this turn`);
      const optionId = approved ? a.allow : a.reject;
      return rpc.result(a.id, optionId ? { outcome: { outcome: 'selected', optionId } } : { outcome: { outcome: 'cancelled' } });
    },
    threadId: (record) => (record.kind === 'stdout' ? rpc.sessionIdOf(record.data.text) : undefined),
    responder: acpResponder(),
    translator: {
      init: () => ({ lines: createLineBuffers(), stream: createStreamState(), modelId: o.modelId, sessionId: null, loading: false, allowAll: false, tools: {}, hostCalls: {}, approvals: {} }),
      step: step(o.historyEndsWith),
      ...snapshotCodec(o.id, snapshotVersion, snapshotShape, { modelId: o.modelId }),
    },
  });
}
