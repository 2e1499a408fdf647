// Claude-style stream-json (stream-json-lines.ts) as a pure translator, plus the
// stdin lines that go with it: what any CLI printing Claude Code's stream-json
// needs, given its tool names and which calls are the bridge's host tools.
// A `message_start` … `message_delta` run of stream events (or, unstreamed, the
// message's `assistant` lines) is one step: text and thinking blocks stream as
// text/reasoning parts, a builtin tool's input as tool-input-* parts, its call
// comes from the `assistant` line's tool_use block and its result from the
// `user` line's tool_result. A `result` line ends a run; the finish is made at
// the turn-end record from the turn's results (usage summed), because a message
// written during the turn may start another run after the first `result`
// (docs/bridge-internals.md#input-ack). Lines of a subagent's conversation, and
// anything not understood, stay raw parts.
//
// Snapshots: the whole state, tagged with the adapter's harnessId, v1. A
// permission input is dropped once its answer is journaled (the stdin record of
// our control_response), so a turn with many approvals keeps snapshots small.
import { randomUUID } from 'node:crypto';
import type { LanguageModelV4FinishReason } from '@ai-sdk/provider';
import { z } from 'zod';
import { finishReasonSchema } from '../../protocol/harness-v1/stream-part-schema.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import { PROTOCOL_LIMITS_V1 } from '../../protocol/v1/limits.ts';
import type { Translator } from './adapter.ts';
import { addAnthropicUsage, anthropicFinishReason, anthropicUsage, anthropicUsageSchema, maxAnthropicUsage, mergeAnthropicUsage, type AnthropicUsage } from './anthropic-usage.ts';
import type { SessionLaunchParts } from './cli-launch.ts';
import { createLineBuffers, parseJsonObject, readJsonLine, wholeStdoutJson, type LineBuffers } from './json-lines.ts';
import { createStreamState, writerStep, type PartWriter, type StreamState } from './part-writer.ts';
import { lineBuffersSchema, snapshotCodec, streamStateSchema } from './snapshot.ts';
import { jsonLine } from './stdin-encoders.ts';
import { streamJsonLineSchema, streamJsonSessionSchema, type StreamJsonBlock } from './stream-json-lines.ts';

export type StreamJsonOptions = {
  /** The adapter's harnessId: its snapshots' tag, and the key of the parts' provider and harness metadata. */
  readonly harnessId: string;
  /** The CLI's name in the error of a turn it ended without a result (partWriter.endTurn). */
  readonly cli: string;
  /** The tool-call part's toolName for a builtin tool's native name. */
  readonly toolName: (nativeName: string) => string;
  /** A tool of the bridge's MCP server (`mcp__host__…`): the kit emits those calls from the bridge's records, the translator nothing. */
  readonly isHostTool: (nativeName: string) => boolean;
  /**
   * Runs after a builtin tool's tool-result part, for what else the result means (file-change parts); `toolUseResult` is the
   * line's own. Without it, a successful call whose toolName is `write` or `edit` and whose input names a `file_path` (or
   * `path`) is a file-change: `modify` for an edit, and for a write `create` unless the line's tool_use_result says
   * `type: 'update'` (Claude's Write does).
   */
  readonly onToolResult?: (result: { toolName: string; isError: boolean; toolUseResult: unknown }, out: PartWriter) => void;
};

export type StreamJsonState = {
  rerun: boolean;
  lines: LineBuffers;
  stream: StreamState;
  /** The message whose blocks arrive as stream_event deltas: its full `assistant` lines repeat them, so only their tool_use blocks count. */
  streamed: string | null;
  step: { id: string; usage: AnthropicUsage | undefined; stop: string | null; tools: boolean } | null;
  /** Builtin tool_use id → toolName. Host tools are absent: the kit emits those calls from the bridge's records. */
  tools: Record<string, string>;
  /** Builtin write/edit tool_use id → the file its input names, until its result (the default file-change; absent in older snapshots). */
  files?: Record<string, string>;
  /** The builtin tool_use block whose input is streaming (tool-input-* parts); absent when none is (so older hosts still read the snapshot). */
  input?: string;
  /** Pending `can_use_tool` requests (request_id → the tool input), for streamJsonApproval; dropped once the answer's stdin record is seen. */
  approvals: Record<string, StreamJsonBlock['input']>;
  compaction: { trigger: 'manual' | 'auto'; tokensBefore?: number; tokensAfter?: number } | null;
  /** The turn's `result` lines so far, summed; `last` is the latest run's, until another run starts. The finish is made from them at turn-end. */
  results: { usage: AnthropicUsage | undefined; numTurns: number | undefined; costUsd: number | undefined; last: LanguageModelV4FinishReason | null } | null;
  /** The turn's steps' usage, summed: the finish's usage when no `result` line carries one (absent in older snapshots). */
  stepsUsage?: AnthropicUsage;
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
  files: z.record(z.string(), z.string()).optional(),
  input: z.string().optional(),
  approvals: z.record(z.string(), z.json()),
  compaction: z.strictObject({ trigger: z.enum(['manual', 'auto']), tokensBefore: z.number().optional(), tokensAfter: z.number().optional() }).nullable(),
  results: z
    .strictObject({ usage: savedUsage, numTurns: z.number().optional(), costUsd: z.number().optional(), last: finishReasonSchema.nullable() })
    .transform(({ usage: sum, numTurns, costUsd, last }) => ({ usage: sum, numTurns, costUsd, last }))
    .nullable(),
  stepsUsage: savedUsage,
};
const snapshotVersion = 1;

