// The frame that starts a turn at the bridge: `start`, or `rerun` of an
// interrupted turn. It carries the adapter's launch spec (validated and
// defaulted here, not at the bridge, so a bad adapter fails loudly in the
// host), the prompt as the adapter encodes it for the CLI's stdin, and the
// host tools the bridge's MCP endpoint serves for the turn.
import type { HarnessV1ResponseFormat, HarnessV1Skill, HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import { launchSpecSchema, type LaunchSpec } from '../../protocol/v1/index.ts';
import type { LaunchMode } from '../adapter-kit/adapter.ts';
import type { ChannelRequest } from '../channel/index.ts';
import { BridgeSessionError } from './errors.ts';
import { toHostTool } from './host-tools.ts';
import type { SessionContext } from './session-types.ts';

/** What the session asks for: a prompt turn, an internal turn (`input` given), or a rerun of `rerunOf`. */
export type TurnRequest = {
  prompt: string;
  instructions: string | undefined;
  tools: ReadonlyArray<HarnessV1ToolSpec>;
  rerunOf: string | undefined;
  /** The turn `rerunOf` is not in the bridge's journal (it was lost): the rerun goes out as a `start` in rerun mode, marked recomputed by the host. */
  originLost?: boolean;
  /** Stdin for the CLI as is (an internal turn: thread start, compaction); default: the adapter's encoded prompt. */
  input?: string;
  /** The turn's model, when the caller chose one (else the adapter's). */
  model?: string | undefined;
  /** The turn's skills (default: the session's, from doStart). */
  skills?: ReadonlyArray<HarnessV1Skill>;
  /** A JSON response format the adapter supports (the session refuses it otherwise). */
  responseFormat?: Extract<HarnessV1ResponseFormat, { type: 'json' }> | undefined;
};

/** The adapter's launch spec for a turn, validated and defaulted (a bad one fails here, in the host, with `bad-launch`). */
export function turnLaunch<S>(ctx: SessionContext<S>, turn: { threadId: string | undefined }, request: Pick<TurnRequest, 'prompt' | 'tools' | 'rerunOf' | 'model' | 'responseFormat'>): LaunchSpec {
  const { threadId } = turn;
  const mode: LaunchMode = request.rerunOf !== undefined ? 'rerun' : threadId ? 'resume' : 'fresh';
  const adapter = ctx.adapter;
  const modelId = request.model ?? adapter.modelId;
  const responseFormat = request.responseFormat ? { responseFormat: request.responseFormat } : {};
  const parsed = launchSpecSchema.safeParse(adapter.launch({
    mode,
    threadId,
    prompt: request.prompt,
    sessionWorkDir: ctx.sessionWorkDir,
    bootstrapDir: ctx.bootstrapDir,
    stateDir: ctx.stateDir,
    permissionMode: ctx.permissionMode,
    tools: request.tools,
    mcp: ctx.mcp,
    modelId,
    ...responseFormat,
  }));
  if (!parsed.success) {
    // e.g. io.maxLineBytes outside PROTOCOL_LIMITS_V1's range: refused here, never clamped (docs/writing-an-adapter.md#the-launch-spec).
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    throw new BridgeSessionError('bad-launch', `adapter ${adapter.harnessId} returned an invalid launch spec: ${issues}`, parsed.error);
  }
  return parsed.data;
}

export function startFrame<S>(ctx: SessionContext<S>, turn: { turnId: string; threadId: string | undefined }, request: TurnRequest): ChannelRequest {
  const { turnId, threadId } = turn;
  const adapter = ctx.adapter;
  const modelId = request.model ?? adapter.modelId;
  const responseFormat = request.responseFormat ? { responseFormat: request.responseFormat } : {};
  const launch = turnLaunch(ctx, turn, request);
  const input =
    request.input ??
    adapter.encodePrompt?.({
      text: request.prompt,
      instructions: request.instructions,
      skills: request.skills ?? ctx.skills,
      threadId,
      permissionMode: ctx.permissionMode,
      ...(modelId === undefined ? {} : { modelId }),
      ...responseFormat,
    });
  const tools = request.tools.map(toHostTool);
  return request.rerunOf !== undefined && request.originLost !== true
    ? { type: 'rerun', turnId, of: request.rerunOf, launch, ...(input === undefined ? {} : { input }), tools }
    : { type: 'start', turnId, launch, ...(input === undefined ? {} : { input }), tools };
}
