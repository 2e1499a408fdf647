// Every host-side wait has a checkpoint and an owner-less timeout (issue 40 item 2), for the waits the
// bridge cannot see itself: the fixture CLI's stdin host tool call and its own approval request travel
// over its stdout/stdin, translated into tool-call / tool-approval-request parts by the adapter.
// - onCheckpoint fires right after such a part (a part-level milestone), before the host answers it;
// - with no host attached for ownerlessToolTimeoutMs, the bridge writes the host's pre-encoded error
//   answer (or denial) to the CLI (host-wait frame), journals the failed answer, and the turn ends;
//   a resuming host reads the failure in the journal.
// MCP calls keep their record-level milestone and bridge-side timeout (test/bridge/owner-watch.test.ts).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSource } from '../../host/replay/source.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/journal-record.ts';
import { mkdir } from 'node:fs/promises';
import { createBridgeHarness } from '../../host/harness.ts';
import { echoUpperTool, mcpClientAdapter } from '../fixtures/mcp-client-adapter.ts';
import { createKit, startTurn, type Kit } from './session-helpers.ts';

const ownerlessToolTimeoutMs = 300;
let kit: Kit;
beforeAll(async () => {
  kit = await createKit('host-waits');
});
afterAll(async () => {
  await kit.cleanup();
});

function journal(stateDir: string): JournalRecord[] {
  const source = loadSource(join(stateDir, 'journal.ndjson'));
  if (source.kind !== 'journal') throw new Error('expected a journal');
  return source.records.map((entry) => entry.record);
}