/** request_ids our control_response lines in a stdin record answer (the host wrote them through streamJsonApproval). */
function answeredRequests(text: string): string[] {
  if (!text.includes('"control_response"')) return [];
  const ids: string[] = [];
  for (const line of text.split('\n')) {
    const json = parseJsonObject(line) as { type?: unknown; response?: { request_id?: unknown } } | undefined;
    if (json?.type === 'control_response' && typeof json.response?.request_id === 'string') ids.push(json.response.request_id);
  }
  return ids;
}

/** The translator of a CLI that prints Claude-style stream-json. */
export function streamJsonTranslator(o: StreamJsonOptions): Translator<StreamJsonState> {
  const closeStep = (s: StreamJsonState, out: PartWriter, stopReason?: string | null) => {
    const current = s.step;
    s.step = null;
    if (!current) return out.close();
    const stop = current.stop ?? stopReason;
    const reason = stop === 'aborted' ? { unified: 'other' as const, raw: stop } : anthropicFinishReason(stop, current.tools ? 'tool-calls' : 'stop');
    if (current.usage) s.stepsUsage = addAnthropicUsage(s.stepsUsage, current.usage);
    out.finishStep(reason, anthropicUsage(current.usage));
  };
  const openStep = (s: StreamJsonState, out: PartWriter, messageId: string, stepUsage: AnthropicUsage | undefined) => {
    closeStep(s, out);
    s.step = { id: messageId, usage: stepUsage, stop: null, tools: false };
  };
  const compaction = (s: StreamJsonState, out: PartWriter, summary: string) => {
    if (s.compaction) out.push({ type: 'compaction', ...s.compaction, summary });
    s.compaction = null;
  };
  const toolCall = (s: StreamJsonState, out: PartWriter, b: StreamJsonBlock) => {
    if (!b.id || !b.name) return;
    if (s.step) s.step.tools = true;
    if (o.isHostTool(b.name)) return; // the kit emits host calls from the bridge's tool-call records
    if (s.input === b.id) {
      // Claude prints the block's assistant line before its content_block_stop: the input ends here, before the call.
      out.push({ type: 'tool-input-end', id: b.id });
      delete s.input;
    }
    const toolName = (s.tools[b.id] = o.toolName(b.name));
    const input = (b.input ?? {}) as { file_path?: unknown; path?: unknown };
    const file = typeof input.file_path === 'string' ? input.file_path : typeof input.path === 'string' ? input.path : undefined;
    if (!o.onToolResult && (toolName === 'write' || toolName === 'edit') && file !== undefined) (s.files ??= {})[b.id] = file;
    out.push({ type: 'tool-call', toolCallId: b.id, toolName, input: JSON.stringify(b.input ?? {}), providerExecuted: true, nativeName: b.name });
  };

  const step = writerStep<StreamJsonState>((s, record, out) => {
    if (record.kind === 'turn-start' && s.rerun) out.start(); // the kit marks a rerun on the turn-start's stream-start
    if (record.kind === 'turn-end') {
      closeStep(s, out);
      compaction(s, out, '');
      const r = s.results;
      // The bridge ended the turn after a result (its own, or an abort's): finish from it. Otherwise the generic ending
      // (an interrupted turn — the bridge died — gets no finish even after a result: the kit reruns it and that run finishes).
      if (r?.last && record.data.reason !== 'interrupted') {
        const meta = { ...(r.costUsd === undefined ? {} : { costUsd: r.costUsd }), ...(r.numTurns === undefined ? {} : { numTurns: r.numTurns }) };
        out.finish(r.last, anthropicUsage(r.usage ?? s.stepsUsage), { [o.harnessId]: meta });
      } else out.endTurn(record, o.cli);
    }
    if (record.kind === 'stdin') {
      // An answered permission request: the CLI has its answer, streamJsonApproval needs its input no more.
      for (const requestId of answeredRequests(record.data.text)) delete s.approvals[requestId];
      return;
    }
    const line = readJsonLine(s.lines, record, streamJsonLineSchema);
    if (!line) return;
    if (!line.ok || ('parent_tool_use_id' in line.value && line.value.parent_tool_use_id)) return out.rawLine(line); // subagent lines stay raw
    if (line.value.type === 'system') {
      const L = line.value;
      if (L.subtype === 'init') {
        out.start(L.model);
        if (s.results) s.results.last = null; // another run in this turn (a queued message): its result finishes the turn
      } else if (L.subtype === 'compact_boundary' && L.compact_metadata) {
        const { trigger, pre_tokens, post_tokens } = L.compact_metadata;
        s.compaction = { trigger, ...(pre_tokens === undefined ? {} : { tokensBefore: pre_tokens }), ...(post_tokens === undefined ? {} : { tokensAfter: post_tokens }) };
      } else out.rawLine(line);
    } else if (line.value.type === 'stream_event') {
      const e = line.value.event;
      const started = e.content_block?.type === 'text' || e.content_block?.type === 'thinking' ? e.content_block : undefined;
      const toolBlock = e.content_block?.type === 'tool_use' && e.content_block.id && e.content_block.name && !o.isHostTool(e.content_block.name) ? e.content_block : undefined;
      if (e.type === 'content_block_start' && toolBlock) {
        // A builtin tool's input as the model streams it; the assistant line's tool_use block then gives the call (same id).
        out.close();
        s.input = toolBlock.id!;
        out.push({ type: 'tool-input-start', id: toolBlock.id!, toolName: o.toolName(toolBlock.name!), providerExecuted: true });
      } else if (e.type === 'content_block_delta' && e.delta?.type === 'input_json_delta' && s.input !== undefined) {
        if (e.delta.partial_json) out.push({ type: 'tool-input-delta', id: s.input, delta: e.delta.partial_json });
      } else if (e.type === 'content_block_stop' && s.input !== undefined) {
        out.push({ type: 'tool-input-end', id: s.input });
        delete s.input;
      } else if (e.type === 'message_start' && e.message) {
        openStep(s, out, e.message.id, e.message.usage);
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
      if (L.is_api_error_message || L.message.model === '<synthetic>') return out.rawLine(line); // the result line reports it
      if (s.step?.id !== L.message.id) openStep(s, out, L.message.id, L.message.usage);
      // The message's counts so far (a CLI may stream no message_start usage, or no stream events at all); a later message_delta still wins.
      else s.step.usage = maxAnthropicUsage(s.step.usage, L.message.usage);
      if (L.aborted && s.step) s.step.stop = 'aborted';
      L.message.content.forEach((b, i) => {
        if (b.type === 'tool_use') toolCall(s, out, b);
        else if (L.message.id !== s.streamed && (b.type === 'text' || b.type === 'thinking')) {
          out.block(b.type === 'text' ? 'text' : 'reasoning', `${b.type}-${record.seq}-${i}`, b.text ?? b.thinking);
        }
      });
    } else if (line.value.type === 'user') {
      const L = line.value;
      const results = typeof L.message.content === 'string' ? [] : L.message.content.filter((b) => b.tool_use_id && s.tools[b.tool_use_id]);
      if (typeof L.message.content === 'string' && s.compaction) compaction(s, out, L.message.content);
      else if (results.length === 0) out.rawLine(line);
      for (const b of results) {
        const toolName = s.tools[b.tool_use_id!]!;
        const detail = results.length === 1 && L.tool_use_result !== undefined ? { providerMetadata: { [o.harnessId]: { toolUseResult: L.tool_use_result } } } : {};
        out.push({ type: 'tool-result', toolCallId: b.tool_use_id!, toolName, result: b.content ?? '', isError: b.is_error ?? false, ...detail });
        if (o.onToolResult) o.onToolResult({ toolName, isError: b.is_error ?? false, toolUseResult: L.tool_use_result }, out);
        else if (s.files?.[b.tool_use_id!] !== undefined) {
          const path = s.files[b.tool_use_id!]!;
          delete s.files[b.tool_use_id!];
          const updated = (L.tool_use_result as { type?: unknown } | undefined)?.type === 'update';
          if (!b.is_error) out.push({ type: 'file-change', event: toolName === 'edit' || updated ? 'modify' : 'create', path });
        }
      }
    } else if (line.value.type === 'command_lifecycle') {
      // nothing for the consumer
    } else if (line.value.type === 'control_request') {
      const L = line.value;
      if (L.request.subtype !== 'can_use_tool' || !L.request.tool_use_id) return out.rawLine(line);
      s.approvals[L.request_id] = L.request.input ?? {};
      out.push({ type: 'tool-approval-request', approvalId: L.request_id, toolCallId: L.request.tool_use_id });
    } else {
      const L = line.value;
      const interrupted = L.terminal_reason?.startsWith('aborted') ?? false; // aborted_streaming / aborted_tools: our interrupt
      closeStep(s, out, L.stop_reason);
      compaction(s, out, '');
      if (L.is_error && !interrupted) out.push({ type: 'error', error: { message: L.result || L.errors?.join('\n') || L.subtype, subtype: L.subtype, terminalReason: L.terminal_reason ?? null } });
      const reason = L.is_error ? { unified: interrupted ? ('other' as const) : ('error' as const), raw: L.terminal_reason ?? L.subtype } : anthropicFinishReason(L.stop_reason);
      const before = s.results;
      s.results = {
        usage: addAnthropicUsage(before?.usage, L.usage),
        numTurns: L.num_turns === undefined ? before?.numTurns : (before?.numTurns ?? 0) + L.num_turns,
        costUsd: L.total_cost_usd ?? before?.costUsd, // total_cost_usd: the process's running total
        last: reason,
      };
    }
  });

  return {
    init: ({ rerun }) => ({ rerun, lines: createLineBuffers(), stream: createStreamState(), streamed: null, step: null, tools: {}, approvals: {}, compaction: null, results: null }),
    step,
    ...snapshotCodec(o.harnessId, snapshotVersion, snapshotShape),
  };
}

/** The control_request that interrupts the running turn. */
const interruptLine = jsonLine({ type: 'control_request', request_id: 'harness-bridge-interrupt', request: { subtype: 'interrupt' } });

/** The launch spec's part the format decides, for sessionLaunch: a `result` line ends the turn; the interrupt is a control_request. */
export const streamJsonLaunch = {
  io: { mode: 'pipes', maxLineBytes: PROTOCOL_LIMITS_V1.maxLineBytesCeiling }, // the most there is: turnEnd only matches a line the bridge did not split
  turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }],
  interrupt: { input: interruptLine },
} satisfies Omit<SessionLaunchParts, 'argv'>;

