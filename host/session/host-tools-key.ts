// A long-lived CLI lists the host tools once per process (MCP tools/list at
// start-up): a tool first offered in a later turn would never reach it. Unless
// the adapter declares that its CLI lists them again itself
// (`reListsHostTools`), the kit makes the turn's host-tool set part of a
// session-lifetime process's identity (its reuseKey), so the bridge respawns
// the CLI on the same thread when the set changes and reuses it while it does
// not (docs/writing-an-adapter.md#host-tools-between-turns).
import { createHash } from 'node:crypto';
import type { HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import type { ChannelRequest } from '../channel/index.ts';
import type { CliAdapter } from '../adapter-kit/adapter.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The tool set's identity: names, descriptions and input schemas, in name order. */
export function hostToolsKey(tools: ReadonlyArray<HarnessV1ToolSpec>): string {
  const described = [...tools]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((tool) => [tool.name, tool.description ?? null, tool.inputSchema ?? null]);
  return sha256(JSON.stringify(described)).slice(0, 16);
}

/**
 * The start (or rerun) frame with `toolsKey` folded into its launch's process identity: the adapter's
 * reuseKey, or the whole spec the bridge would compare without one. Frames of other kinds, turn-lifetime
 * launches and adapters whose CLI re-lists host tools pass unchanged.
 */
export function withHostToolsKey<S>(adapter: CliAdapter<S>, frame: ChannelRequest, toolsKey: string): ChannelRequest {
  if ((frame.type !== 'start' && frame.type !== 'rerun') || adapter.reListsHostTools === true) return frame;
  const { launch } = frame;
  if (launch.lifetime !== 'session') return frame;
  const identity = launch.reuseKey ?? [launch.argv, launch.env ?? null, launch.cwd ?? null, launch.stdin, launch.io];
  return { ...frame, launch: { ...launch, reuseKey: `host-tools:${toolsKey}:${sha256(JSON.stringify(identity))}` } };
}
