// The launch the next turn will likely start with, for the bridge's `expect` frame (protocol 1.2,
// docs/bridge-internals.md#jail-ahead): the adapter's launch with no prompt, the tools and model the
// session has now, and the host-tool key the turn's own start would carry, so the bridge can tell
// whether its live CLI would take that turn. Undefined where the adapter cannot give one yet.
import type { HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import type { ChannelRequest } from '../channel/index.ts';
import { withHostToolsKey } from './host-tools-key.ts';
import type { SessionContext } from './session-types.ts';
import { turnLaunch } from './start-frame.ts';

export function expectedLaunch<S>(
  ctx: SessionContext<S>,
  now: { threadId: string | undefined; tools: ReadonlyArray<HarnessV1ToolSpec>; model: string | undefined; toolsKey: string },
): Extract<ChannelRequest, { type: 'start' }>['launch'] | undefined {
  try {
    const launch = turnLaunch(ctx, { threadId: now.threadId }, { prompt: '', tools: now.tools, rerunOf: undefined, model: now.model });
    const frame = withHostToolsKey(ctx.adapter, { type: 'start', turnId: 'expected', launch }, now.toolsKey);
    return frame.type === 'start' ? frame.launch : undefined;
  } catch {
    return undefined; // the turn's own launch is checked, and refused with its reason, as it starts
  }
}