/** Polls the journal (a hang guard bounds it, not a timed assertion) until `found` holds. */
async function journalUntil(stateDir: string, found: (records: JournalRecord[]) => boolean): Promise<JournalRecord[]> {
  for (let polls = 0; ; polls++) {
    const records = journal(stateDir);
    if (found(records)) return records;
    if (polls > 2_000) throw new Error('the journal never showed it');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('checkpoints at host waits the CLI asks for over its own stdio', () => {
  it.each([
    ['stdin host tool call', 'TOOL:lookup', 'tool-call'],
    ['CLI approval request', 'APPROVE:rm', 'tool-approval-request'],
  ] as const)('%s: a checkpoint comes right after the part, before the answer', async (name, marker, partType) => {
    const events: string[] = [];
    const sessionId = `cp-${partType}`;
    const { session } = await kit.start(sessionId, {
      settings: { checkpointEveryRecords: 100_000, onCheckpoint: () => events.push('checkpoint') },
    });
    let answer: (() => void) | undefined;
    const { control } = await startTurn(session, `${name} LINES:1 ${marker}`, (part) => {
      events.push(part.type);
      if (part.type === 'tool-call' && partType === 'tool-call') answer = () => void control.submitToolResult({ toolCallId: part.toolCallId, output: 'found' });
      if (part.type === 'tool-approval-request') answer = () => void control.submitToolApproval!({ approvalId: part.approvalId, approved: true });
    });
    // The answer waits until the checkpoint for the call went out (the milestone is offered after the batch's parts).
    const checkpointed = () => events.includes(partType) && events.slice(events.indexOf(partType)).includes('checkpoint');
    for (let polls = 0; !checkpointed(); polls++) {
      if (polls > 2_000) throw new Error(`no checkpoint after the ${partType} part: ${events.join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const at = events.indexOf(partType);
    expect(events.slice(at + 1, events.indexOf('checkpoint', at) + 1).every((e) => e === 'checkpoint' || !/^(text|tool-result|finish)/.test(e))).toBe(true);
    answer!();
    await control.done;
    expect(events.at(-1) === 'finish' || events.at(-2) === 'finish').toBe(true);
    await session.doDetach();
  });
});

describe('checkpoints at host waits over MCP', () => {
  it('MCP host tool call: a checkpoint comes right after the tool-call part, before the answer', async () => {
    const events: string[] = [];
    const sandbox = await kit.provider.createSession({ sessionId: 'cp-mcp' });
    const workDir = join(sandbox.defaultWorkingDirectory, 'mcp');
    await mkdir(workDir, { recursive: true });
    const harness = createBridgeHarness(mcpClientAdapter(), { probeTimeoutMs: 1_500, checkpointEveryRecords: 100_000, onCheckpoint: () => events.push('checkpoint') });
    const session = await harness.doStart({ sessionId: 'cp-mcp', sandboxSession: sandbox, sessionWorkDir: workDir });
    let answer: (() => void) | undefined;
    const control = await session.doPromptTurn({
      prompt: 'call',
      tools: [echoUpperTool],
      emit: (part) => {
        events.push(part.type);
        if (part.type === 'tool-call') answer = () => void control.submitToolResult({ toolCallId: part.toolCallId, output: 'X' });
      },
    });
    const checkpointed = () => events.includes('tool-call') && events.slice(events.indexOf('tool-call')).includes('checkpoint');
    for (let polls = 0; !checkpointed(); polls++) {
      if (polls > 2_000) throw new Error(`no checkpoint after the tool-call part: ${events.join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    answer!();
    await control.done;
    expect(events.filter((e) => e === 'finish')).toHaveLength(1);
    await session.doDestroy();
  });
});

describe('the owner-less timeout covers waits over the CLI stdio', () => {
  it.each([
    ['stdin host tool call', 'TOOL:lookup', 'tool-result'],
    ['CLI approval request', 'APPROVE:rm', 'approval'],
  ] as const)('%s: the host suspends and never answers; the CLI reads the failure, the journal says so, the turn ends', async (name, marker, answerKind) => {
    const sessionId = `ownerless-${answerKind}`;
    const { session } = await kit.start(sessionId, { settings: { ownerlessToolTimeoutMs } });
    let suspended: Promise<HarnessV1ResumeState> | null = null;
    const { control } = await startTurn(session, `${name} LINES:1 ${marker}`, (part) => {
      if (part.type === 'tool-call' || part.type === 'tool-approval-request') suspended ??= Promise.resolve(session.doSuspendTurn());
    });
    await control.done;
    const state = await suspended!;
    const { stateDir } = state.data as { stateDir: string };
    // No host is attached: the bridge fails the wait and the CLI finishes its turn on its own.
    const records = await journalUntil(stateDir, (rs) => rs.some((r) => r.kind === 'turn-end'));
    const failed = records.filter((r) => r.kind === answerKind);
    expect(failed).toHaveLength(1);
    expect(JSON.stringify(failed[0]!.data)).toMatch(/no host answered/);
    const wrote = records.filter((r) => r.kind === 'stdin' && /no host answered/.test(r.data.text));
    expect(wrote, 'the CLI was sent the failure once').toHaveLength(1);
    const said = records.filter((r) => r.kind === 'stdout' && /no host answered/.test(r.data.text));
    expect(said.length, 'the CLI read it').toBeGreaterThan(0);
    const end = records.find((r) => r.kind === 'turn-end');
    expect(end).toBeDefined();

    // A resuming host gets the rest of the turn, ending once.
    const second = await kit.resume(sessionId, state, { settings: { ownerlessToolTimeoutMs } });
    const rest: HarnessV1StreamPart[] = [];
    const late: Array<Promise<string>> = [];
    const control2 = await second.session.doContinueTurn({
      emit: (part) => {
        rest.push(part);
        // A late answer to the failed call (were it delivered again) is refused, never kept.
        const answer =
          part.type === 'tool-call' && !part.providerExecuted
            ? () => control2.submitToolResult({ toolCallId: part.toolCallId, output: 'too late' })
            : part.type === 'tool-approval-request'
              ? () => control2.submitToolApproval!({ approvalId: part.approvalId, approved: true })
              : undefined;
        if (answer) late.push(Promise.resolve().then(answer).then(() => 'kept', (error: Error) => error.message));
      },
    });
    await control2.done;
    expect(rest.filter((p) => p.type === 'finish')).toHaveLength(1);
    // The journal answered it (failed): the continuation shows it settled, never asks the host again.
    expect(late, 'the failed call is not delivered again as one to answer').toHaveLength(0);
    if (answerKind === 'tool-result') {
      expect(rest.find((p) => p.type === 'tool-result'), 'the failure is shown as the call\'s result').toMatchObject({ isError: true, result: expect.stringMatching(/no host answered/) });
    }
    expect(kit.diagnostics.some((d) => /its result is kept for the re-driven turn/.test(d.message)), 'no late answer kept').toBe(false);
    await second.session.doDetach();
    console.log(`[figures] host-waits ${answerKind}: ownerlessToolTimeoutMs=${ownerlessToolTimeoutMs} failed=${failed.length} written=${wrote.length} asked-again=${late.length}`);
  });
});
