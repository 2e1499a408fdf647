// Our HarnessV1 declarations against the real @ai-sdk/harness 1.0.x types (a
// devDependency; the package never imports it) and the canary.3 contract they
// also serve. Most checks are compile-time: each function below only
// type-checks if the assignment it makes is allowed. Run-time checks use the
// SDK's own zod schemas on what our schemas produce.
import type * as Sdk from '@ai-sdk/harness';
import { harnessV1StreamPartSchema } from '@ai-sdk/harness';
import { describe, expect, it } from 'vitest';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxSession } from '../../host/sandbox/local/provider.ts';
import { toContinueState, toResumeSessionState, type ResumeData } from '../../host/session/resume-state.ts';
import type {
  HarnessV1ContinueTurnState,
  HarnessV1NetworkSandboxSession,
  HarnessV1PromptTurnOptions,
  HarnessV1ResumeSessionState,
  HarnessV1ResumeState,
  HarnessV1Session,
  HarnessV1StartOptions,
  HarnessV1StreamPart,
} from '../../protocol/harness-v1/index.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';

describe('our HarnessV1 declarations and @ai-sdk/harness 1.0.x', () => {
  it('a bridge harness is an SDK HarnessV1 and the local provider an SDK sandbox provider (compile time)', () => {
    const harness: Sdk.HarnessV1 = createBridgeHarness(fixtureAdapter());
    const provider: Sdk.HarnessV1SandboxProvider = createLocalSandboxProvider({ root: '/nonexistent' });
    const session = (local: LocalSandboxSession): Sdk.HarnessV1NetworkSandboxSession => local;
    expect(harness.specificationVersion).toBe('harness-v1');
    expect(provider.specificationVersion).toBe('harness-sandbox-v1');
    expect(typeof session).toBe('function');
  });

  it('what the SDK passes us is what we accept, and what we return is what it expects (compile time)', () => {
    const checks = [
      (options: Sdk.HarnessV1StartOptions): HarnessV1StartOptions => options,
      (options: Sdk.HarnessV1PromptTurnOptions): HarnessV1PromptTurnOptions => ({ ...options, emit: (part) => options.emit(part) }),
      (sandbox: Sdk.HarnessV1NetworkSandboxSession): HarnessV1NetworkSandboxSession => sandbox,
      (state: Sdk.HarnessV1ContinueTurnState): HarnessV1ContinueTurnState => state,
      (state: HarnessV1ContinueTurnState): Sdk.HarnessV1ContinueTurnState => state,
      (state: Sdk.HarnessV1ResumeSessionState): HarnessV1ResumeSessionState => state,
      (state: HarnessV1ResumeSessionState): Sdk.HarnessV1ResumeSessionState => state,
      (session: HarnessV1Session): Sdk.HarnessV1Session => session,
      (part: HarnessV1StreamPart): Sdk.HarnessV1StreamPart => part,
      (part: Sdk.HarnessV1StreamPart): HarnessV1StreamPart => part,
    ];
    expect(checks).toHaveLength(10);
  });

  it('the canary.3 shape: every state we return is its untagged resume state, and doStart takes that back (compile time)', () => {
    const checks = [
      (state: HarnessV1ContinueTurnState): HarnessV1ResumeState => state,
      (state: HarnessV1ResumeSessionState): HarnessV1ResumeState => state,
      (state: HarnessV1ResumeState, sandboxSession: HarnessV1NetworkSandboxSession): HarnessV1StartOptions => ({
        sessionId: 's',
        resumeFrom: state,
        sandboxSession,
        sessionWorkDir: '/w',
      }),
    ];
    expect(checks).toHaveLength(3);
  });

  it('our lifecycle states pass the SDK-side checks: tags, no pending fields on a resume-session, the data our lifecycleStateSchema validates', async () => {
    const harness = createBridgeHarness(fixtureAdapter());
    const data: ResumeData = {
      v: 1,
      stateDir: '/s',
      bootstrapDir: '/b',
      journalId: 'j',
      bridgeId: 'b',
      port: 1,
      cursor: 3,
      prompted: true,
      reason: 'suspend',
      turn: { turnId: 't', firstSeq: 2, prompt: 'p', rerun: false, redeliver: [] },
    };
    const suspended = toContinueState('fixture', data);
    const parked = toResumeSessionState('fixture', data);
    expect(suspended.type).toBe('continue-turn');
    expect(parked).toMatchObject({ type: 'resume-session', continueFrom: { type: 'continue-turn', data } });
    expect(toResumeSessionState('fixture', { ...data, reason: 'detach', turn: undefined })).not.toHaveProperty('continueFrom');
    const schema = harness.lifecycleStateSchema as { '~standard': { validate(value: unknown): unknown } };
    const result = (await schema['~standard'].validate(JSON.parse(JSON.stringify(suspended.data)))) as { value?: unknown; issues?: unknown };
    expect(result.issues).toBeUndefined();
    expect(result.value).toEqual(data);
  });

  it('stream parts our schema accepts are accepted by the SDK schema too, tool-input parts included; no unified interrupted', () => {
    const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
    const parts: HarnessV1StreamPart[] = [
      { type: 'stream-start', modelId: 'm' },
      { type: 'tool-input-start', id: 'c1', toolName: 'bash', providerExecuted: true },
      { type: 'tool-input-delta', id: 'c1', delta: '{"command":' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: '{}', providerExecuted: true, stepToolCallCount: 1 },
      { type: 'finish', finishReason: { unified: 'other', raw: 'aborted' }, totalUsage: usage },
    ];
    for (const part of parts) expect(harnessV1StreamPartSchema.safeParse(part).success, part.type).toBe(true);
    expect(harnessV1StreamPartSchema.safeParse({ type: 'finish', finishReason: { unified: 'interrupted', raw: 'aborted' }, totalUsage: usage }).success).toBe(false);
  });
});
