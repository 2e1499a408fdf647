// Host tools that change between turns reach a long-lived CLI
// (docs/writing-an-adapter.md#host-tools-between-turns): the fixture CLI with
// --host-tools keeps the tool list it was spawned with, and its launch carries a
// reuseKey, as a CLI that lists MCP tools once per process. The kit folds the
// turn's tool set into that reuseKey, so the bridge respawns the CLI on the same
// thread when the set changes and reuses it while it does not. The journal's
// spawn records count the processes.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCliAdapter } from '../../host/adapter-kit/adapter.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { loadSource } from '../../host/replay/source.ts';
import type { HarnessV1Session, HarnessV1ToolSpec } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { createKit, textOf, type Kit } from './session-helpers.ts';

const tool = (name: string): HarnessV1ToolSpec => ({ name, description: `tool ${name}`, inputSchema: { type: 'object', properties: {} } });

/** A turn whose prompt calls `call` with `tools` offered; every host tool call answered. */
async function toolTurn(session: HarnessV1Session, call: string, tools: HarnessV1ToolSpec[]): Promise<HarnessV1StreamPart[]> {
  const parts: HarnessV1StreamPart[] = [];
  let controlled!: (control: { submitToolResult(result: { toolCallId: string; output: unknown }): PromiseLike<void> }) => void;
  const controlling = new Promise<Parameters<typeof controlled>[0]>((resolve) => (controlled = resolve));
  const control = await session.doPromptTurn({
    prompt: `call LINES:0 TOOL:${call}`,
    tools,
    emit: (part) => {
      parts.push(part);
      if (part.type === 'tool-call') void controlling.then((c) => c.submitToolResult({ toolCallId: part.toolCallId, output: `${call} ok` }));
    },
  });
  controlled(control);
  await control.done;
  return parts;
}

const calls = (parts: HarnessV1StreamPart[]) => parts.flatMap((part) => (part.type === 'tool-call' ? [part.toolName] : []));

function journal(stateDir: string): JournalRecord[] {
  const source = loadSource(join(stateDir, 'journal.ndjson'));
  if (source.kind !== 'journal') throw new Error('expected a journal');
  return source.records.map((entry) => entry.record);
}

describe('host tools changed between turns reach a CLI that lists them once per process', () => {
  let kit: Kit;
  let lying: Kit;
  beforeAll(async () => {
    kit = await createKit('host-tools', { hostToolsAtSpawn: true });
  });
  afterAll(async () => {
    await kit?.cleanup();
    await lying?.cleanup();
  });

  it('same set: one process; a new tool: a respawn on the same thread, and the tool is called; the same set again: reused', async () => {
    const { session } = await kit.start('host-tools');
    const a = [tool('alpha')];
    const ab = [tool('alpha'), tool('beta')];
    expect(calls(await toolTurn(session, 'alpha', a))).toEqual(['alpha']);
    expect(calls(await toolTurn(session, 'alpha', a)), 'the same set: the live process').toEqual(['alpha']);
    const third = await toolTurn(session, 'beta', ab);
    expect(calls(third), `a tool first offered in turn 3 is called (text: ${JSON.stringify(textOf(third))})`).toEqual(['beta']);
    expect(calls(await toolTurn(session, 'alpha', [...ab].reverse())), 'the same set in another order: the live process').toEqual(['alpha']);
    const described = [tool('alpha'), { ...tool('beta'), description: 'beta, described anew' }];
    expect(calls(await toolTurn(session, 'beta', described)), 'a changed description is a changed set').toEqual(['beta']);
    const state = await session.doStop();
    const records = journal((state.data as { stateDir: string }).stateDir);
    const spawns = records.filter((record) => record.kind === 'spawn');
    const threads = records.flatMap((record) => (record.kind === 'stdout' && record.data.text.startsWith('{"type":"session"') ? [JSON.parse(record.data.text).id as string] : []));
    console.log(`[figures] host tools between turns: 5 turns, tool sets a,a,ab,ba,ab': ${spawns.length} CLI processes, threads ${JSON.stringify([...new Set(threads)])}`);
    expect(spawns.length, 'spawned for turn 1, 3 and 5 only').toBe(3);
    expect(new Set(threads).size, 'every process continued the same thread').toBe(1);
  }, 60_000);

  it('an adapter that claims its CLI re-lists host tools (reListsHostTools) when it does not: the new tool never reaches it', async () => {
    lying = await createKit('host-tools-lying', { hostToolsAtSpawn: true });
    const { kind: _kind, ...definition } = fixtureAdapter({ hostToolsAtSpawn: true });
    const harness = createBridgeHarness(defineCliAdapter({ ...definition, reListsHostTools: true }), { probeTimeoutMs: 1_500 });
    const { sandbox } = await lying.start('host-tools-lying-probe'); // a sandbox of this kit, cleaned up with it
    const session = await harness.doStart({ sessionId: 'host-tools-lying', sandboxSession: sandbox, sessionWorkDir: sandbox.defaultWorkingDirectory });
    expect(calls(await toolTurn(session, 'alpha', [tool('alpha')]))).toEqual(['alpha']);
    const second = await toolTurn(session, 'beta', [tool('alpha'), tool('beta')]);
    expect(calls(second)).toEqual([]);
    expect(textOf(second)).toContain('#no tool beta (this process knows alpha)');
    await session.doDestroy();
  }, 60_000);
});
