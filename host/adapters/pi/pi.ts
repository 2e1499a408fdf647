// pi 0.73.1 (@mariozechner/pi-coding-agent) as a harness-bridge adapter: one long-lived `pi --mode rpc`
// process per session, fed JSONL commands on stdin, its agent events translated into HarnessV1 parts by
// a pure reducer. pi has no MCP and no permission prompts: the extension this adapter installs
// (extension.ts) brings the bridge's host tools and the host's approvals. Transport, slices, host
// tool calls and recovery are the kit's. Line shapes: test/fixtures/pi/README.md.
import { posix } from 'node:path';
import { z } from 'zod';
import type { LaunchSpecInput } from '../../../protocol/v1/launch-spec.ts';
import { defineCliAdapter, type CliAdapter, type LaunchContext } from '../../adapter-kit/adapter.ts';
import { cliBinPath, CREDENTIAL_ENV, npmCli, sessionLaunch, type CliAdapterOptions } from '../../adapter-kit/cli-launch.ts';
import { createLineBuffers, parseJsonObject, readJsonLine, wholeStdoutJson } from '../../adapter-kit/json-lines.ts';
import { createStreamState, writerStep } from '../../adapter-kit/part-writer.ts';
import { skillDirectoryFiles } from '../../adapter-kit/skill-files.ts';
import { lineBuffersSchema, snapshotCodec, streamStateSchema, type SnapshotState } from '../../adapter-kit/snapshot.ts';
import { compactBetweenTurns, jsonLine, promptText } from '../../adapter-kit/stdin-encoders.ts';
import type { TokenCounts } from '../../adapter-kit/usage.ts';
import { PI_EXTENSION_ENV as E, piApprovalTitle, piExtensionFile, piExtensionSource, piHostToolPrefix } from './extension.ts';
import { approvalMessage, lineSchema, partialToolCall, pathArgs, stateAnswer, textContent, toolCallBlock, type PiUsage } from './lines.ts';
import type { PiProvider } from './provider.ts';
import { piBuiltinTools } from './tools.ts';

export const piVersion = '0.73.1';
const id = 'pi';
const cli = { package: '@mariozechner/pi-coding-agent', version: piVersion, bin: 'pi' };

export type PiOptions = CliAdapterOptions & { provider?: PiProvider };

/** A snapshot holds the whole state (rerun too: restore gets no turn). */
const snapshotShape = {
  rerun: z.boolean(),
  lines: lineBuffersSchema,
  stream: streamStateSchema,
  /** pi's stopReason of the latest assistant message; null until one ended. */
  stop: z.string().nullable(),
  ran: z.boolean(),
  rejected: z.boolean(),
};
export type PiState = SnapshotState<typeof snapshotShape>;
const snapshotVersion = 2;

/** The id of doCompact's `compact` command: its response ends the kit's internal compaction turn. */
const compactId = 'harness-compact';
/** What a successful builtin file tool does to the file its `path` names. */
const fileEvents: Record<string, 'create' | 'modify'> = { write: 'create', edit: 'modify' };
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
    passEnv: CREDENTIAL_ENV.pi,
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
    else out.finish(s.rejected ? { unified: 'error', raw: 'rejected' } : finishReason(s.stop));
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
    // Blocks open on their first delta (an empty block yields nothing); a delta for another block than the open one
    // opens it anew (pi interleaves a thinking block's end with the text after it). Keys are pi's contentIndex.
    const e = L.assistantMessageEvent;
    const key = e.contentIndex ?? -1;
    const kind = e.type === 'text_delta' ? 'text' : e.type === 'thinking_delta' ? 'reasoning' : undefined;
    if (kind && e.delta && !out.isOpen(key)) out.open(kind, `${kind}-${record.seq}`, key);
    if (kind) out.delta(e.delta, key);
    else if ((e.type === 'text_end' || e.type === 'thinking_end') && out.isOpen(key)) out.close();
    else if (e.type === 'toolcall_start') {
      // A builtin tool's arguments as the model streams them (several calls interleave); tool_execution_start then gives the call (same id).
      const call = toolCallBlock.safeParse(partialToolCall.safeParse(e.partial).data?.content[key]).data;
      if (call && !call.name.startsWith(piHostToolPrefix)) out.inputStart(key, call.id, call.name);
    } else if (e.type === 'toolcall_delta') out.inputDelta(key, e.delta);
    else if (e.type === 'toolcall_end') out.inputEnd(key);
  } else if (L.type === 'message_end' && L.message.role === 'assistant') {
    s.stop = L.message.stopReason ?? null;
    if (s.stop === 'error') out.push({ type: 'error', error: { message: L.message.errorMessage ?? 'pi: the model call failed' } });
  } else if (L.type === 'turn_end' && L.message.role === 'assistant') {
    out.endStep(finishReason(L.message.stopReason ?? s.stop), counts(L.message.usage), L.message.usage);
  } else if (L.type === 'tool_execution_start' && !L.toolName.startsWith(piHostToolPrefix)) {
    out.toolCall({ toolCallId: L.toolCallId, toolName: L.toolName, input: L.args, path: pathArgs.safeParse(L.args).data?.path, fileEvent: fileEvents[L.toolName] });
  } else if (L.type === 'tool_execution_end') {
    const content = L.result?.content ?? [];
    const details = L.result?.details === undefined ? {} : { providerMetadata: { [id]: { details: L.result.details } } };
    out.toolResult(L.toolCallId, { result: textContent.safeParse(content).data ?? content, isError: L.isError, ...details });
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
    ...npmCli(cli, [{ path: piExtensionFile, content: piExtensionSource }], options.binPath),
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
      init: ({ rerun }) => ({ rerun, lines: createLineBuffers(), stream: createStreamState(), stop: null, ran: false, rejected: false }),
      step,
      ...snapshotCodec(id, snapshotVersion, snapshotShape),
    },
  });
}
