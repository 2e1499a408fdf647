// Claude Code 2.1.328 as a harness-bridge adapter: one long-lived
// `claude -p --input-format stream-json` process per session, fed user lines
// and control responses on stdin, its stream-json lines translated into
// HarnessV1 parts by a pure reducer. Transport, slices, host tools over the
// bridge's MCP endpoint and recovery are the kit's; line joining and Anthropic
// usage are host/adapter-kit's. Line shapes: test/fixtures/claude-code/README.md.
//
// Messages written while a turn runs: every user line carries a fresh `uuid`,
// and the launch's inputAck holds the turn open until Claude's
// `command_lifecycle` `started` names it, so the answer to a message Claude
// queued behind the turn's `result` stays in the turn
// (docs/bridge-internals.md#input-ack). The translator therefore finishes at
// the turn-end record, from the last `result` (usage summed over the turn's results).
//
// Snapshots (Translator.snapshot / restore): the whole state, tagged claude-code
// v1 and validated on restore — the turn's results so far, the open step, the
// builtin tool names and pending permission inputs, a line still being joined.
// A permission input is dropped once its answer is journaled (the stdin record
// of our control_response), so a turn with many approvals keeps snapshots small.
import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { z } from 'zod';
import type { JSONValue, LanguageModelV4FinishReason } from '@ai-sdk/provider';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { finishReasonSchema } from '../../../protocol/harness-v1/stream-part-schema.ts';
import type { LaunchSpecInput } from '../../../protocol/v1/launch-spec.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';
import { PROTOCOL_LIMITS_V1 } from '../../../protocol/v1/limits.ts';
import { defineCliAdapter, type CliAdapter, type LaunchContext } from '../../adapter-kit/adapter.ts';
import { anthropicFinishReason, anthropicUsage, anthropicUsageSchema, mergeAnthropicUsage, type AnthropicUsage } from '../../adapter-kit/anthropic-usage.ts';
import { createLineBuffers, parseJsonObject, readJsonLine, type LineBuffers } from '../../adapter-kit/json-lines.ts';
import { createStreamState, partWriter, type StreamState } from '../../adapter-kit/part-writer.ts';
import { lineBuffersSchema, readSnapshot, streamStateSchema, takeSnapshot } from '../../adapter-kit/snapshot.ts';
import { fileResult, lineSchema, type Block } from './lines.ts';
import { claudeCodeBuiltinTools, claudeToolName } from './tools.ts';

export const claudeCodeVersion = '2.1.328';
/** Our name for the bridge's MCP server: its tools reach the model as `mcp__host__<tool>`. */
const hostServer = 'host';
const id = 'claude-code';

export type ClaudeCodeOptions = {
  modelId?: string;
  binPath?: string;
  extraEnv?: Record<string, string>;
  /**
   * Launch `survive` (pipes only): the CLI runs under a keeper, outlives a SIGKILLed bridge and is re-adopted by the
   * next bridge on the state dir, so a resume after a bridge crash is lossless (replay rung only, no rerun).
   * Default false: a host tool call in flight at the crash is lost and the turn still reads as lossless, where
   * without survive it is rerun, marked recomputed (docs/bridge-internals.md#survive-in-flight-tool-call).
   */
  survive?: boolean;
};


export type ClaudeCodeState = {
  rerun: boolean;
  lines: LineBuffers;
  stream: StreamState;
  /** The message whose blocks arrive as stream_event deltas: its full `assistant` lines repeat them, so only their tool_use blocks count. */
  streamed: string | null;
  step: { id: string; usage: AnthropicUsage | undefined; stop: string | null; tools: boolean } | null;
  /** Builtin tool_use id → toolName. Host tools are absent: the kit emits those calls from the bridge's records. */
  tools: Record<string, string>;
  /** The builtin tool_use block whose input is streaming (tool-input-* parts); absent when none is (so older hosts still read the snapshot). */
  input?: string;
  /** Pending `can_use_tool` requests (request_id → the tool input), for encodeApproval; dropped once the answer's stdin record is seen. */
  approvals: Record<string, Block['input']>;
  compaction: { trigger: 'manual' | 'auto'; tokensBefore?: number; tokensAfter?: number } | null;
  /** The turn's `result` lines so far, summed; `last` is the latest run's, until another run starts. The finish is made from them at turn-end. */
  results: { usage: AnthropicUsage | undefined; numTurns: number | undefined; costUsd: number | undefined; last: LanguageModelV4FinishReason | null } | null;
};