/**
 * The launch's inputAck for a CLI that reports its user lines in command_lifecycle lines (Claude Code does): a user
 * line's uuid is pending until `started` names it, and the result of the run that answers a message the CLI
 * queued behind the turn's `result` ends the turn (docs/bridge-internals.md#input-ack). A CLI that prints no such
 * lines must not have it: its turns would wait out the gate's bound.
 */
export const streamJsonInputAck = {
  inputId: ['uuid'],
  when: [
    { path: ['type'], equals: 'command_lifecycle' },
    { path: ['state'], equals: 'started' },
  ],
  ackId: ['command_uuid'],
} satisfies SessionLaunchParts['inputAck'];

/** A user message line; its `uuid` names it in the CLI's command_lifecycle lines (the id a launch's inputAck waits for). */
export const streamJsonUserLine = (content: string): string => jsonLine({ type: 'user', uuid: randomUUID(), message: { role: 'user', content } });

/** encodeApproval: the control_response to a `can_use_tool` request (allow echoes the request's input, which the CLI requires). */
export function streamJsonApproval(harnessId: string, answer: { approvalId: string; approved: boolean; reason?: string }, state: Pick<StreamJsonState, 'approvals'>): string {
  const { approvalId, approved, reason } = answer;
  const input = state.approvals[approvalId];
  if (approved && input === undefined) throw new Error(`${harnessId}: no permission request ${approvalId} in this turn`);
  const response = approved ? { behavior: 'allow', updatedInput: input } : { behavior: 'deny', message: reason ?? 'The host denied this tool use.' };
  return jsonLine({ type: 'control_response', response: { subtype: 'success', request_id: approvalId, response } });
}

/** A threadId reader: the CLI's session id, from its init and result lines. */
export function streamJsonThreadId(record: JournalRecord): string | undefined {
  // Only init and result lines are parsed: the kit asks about every record, and every line of a turn repeats the id.
  return streamJsonSessionSchema.safeParse(wholeStdoutJson(record, /"subtype":"init"|"type":"result"/)).data?.session_id;
}
