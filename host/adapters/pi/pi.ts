// pi 0.73.1 (@mariozechner/pi-coding-agent) as a harness-bridge adapter: one long-lived `pi --mode rpc`
// process per session, fed JSONL commands on stdin, its agent events translated into HarnessV1 parts by
// a pure reducer. pi has no MCP and no permission prompts: the extension this adapter installs
// (extension.ts) brings the bridge's host tools and the host's approvals. Transport, slices, host
// tool calls and recovery are the kit's. Line shapes: test/fixtures/pi/README.md.
import { posix } from 'node:path';
import type { JSONValue } from '@ai-sdk/provider';
import { z } from 'zod';
import type { LaunchSpecInput } from '../../../protocol/v1/launch-spec.ts';
import { defineCliAdapter, type CliAdapter, type LaunchContext } from '../../adapter-kit/adapter.ts';
import { cliBinPath, npmCli, sessionLaunch, type CliAdapterOptions } from '../../adapter-kit/cli-launch.ts';
import { createLineBuffers, parseJsonObject, readJsonLine, wholeStdoutJson } from '../../adapter-kit/json-lines.ts';
import { createStreamState, writerStep } from '../../adapter-kit/part-writer.ts';
import { skillDirectoryFiles } from '../../adapter-kit/skill-files.ts';
import { lineBuffersSchema, snapshotCodec, streamStateSchema, tokenCountsSchema, type SnapshotState } from '../../adapter-kit/snapshot.ts';
import { compactBetweenTurns, jsonLine, promptText } from '../../adapter-kit/stdin-encoders.ts';
import { addCounts, usageFromCounts, type TokenCounts } from '../../adapter-kit/usage.ts';
import { PI_EXTENSION_ENV as E, piApprovalTitle, piExtensionFile, piExtensionSource, piHostToolPrefix } from './extension.ts';
import { approvalMessage, lineSchema, partialToolCall, pathArgs, stateAnswer, textBlock, toolCallBlock, type PiUsage } from './lines.ts';
import { piBuiltinTools } from './tools.ts';

export const piVersion = '0.73.1';
const id = 'pi';
const cli = { package: '@mariozechner/pi-coding-agent', version: piVersion, bin: 'pi' };

/** A pi model provider (pi's ProviderConfig plus its id), registered by the extension; `${VAR}` in strings expands from the CLI's env. */
export type PiProvider = { readonly id: string } & Readonly<Record<string, JSONValue>>;
export type PiOptions = CliAdapterOptions & { provider?: PiProvider };

/** A snapshot holds the whole state (rerun too: restore gets no turn). */
const snapshotShape = {
  rerun: z.boolean(),
  lines: lineBuffersSchema,
  stream: streamStateSchema,
  /** contentIndex of the open text/reasoning block (pi interleaves a thinking block's end with the text after it). */
  block: z.number().nullable(),
  /** pi's stopReason of the latest assistant message; null until one ended. */
  stop: z.string().nullable(),
  ran: z.boolean(),
  rejected: z.boolean(),
  total: tokenCountsSchema,
  /** Builtin tool calls (toolCallId → name and path). Host tools are absent: the kit emits those from the bridge's records. */
  tools: z.record(z.string(), z.strictObject({ name: z.string(), path: z.string().optional() })),
  /**
   * Builtin tool calls whose arguments are streaming (tool-input-* parts), by contentIndex (pi interleaves
   * several calls of a message); absent when none is, so snapshots without one stay readable by older hosts.
   */
  inputs: z.record(z.string(), z.string()).optional(),
};
export type PiState = SnapshotState<typeof snapshotShape>;
const snapshotVersion = 1;

/** The id of doCompact's `compact` command: its response ends the kit's internal compaction turn. */
const compactId = 'harness-compact';
const counts = (u: PiUsage | undefined): TokenCounts | undefined => u && { noCache: u.input, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, output: u.output };
const finishReason = (stop: string | null) => ({
  unified: ({ stop: 'stop', length: 'length', toolUse: 'tool-calls', error: 'error', aborted: 'other' } as const)[stop as 'stop'] ?? ('other' as const),
  raw: stop ?? undefined,
});

