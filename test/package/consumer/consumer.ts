// Type-checked (not run) against the published .d.ts, with skipLibCheck off,
// under moduleResolution node16 and bundler: every public entry, and the
// harness and provider where the AI SDK expects them.
import { HarnessAgent } from '@ai-sdk/harness/agent';
import type { HarnessV1 as SdkHarnessV1, HarnessV1SandboxProvider as SdkSandboxProvider } from '@ai-sdk/harness';
import { tool } from 'ai';
import { z } from 'zod';
import {
  BridgeSessionError,
  HarnessBridgeError,
  createBridgeHarness,
  createLocalSandboxProvider,
  isHarnessBridgeErrorCode,
  type BridgeHarness,
  type BridgeHarnessSettings,
  type HarnessV1StreamPart,
  type LocalSandboxProvider,
} from 'harness-bridge';
import { claudeCodeAdapter, claudeCodeBuiltinTools } from 'harness-bridge/adapters/claude-code';
import { codexAdapter } from 'harness-bridge/adapters/codex';
import { piAdapter } from 'harness-bridge/adapters/pi';
import { createLineBuffers, defineCliAdapter, partWriter, createStreamState, type CliAdapter } from 'harness-bridge/adapter-kit';
import { bridgeRecipe, recipeIdentity } from 'harness-bridge/bootstrap';
import { PROTOCOL_VERSION_V1, recordSchema, type JournalRecord } from 'harness-bridge/protocol';
import { adapterConformance, fixtureAdapter, sandboxProviderConformance, startDemoModel } from 'harness-bridge/testing';

const settings: BridgeHarnessSettings = { readyTimeoutMs: 10_000 };
const sandbox: LocalSandboxProvider = createLocalSandboxProvider({ root: '/tmp/sandboxes' });

export const agent = new HarnessAgent({
  harness: createBridgeHarness(fixtureAdapter(), settings),
  sandbox,
  tools: {
    lookup: tool({ description: 'a host tool', inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => q.length }),
  },
});

// Our harness and provider are the AI SDK's types (one @ai-sdk/provider in the tree).
export const asSdkHarness: SdkHarnessV1 = createBridgeHarness(claudeCodeAdapter(), settings);
export const asSdkProvider: SdkSandboxProvider = sandbox;
export const harnesses: BridgeHarness[] = [createBridgeHarness(codexAdapter()), createBridgeHarness(piAdapter())];
export const builtins: string[] = Object.keys(claudeCodeBuiltinTools);

export const myAdapter: CliAdapter<{ n: number }> = defineCliAdapter<{ n: number }>({
  harnessId: 'my-cli',
  builtinTools: {},
  launch: (ctx) => ({ argv: ['my-cli'], cwd: ctx.sessionWorkDir, stdin: 'pipe', lifetime: 'session' }),
  encodePrompt: ({ text }) => `${text}\n`,
  threadId: () => undefined,
  translator: {
    init: () => ({ n: 0 }),
    step: (state, record: JournalRecord) => {
      const parts: HarnessV1StreamPart[] = [];
      partWriter(createStreamState(), parts);
      return { state: { n: state.n + record.seq }, parts };
    },
  },
});

export async function more(): Promise<void> {
  createLineBuffers();
  const recipe = await bridgeRecipe({ harnessId: 'fixture', bridgeSource: '' });
  const identity: string = recipeIdentity(recipe);
  const version: string = PROTOCOL_VERSION_V1;
  recordSchema.parse({});
  const cases: number = adapterConformance.length + sandboxProviderConformance.length;
  const model = await startDemoModel();
  await model.close();
  const error: unknown = new Error(`${identity} ${version} ${cases}`);
  if (error instanceof HarnessBridgeError && isHarnessBridgeErrorCode(error.code)) throw error;
  if (BridgeSessionError.isInstance(error)) throw error;
}
