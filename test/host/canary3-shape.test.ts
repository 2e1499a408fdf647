// The canary.3 contract (docs/design.md#harnessv1) keeps working beside @ai-sdk/harness 1.0.x: its one
// untagged resume state (no `type`: what a caller kept from doSuspendTurn) continues a turn through
// doStart({ resumeFrom }); a canary.3 sandbox session (getPortUrl only, no destroy, no
// getPortEndpoint) carries sessions; skills given to doStart are on disk before the first turn;
// resumeStateSchema takes whole states of both shapes. The 1.0.x shapes are
// test/host/harness-agent.test.ts's; most other session tests pass states back as canary.3 does.
import { mkdir, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCliAdapter } from '../../host/adapter-kit/adapter.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { resumeStateSchemaFor } from '../../host/session/resume-state.ts';
import type { HarnessV1NetworkSandboxSession } from '../../protocol/harness-v1/sandbox.ts';
import type { HarnessV1ResumeState } from '../../protocol/harness-v1/session.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { createKit, runTurn, startTurn, textOf, type Kit } from './session-helpers.ts';

let kit: Kit;
beforeAll(async () => {
  kit = await createKit('canary3');
});
afterAll(async () => {
  await kit.cleanup();
});

/** What a canary.3 provider hands over: no getPortEndpoint, no destroy. */
const canary3Sandbox = (sandbox: HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => ({ ...sandbox, getPortEndpoint: undefined, destroy: undefined });

const lines = (prompt: string, count: number) => Array.from({ length: count }, (_, i) => `${prompt} #${i}\n`).join('');

describe('the canary.3 contract', () => {
  it('an untagged state from a suspend continues the turn through doStart({ resumeFrom }): the rest once, the host tool answered there', async () => {
    const prompt = 'untagged LINES:4 TOOL:probe';
    const { session } = await kit.start('untagged', { wrap: canary3Sandbox });
    let suspending: PromiseLike<HarnessV1ResumeState> | undefined;
    const { parts, control } = await startTurn(session, prompt, (part) => {
      if (part.type === 'tool-call') suspending = session.doSuspendTurn(); // the CLI waits for the answer: mid-turn by construction
    });
    await control.done;
    const tagged = await suspending!;
    const untagged: HarnessV1ResumeState = { harnessId: tagged.harnessId, specificationVersion: tagged.specificationVersion, data: tagged.data };
    expect(untagged).not.toHaveProperty('type');

    const resumed = await kit.resume('untagged', untagged, { wrap: canary3Sandbox });
    expect(resumed.session.isResume).toBe(true);
    const rest: HarnessV1StreamPart[] = [];
    const next = await resumed.session.doContinueTurn({
      emit: (part) => {
        rest.push(part);
        if (part.type === 'tool-call') void next.submitToolResult({ toolCallId: part.toolCallId, output: 'answered' });
      },
    });
    await next.done;
    expect(textOf([...parts, ...rest])).toBe(lines(prompt, 4));
    expect(rest.filter((part) => part.type === 'finish').map((part) => part.type === 'finish' && part.finishReason.unified)).toEqual(['stop']);
    // The untagged state a detach returns (type dropped again) resumes the session for the next prompt.
    const parked = await resumed.session.doDetach();
    const again = await kit.resume('untagged', { harnessId: parked.harnessId, specificationVersion: parked.specificationVersion, data: parked.data }, { wrap: canary3Sandbox });
    expect(textOf(await runTurn(again.session, 'after LINES:1'))).toBe(lines('after LINES:1', 1));
    await again.session.doDestroy();
  });

  it('skills given to doStart are written before it returns, where the adapter says', async () => {
    const adapter = defineCliAdapter({
      ...fixtureAdapter(),
      skillFiles: (skills, dir) => skills.map((skill) => ({ path: posix.join(dir, 'skills', `${skill.name}.md`), content: skill.content })),
    });
    const sandbox = await kit.provider.createSession({ sessionId: 'skills' });
    const workDir = join(sandbox.defaultWorkingDirectory, 'fixture-skills');
    await mkdir(workDir, { recursive: true });
    const session = await createBridgeHarness(adapter, { probeTimeoutMs: 1_500 }).doStart({
      sessionId: 'skills',
      sandboxSession: canary3Sandbox(sandbox),
      sessionWorkDir: workDir,
      skills: [{ name: 'greet', description: 'greets', content: 'SAY HELLO' }],
    });
    expect(await readFile(join(workDir, 'skills/greet.md'), 'utf8'), 'on disk before any turn').toBe('SAY HELLO');
    expect(textOf(await runTurn(session, 'with skills LINES:1'))).toBe(lines('with skills LINES:1', 1));
    await session.doDestroy();
    await sandbox.destroy();
  });

  it('resumeStateSchema (canary.3: the whole state) takes both shapes and keeps the 1.0.x fields; a foreign harness is refused', async () => {
    const { session } = await kit.start('schema');
    await runTurn(session, 'schema LINES:1');
    const parked = await session.doDetach();
    const schema = resumeStateSchemaFor('fixture');
    expect(schema.parse(parked)).toEqual(parked);
    const untagged = { harnessId: parked.harnessId, specificationVersion: parked.specificationVersion, data: parked.data };
    expect(schema.parse(untagged)).toEqual(untagged);
    expect(schema.safeParse({ ...parked, harnessId: 'codex' }).success).toBe(false);
    const again = await kit.resume('schema', parked);
    await again.session.doDestroy();
  });
});