function launch(options: PiOptions, ctx: LaunchContext): LaunchSpecInput {
  const home = posix.join(ctx.stateDir, 'pi');
  // The turn's model (a per-turn choice, else options.modelId), else the custom provider's first.
  const model = ctx.modelId ?? options.modelId ?? (options.provider ? z.object({ id: z.string() }).array().safeParse(options.provider.models).data?.[0]?.id : undefined);
  return sessionLaunch(ctx, options.survive, {
    argv: [
      cliBinPath(cli, ctx, options.binPath),
      ...['--mode', 'rpc', '-e', posix.join(ctx.bootstrapDir, piExtensionFile)],
      // The thread is a session FILE (an id prefix from another cwd makes pi ask a question on stdout). A fresh
      // session gets this session's own file, which get_state then reports as the thread: argv never changes,
      // so the bridge keeps feeding the same live process turn after turn.
      ...['--session', ctx.threadId ?? posix.join(home, 'sessions', 'thread.jsonl')],
      ...(options.provider ? ['--provider', options.provider.id] : []),
      ...(model ? ['--model', model] : []),
    ],
    env: {
      HOME: posix.join(home, 'home'),
      PI_CODING_AGENT_DIR: posix.join(home, 'agent'),
      ...{ PI_OFFLINE: '1', PI_TELEMETRY: '0', PI_SKIP_VERSION_CHECK: '1' },
      [E.permissionMode]: ctx.permissionMode,
      ...(ctx.mcp ? { [E.mcpUrlVar]: ctx.mcp.urlEnvVar, [E.mcpTokenVar]: ctx.mcp.tokenEnvVar } : {}), // names, never the values
      ...(options.provider ? { [E.provider]: JSON.stringify(options.provider) } : {}),
      ...options.extraEnv,
    },
    io: { mode: 'pipes', maxLineBytes: 1024 * 1024 },
    // agent_end repeats the whole run and can outgrow the line cap: a prefix matcher still sees it. A rejected prompt gets no agent run.
    // doCompact's compact command runs no agent either: its response (after compaction_end) ends that internal turn, either way.
    turnEnd: [
      { prefix: '{"type":"agent_end"' },
      { prefix: '{"id":"harness-prompt","type":"response","command":"prompt","success":false' },
      { prefix: `{"id":"${compactId}","type":"response","command":"compact",` },
    ],
    interrupt: { input: jsonLine({ type: 'abort' }) },
  });
}

const step = writerStep<PiState>((s, record, out) => {
  if (record.kind === 'turn-start' && s.rerun) out.start(); // the kit marks a rerun on the turn-start's stream-start
  if (record.kind === 'turn-end') {
    if (record.data.reason !== 'matched' || !(s.ran || s.rejected)) out.endTurn(record, 'pi');
    else out.finish(s.rejected ? { unified: 'error', raw: 'rejected' } : finishReason(s.stop), usageFromCounts(s.total));
  }
  const read = readJsonLine(s.lines, record, lineSchema);
  if (!read) return;
  if (!read.ok) return out.rawLine(read);
  const L = read.value;
  if (L.type === 'response') {
    if (L.command === 'get_state' && L.id === 'harness-state') out.start(L.data?.model?.id);
    else if (L.command === 'compact' && L.id === compactId) {
      // The answer to doCompact's command (the compaction part came with compaction_end): it ends the internal turn.
      if (!L.success) out.push({ type: 'error', error: { message: `pi did not compact: ${L.error ?? 'no reason given'}` } });
      out.finish(L.success ? { unified: 'stop', raw: 'compacted' } : { unified: 'error', raw: 'compact failed' });
    } else if (L.command === 'prompt' && !L.success && (L.id === 'harness-prompt' || L.id === 'harness-steer')) {
      s.rejected ||= L.id === 'harness-prompt';
      out.push({ type: 'error', error: { message: L.error ?? 'pi rejected the prompt' } });
    } else if (!L.success) out.rawLine(read);
  } else if (L.type === 'agent_start') {
    s.ran = true;
    out.start();
  } else if (L.type === 'message_update') {
    // Blocks open on their first delta (an empty block yields nothing); a delta for another block than the open one opens it anew.
    const e = L.assistantMessageEvent;
    const kind = e.type === 'text_delta' ? 'text' : e.type === 'thinking_delta' ? 'reasoning' : undefined;
    if (kind && e.delta && (s.block !== e.contentIndex || !s.stream.block)) {
      out.open(kind, `${kind}-${record.seq}`);
      s.block = e.contentIndex ?? null;
    }
    if (kind) out.delta(e.delta);
    else if ((e.type === 'text_end' || e.type === 'thinking_end') && s.block === e.contentIndex) out.close();
    else if (e.type === 'toolcall_start' && e.contentIndex !== undefined) {
      // A builtin tool's arguments as the model streams them; tool_execution_start then gives the call (same id).
      const call = toolCallBlock.safeParse(partialToolCall.safeParse(e.partial).data?.content[e.contentIndex]).data;
      if (call && !call.name.startsWith(piHostToolPrefix)) {
        (s.inputs ??= {})[e.contentIndex] = call.id;
        out.push({ type: 'tool-input-start', id: call.id, toolName: call.name, providerExecuted: true });
      }
    } else if ((e.type === 'toolcall_delta' || e.type === 'toolcall_end') && e.contentIndex !== undefined && s.inputs?.[e.contentIndex] !== undefined) {
      const callId = s.inputs[e.contentIndex]!;
      if (e.type === 'toolcall_delta' && e.delta) out.push({ type: 'tool-input-delta', id: callId, delta: e.delta });
      else if (e.type === 'toolcall_end') {
        out.push({ type: 'tool-input-end', id: callId });
        delete s.inputs[e.contentIndex];
        if (Object.keys(s.inputs).length === 0) delete s.inputs;
      }
    }
  } else if (L.type === 'message_end' && L.message.role === 'assistant') {
    s.stop = L.message.stopReason ?? null;
    if (s.stop === 'error') out.push({ type: 'error', error: { message: L.message.errorMessage ?? 'pi: the model call failed' } });
  } else if (L.type === 'turn_end' && L.message.role === 'assistant') {
    s.total = addCounts(s.total, counts(L.message.usage));
    out.finishStep(finishReason(L.message.stopReason ?? s.stop), usageFromCounts(counts(L.message.usage), L.message.usage));
  } else if (L.type === 'tool_execution_start' && !L.toolName.startsWith(piHostToolPrefix)) {
    const path = pathArgs.safeParse(L.args).data?.path;
    s.tools[L.toolCallId] = { name: L.toolName, ...(path === undefined ? {} : { path }) };
    out.push({ type: 'tool-call', toolCallId: L.toolCallId, toolName: L.toolName, input: JSON.stringify(L.args ?? {}), providerExecuted: true, nativeName: L.toolName });
  } else if (L.type === 'tool_execution_end' && s.tools[L.toolCallId]) {
    const { name, path } = s.tools[L.toolCallId]!;
    const content = L.result?.content ?? [];
    const texts = content.map((c) => textBlock.safeParse(c).data?.text);
    const result = texts.every((t) => t !== undefined) ? texts.join('\n') : content;
    const details = L.result?.details === undefined ? {} : { providerMetadata: { [id]: { details: L.result.details } } };
    out.push({ type: 'tool-result', toolCallId: L.toolCallId, toolName: name, result, isError: L.isError, ...details });
    if (!L.isError && path !== undefined && (name === 'write' || name === 'edit')) out.push({ type: 'file-change', event: name === 'write' ? 'create' : 'modify', path });
  } else if (L.type === 'extension_ui_request') {
    const approval = L.method === 'confirm' && L.title === piApprovalTitle ? approvalMessage.safeParse(parseJsonObject(L.message ?? '')).data : undefined;
    if (approval) out.push({ type: 'tool-approval-request', approvalId: L.id, toolCallId: approval.toolCallId });
    else out.rawLine(read);
  } else if (L.type === 'compaction_end' && L.result) {
    const { summary, tokensBefore } = L.result;
    out.push({ type: 'compaction', trigger: L.reason === 'manual' ? 'manual' : 'auto', summary, ...(tokensBefore === undefined ? {} : { tokensBefore }) });
  }
});

