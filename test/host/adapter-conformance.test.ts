// The kit's adapter conformance list, run against the fixture adapter over
// the fixture CLI through createBridgeHarness and the local sandbox provider.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { adapterConformance, type AdapterConformanceContext } from '../../host/testing/conformance/adapter-conformance.ts';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider, type LocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';

let root: string;
let provider: LocalSandboxProvider;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hb-conformance-'));
  provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('adapter conformance: fixture adapter', () => {
  for (const testCase of adapterConformance) {
    it(testCase.name, async (context) => {
      const cleanups: Array<() => unknown> = [];
      const open = async (sessionId: string, resume: boolean) => {
        const sandbox = resume ? await provider.resumeSession({ sessionId }) : await provider.createSession({ sessionId });
        cleanups.unshift(() => sandbox.stop()); // sandboxes stop last, after the sessions' own cleanup
        const workDir = join(sandbox.defaultWorkingDirectory, `fixture-${sessionId}`);
        await mkdir(workDir, { recursive: true });
        return { sandbox, workDir };
      };
      const ctx: AdapterConformanceContext = {
        harness: () => createBridgeHarness(fixtureAdapter(), { probeTimeoutMs: 1_500 }),
        createSandbox: (id) => open(id, false),
        resumeSandbox: (id) => open(id, true),
        prompts: {
          text: 'hello LINES:2',
          long: 'long LINES:60 INTERVAL:5',
          minParts: 40,
          hostTool: { prompt: 'tool LINES:1 TOOL:lookup', tools: [{ name: 'lookup' }], output: { ok: true } },
        },
        defer: (cleanup) => void cleanups.push(cleanup),
      };
      try {
        const outcome = await testCase.run(ctx);
        if (outcome.status === 'skip') context.skip(outcome.reason);
      } finally {
        for (const cleanup of cleanups.reverse()) await cleanup();
      }
    });
  }
});