/**
 * A snapshot holds the whole state (rerun too: restore gets no turn). JSON drops undefined values; the
 * transforms put back the keys the state type declares (a finish reason's `raw`, a step's `usage`). A usage
 * object is checked against the line schema's and kept as it is (a parse would reorder its keys).
 */
const savedUsage = z.custom<AnthropicUsage>((value) => anthropicUsageSchema.safeParse(value).success, 'not an Anthropic usage object').optional();
const snapshotShape = {
  rerun: z.boolean(),
  lines: lineBuffersSchema,
  stream: streamStateSchema,
  streamed: z.string().nullable(),
  step: z
    .strictObject({ id: z.string(), usage: savedUsage, stop: z.string().nullable(), tools: z.boolean() })
    .transform(({ id: stepId, usage: stepUsage, stop, tools }) => ({ id: stepId, usage: stepUsage, stop, tools }))
    .nullable(),
  tools: z.record(z.string(), z.string()),
  input: z.string().optional(),
  approvals: z.record(z.string(), z.json()),
  compaction: z.strictObject({ trigger: z.enum(['manual', 'auto']), tokensBefore: z.number().optional(), tokensAfter: z.number().optional() }).nullable(),
  results: z
    .strictObject({ usage: savedUsage, numTurns: z.number().optional(), costUsd: z.number().optional(), last: finishReasonSchema.nullable() })
    .transform(({ usage: sum, numTurns, costUsd, last }) => ({ usage: sum, numTurns, costUsd, last }))
    .nullable(),
};
const snapshotVersion = 1;

const stdinLine = (value: unknown) => `${JSON.stringify(value)}\n`;
/** A user message. The uuid names it in Claude's command_lifecycle lines ("started" is the inputAck the bridge waits for). */
const userLine = (content: string) => stdinLine({ type: 'user', uuid: randomUUID(), message: { role: 'user', content } });

/** request_ids our control_response lines in a stdin record answer (the host wrote them through encodeApproval). */
function answeredRequests(text: string): string[] {
  if (!text.includes('"control_response"')) return [];
  const ids: string[] = [];
  for (const line of text.split('\n')) {
    const json = parseJsonObject(line) as { type?: unknown; response?: { request_id?: unknown } } | undefined;
    if (json?.type === 'control_response' && typeof json.response?.request_id === 'string') ids.push(json.response.request_id);
  }
  return ids;
}

/** Counts of two Anthropic usage reports added up (other keys: the later report's). */
function addUsage(a: AnthropicUsage | undefined, b: AnthropicUsage | undefined): AnthropicUsage | undefined {
  if (!a || !b) return b ?? a;
  const sum: AnthropicUsage = { ...b };
  for (const key of ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const) {
    const [x, y] = [a[key], b[key]];
    if (typeof x === 'number' || typeof y === 'number') sum[key] = (x ?? 0) + (y ?? 0);
  }
  return sum;
}

/** Points the CLI at the bridge's MCP endpoint by reference: the bridge puts URL and token in the CLI's env and Claude expands `${VAR}` in --mcp-config (argv is journaled; the token must never be). */
export function hostMcpArgs(mcp: LaunchContext['mcp']): string[] {
  if (!mcp) return [];
  const server = { type: 'http', url: `\${${mcp.urlEnvVar}}`, headers: { Authorization: `Bearer \${${mcp.tokenEnvVar}}` } };
  return ['--mcp-config', JSON.stringify({ mcpServers: { [hostServer]: server } }), '--strict-mcp-config', '--allowedTools', `mcp__${hostServer}`];
}