/** pi over the bridge. `binPath` overrides the bootstrapped CLI; `provider` points pi at a model endpoint without a config file; `extraEnv` wins over ours. */
export function piAdapter(options: PiOptions = {}): CliAdapter<PiState> {
  return defineCliAdapter<PiState>({
    harnessId: id,
    builtinTools: piBuiltinTools,
    supportsBuiltinToolApprovals: true, // through the extension's confirm hook
    ...(options.modelId === undefined ? {} : { modelId: options.modelId }),
    ...npmCli(cli, [{ path: piExtensionFile, content: piExtensionSource }]),
    launch: (ctx) => launch(options, ctx),
    // get_state first: its answer names the session file (the thread) and the model.
    encodePrompt: (prompt) => jsonLine({ id: 'harness-state', type: 'get_state' }) + jsonLine({ id: 'harness-prompt', type: 'prompt', message: promptText(prompt) }),
    // Delivered after the running assistant turn's tool calls, before the next model call.
    encodeUserMessage: (text) => jsonLine({ id: 'harness-steer', type: 'prompt', message: text, streamingBehavior: 'steer' }),
    encodeApproval: ({ approvalId, approved }) => jsonLine({ type: 'extension_ui_response', id: approvalId, confirmed: approved }),
    // rpc `compact`: pi summarises the session with the model, following customInstructions, and keeps its newest
    // messages (settings compaction.keepRecentTokens, 20k by default). Between turns only: pi's compact aborts a
    // running agent run first and prints none of that run's ending (no agent_end), so the turn would be cut short.
    encodeCompact: (customInstructions, context) => {
      compactBetweenTurns(id, context, 'its compact command aborts the running turn', 'session');
      return jsonLine({ id: compactId, type: 'compact', ...(customInstructions ? { customInstructions } : {}) });
    },
    skillFiles: skillDirectoryFiles('.pi/skills'),
    threadId: (record) => stateAnswer.safeParse(wholeStdoutJson(record, '{"id":"harness-state"')).data?.data.sessionFile,
    translator: {
      init: ({ rerun }) => ({ rerun, lines: createLineBuffers(), stream: createStreamState(), block: null, stop: null, ran: false, rejected: false, total: {}, tools: {} }),
      step,
      ...snapshotCodec(id, snapshotVersion, snapshotShape),
    },
  });
}

/** A provider for an OpenAI Chat Completions endpoint (what the scripted model server and most local servers speak). */
export function piChatCompletionsProvider(p: { id: string; baseUrl: string; apiKey: string; models: string[] }): PiProvider {
  const model = (modelId: string) => ({
    ...{ id: modelId, name: modelId, reasoning: false, input: ['text'], contextWindow: 128_000, maxTokens: 4096 },
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
  });
  return { id: p.id, baseUrl: p.baseUrl, apiKey: p.apiKey, api: 'openai-completions', models: p.models.map(model) };
}