function launch(options: ClaudeCodeOptions, ctx: LaunchContext): LaunchSpecInput {
  const home = posix.join(ctx.stateDir, 'claude-home');
  const mode = { 'allow-all': 'bypassPermissions', 'allow-edits': 'acceptEdits', 'allow-reads': 'default' }[ctx.permissionMode];
  return {
    argv: [
      options.binPath ?? posix.join(ctx.bootstrapDir, 'cli/node_modules/.bin/claude'),
      ...['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'],
      // Not `--resume <thread>`: the bridge reuses the live process only while argv stays the same. The config dir
      // is this session's alone, so --continue means our thread, and in an empty dir it starts one.
      '--continue',
      ...['--permission-mode', mode, ...(ctx.permissionMode === 'allow-all' ? [] : ['--permission-prompt-tool', 'stdio'])],
      // The turn's model (a per-turn choice, else options.modelId): a different one respawns the CLI, which --continue keeps on its thread.
      ...((ctx.modelId ?? options.modelId) ? ['--model', (ctx.modelId ?? options.modelId)!] : []),
      ...hostMcpArgs(ctx.mcp),
    ],
    env: {
      HOME: home,
      CLAUDE_CONFIG_DIR: posix.join(home, '.claude'),
      ENABLE_TOOL_SEARCH: 'false', // else MCP tools hide behind ToolSearch
      ...(ctx.permissionMode === 'allow-all' ? { IS_SANDBOX: '1' } : {}), // sandboxes run as root, where bypass needs it
      ...{ DISABLE_TELEMETRY: '1', DISABLE_AUTOUPDATER: '1', DISABLE_ERROR_REPORTING: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
      ...options.extraEnv,
    },
    cwd: ctx.sessionWorkDir,
    stdin: 'pipe',
    io: { mode: 'pipes', maxLineBytes: PROTOCOL_LIMITS_V1.maxLineBytesCeiling }, // the most there is: turnEnd only matches a line the bridge did not split
    lifetime: 'session',
    turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }],
    // A user line's uuid is pending until Claude takes the message up; the result of the run that answers it ends the turn.
    inputAck: {
      inputId: ['uuid'],
      when: [
        { path: ['type'], equals: 'command_lifecycle' },
        { path: ['state'], equals: 'started' },
      ],
      ackId: ['command_uuid'],
    },
    interrupt: { input: stdinLine({ type: 'control_request', request_id: 'harness-bridge-interrupt', request: { subtype: 'interrupt' } }) },
    ...(options.survive === true ? { survive: true } : {}), // opt-in: see ClaudeCodeOptions.survive
  };
}

function step(s: ClaudeCodeState, record: JournalRecord): { state: ClaudeCodeState; parts: HarnessV1StreamPart[] } {
  const parts: HarnessV1StreamPart[] = [];
  const out = partWriter(s.stream, parts);
  const closeStep = (stopReason?: string | null) => {
    const current = s.step;
    s.step = null;
    if (!current) return out.close();
    const stop = current.stop ?? stopReason;
    const reason = stop === 'aborted' ? { unified: 'other' as const, raw: stop } : anthropicFinishReason(stop, current.tools ? 'tool-calls' : 'stop');
    out.finishStep(reason, anthropicUsage(current.usage));
  };
  const openStep = (messageId: string, stepUsage: AnthropicUsage | undefined) => {
    closeStep();
    s.step = { id: messageId, usage: stepUsage, stop: null, tools: false };
  };
  const compaction = (summary: string) => {
    if (s.compaction) out.push({ type: 'compaction', ...s.compaction, summary });
    s.compaction = null;
  };
  const toolCall = (b: Block) => {
    if (!b.id || !b.name) return;
    if (s.step) s.step.tools = true;
    if (b.name.startsWith(`mcp__${hostServer}__`)) return; // the kit emits host calls from the bridge's tool-call records
    if (s.input === b.id) {
      // Claude prints the block's assistant line before its content_block_stop: the input ends here, before the call.
      out.push({ type: 'tool-input-end', id: b.id });
      delete s.input;
    }
    const toolName = (s.tools[b.id] = claudeToolName(b.name));
    out.push({ type: 'tool-call', toolCallId: b.id, toolName, input: JSON.stringify(b.input ?? {}), providerExecuted: true, nativeName: b.name });
  };

  if (s.stream.finished) return { state: s, parts };
  if (record.kind === 'turn-start' && s.rerun) out.start(); // the kit marks a rerun on the turn-start's stream-start
  if (record.kind === 'turn-end') {
    closeStep();
    compaction('');
    const r = s.results;
    // The bridge ended the turn after a result (its own, or an abort's): finish from it. Otherwise the generic ending
    // (an interrupted turn — the bridge died — gets no finish even after a result: the kit reruns it and that run finishes).
    if (r?.last && record.data.reason !== 'interrupted') {
      const meta = { ...(r.costUsd === undefined ? {} : { costUsd: r.costUsd }), ...(r.numTurns === undefined ? {} : { numTurns: r.numTurns }) };
      out.finish(r.last, anthropicUsage(r.usage), { [id]: meta });
    } else out.endTurn(record, 'claude');
  }
  if (record.kind === 'stdin') {
    // An answered permission request: Claude has its answer, encodeApproval needs its input no more.
    for (const requestId of answeredRequests(record.data.text)) delete s.approvals[requestId];
    return { state: s, parts };
  }
  const line = readJsonLine(s.lines, record, lineSchema);
  if (!line) return { state: s, parts };
  const raw = () => out.raw(line.stream === 'stderr' ? { stderr: line.json } : line.json);
  if (!line.ok || ('parent_tool_use_id' in line.value && line.value.parent_tool_use_id)) raw(); // subagent lines stay raw
  else if (line.value.type === 'system') {
    const L = line.value;
    if (L.subtype === 'init') {
      out.start(L.model);
      if (s.results) s.results.last = null; // another run in this turn (a queued message): its result finishes the turn
    }
    else if (L.subtype === 'compact_boundary' && L.compact_metadata) {
      const { trigger, pre_tokens, post_tokens } = L.compact_metadata;
      s.compaction = { trigger, ...(pre_tokens === undefined ? {} : { tokensBefore: pre_tokens }), ...(post_tokens === undefined ? {} : { tokensAfter: post_tokens }) };
    } else raw();
  } else if (line.value.type === 'stream_event') {
    const e = line.value.event;
    const started = e.content_block?.type === 'text' || e.content_block?.type === 'thinking' ? e.content_block : undefined;
    const toolBlock = e.content_block?.type === 'tool_use' && e.content_block.id && e.content_block.name && !e.content_block.name.startsWith(`mcp__${hostServer}__`) ? e.content_block : undefined;
    if (e.type === 'content_block_start' && toolBlock) {
      // A builtin tool's input as the model streams it; the assistant line's tool_use block then gives the call (same id).
      out.close();
      s.input = toolBlock.id!;
      out.push({ type: 'tool-input-start', id: toolBlock.id!, toolName: claudeToolName(toolBlock.name!), providerExecuted: true });
    } else if (e.type === 'content_block_delta' && e.delta?.type === 'input_json_delta' && s.input !== undefined) {
      if (e.delta.partial_json) out.push({ type: 'tool-input-delta', id: s.input, delta: e.delta.partial_json });
    } else if (e.type === 'content_block_stop' && s.input !== undefined) {
      out.push({ type: 'tool-input-end', id: s.input });
      delete s.input;
    } else if (e.type === 'message_start' && e.message) {
      openStep(e.message.id, e.message.usage);
      s.streamed = e.message.id;
    } else if (e.type === 'content_block_start' && started) {
      out.open(started.type === 'text' ? 'text' : 'reasoning', `${started.type}-${record.seq}`);
      out.delta(started.text ?? started.thinking);
    } else if (e.type === 'content_block_delta') out.delta(e.delta?.text ?? e.delta?.thinking);
    else if (e.type === 'content_block_stop') out.close();
    else if (e.type === 'message_delta' && s.step) {
      s.step.usage = mergeAnthropicUsage(s.step.usage, e.usage);
      s.step.stop = e.delta?.stop_reason ?? s.step.stop;
    }
  } else if (line.value.type === 'assistant') {
    const L = line.value;
    if (L.is_api_error_message || L.message.model === '<synthetic>') return raw(), { state: s, parts }; // the result line reports it
    if (s.step?.id !== L.message.id) openStep(L.message.id, L.message.usage);
    if (L.aborted && s.step) s.step.stop = 'aborted';
    L.message.content.forEach((b, i) => {
      if (b.type === 'tool_use') toolCall(b);
      else if (L.message.id !== s.streamed && (b.type === 'text' || b.type === 'thinking')) {
        out.block(b.type === 'text' ? 'text' : 'reasoning', `${b.type}-${record.seq}-${i}`, b.text ?? b.thinking);
      }
    });
  } else if (line.value.type === 'user') {
    const L = line.value;
    const results = typeof L.message.content === 'string' ? [] : L.message.content.filter((b) => b.tool_use_id && s.tools[b.tool_use_id]);
    if (typeof L.message.content === 'string' && s.compaction) compaction(L.message.content);
    else if (results.length === 0) raw();
    for (const b of results) {
      const toolName = s.tools[b.tool_use_id!]!;
      const detail = results.length === 1 && L.tool_use_result !== undefined ? { providerMetadata: { [id]: { toolUseResult: L.tool_use_result } } } : {};
      out.push({ type: 'tool-result', toolCallId: b.tool_use_id!, toolName, result: b.content ?? '', isError: b.is_error ?? false, ...detail });
      const file = fileResult.safeParse(L.tool_use_result);
      if (file.success && !b.is_error && claudeCodeBuiltinTools[toolName as 'write']?.toolUseKind === 'edit') {
        out.push({ type: 'file-change', event: file.data.type === 'create' ? 'create' : 'modify', path: file.data.filePath });
      }
    }
  } else if (line.value.type === 'command_lifecycle') {
    // nothing for the consumer
  } else if (line.value.type === 'control_request') {
    const L = line.value;
    if (L.request.subtype !== 'can_use_tool' || !L.request.tool_use_id) return raw(), { state: s, parts };
    s.approvals[L.request_id] = L.request.input ?? {};
    out.push({ type: 'tool-approval-request', approvalId: L.request_id, toolCallId: L.request.tool_use_id });
  } else {
    const L = line.value;
    const interrupted = L.terminal_reason?.startsWith('aborted') ?? false; // aborted_streaming / aborted_tools: our interrupt
    closeStep(L.stop_reason);
    compaction('');
    if (L.is_error && !interrupted) out.push({ type: 'error', error: { message: L.result || L.errors?.join('\n') || L.subtype, subtype: L.subtype, terminalReason: L.terminal_reason ?? null } });
    const reason = L.is_error ? { unified: interrupted ? ('other' as const) : ('error' as const), raw: L.terminal_reason ?? L.subtype } : anthropicFinishReason(L.stop_reason);
    const before = s.results;
    s.results = {
      usage: addUsage(before?.usage, L.usage),
      numTurns: L.num_turns === undefined ? before?.numTurns : (before?.numTurns ?? 0) + L.num_turns,
      costUsd: L.total_cost_usd ?? before?.costUsd, // Claude's total_cost_usd: the process's running total
      last: reason,
    };
  }
  return { state: s, parts };
}

/** Claude Code over the bridge. `binPath` overrides the bootstrapped CLI; `extraEnv` (e.g. ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY) wins over ours. */
export function claudeCodeAdapter(options: ClaudeCodeOptions = {}): CliAdapter<ClaudeCodeState> {
  return defineCliAdapter<ClaudeCodeState>({
    harnessId: id,
    builtinTools: claudeCodeBuiltinTools,
    supportsBuiltinToolApprovals: true,
    ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
    cli: { package: '@anthropic-ai/claude-code', version: claudeCodeVersion, bin: 'claude' },
    install: { commands: [{ command: `npm install --prefix cli --no-audit --no-fund --prefer-offline @anthropic-ai/claude-code@${claudeCodeVersion}` }] },
    launch: (ctx) => launch(options, ctx),
    encodePrompt: ({ text, instructions }) => userLine(instructions ? `${instructions}\n\n${text}` : text),
    encodeUserMessage: (text) => userLine(text),
    encodeApproval: ({ approvalId, approved, reason }, state) => {
      const input = state.approvals[approvalId];
      if (approved && input === undefined) throw new Error(`claude-code: no permission request ${approvalId} in this turn`);
      const response = approved ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message: reason ?? 'The host denied this tool use.' };
      return stdinLine({ type: 'control_response', response: { subtype: 'success', request_id: approvalId, response } });
    },
    encodeCompact: (instructions) => userLine(instructions ? `/compact ${instructions}` : '/compact'),
    skillFiles: (skills, sessionWorkDir) =>
      skills.map((skill) => {
        const name = skill.name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 64);
        const content = `---\nname: ${name}\ndescription: ${JSON.stringify(skill.description)}\n---\n\n${skill.content}\n`;
        return { path: posix.join(sessionWorkDir, '.claude', 'skills', name, 'SKILL.md'), content };
      }),
    threadId: (record) => {
      // Only init and result lines are parsed: the kit asks about every record, and every line of a turn repeats the id.
      if (record.kind !== 'stdout' || record.data.cont || !/"subtype":"init"|"type":"result"/.test(record.data.text)) return undefined;
      const parsed = z.object({ session_id: z.string().min(1) }).safeParse(parseJsonObject(record.data.text));
      return parsed.success ? parsed.data.session_id : undefined;
    },
    translator: {
      init: ({ rerun }) => ({
        rerun,
        lines: createLineBuffers(),
        stream: createStreamState(),
        streamed: null,
        step: null,
        tools: {},
        approvals: {},
        compaction: null,
        results: null,
      }),
      step,
      snapshot: (state): JSONValue => takeSnapshot(id, snapshotVersion, state),
      restore: (snapshot): ClaudeCodeState => readSnapshot(id, snapshotVersion, snapshotShape, snapshot),
    },
  });
}
