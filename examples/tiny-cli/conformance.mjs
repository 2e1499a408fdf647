// The kit's adapter conformance list against the real tiny-cli, the scripted
// model server and the local sandbox provider (docs/writing-an-adapter.md#tutorial).
// Prints one line per case; exits 1 if any case fails.
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBridgeHarness, createLocalSandboxProvider } from 'harness-bridge';
import { adapterConformance, cliThatCannotStart, startModelServer } from 'harness-bridge/testing';
import tinyAdapter from './tiny-adapter.mjs';

const model = await startModelServer();
const root = mkdtempSync(join(tmpdir(), 'tiny-cli-conformance-'));
chmodSync(root, 0o711); // a root bridge runs the CLI under a uid of its own, which must pass through
const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
const adapter = () => tinyAdapter({ scriptedModel: model });
const open = async (sessionId, resume) => {
  const sandbox = resume ? await provider.resumeSession({ sessionId }) : await provider.createSession({ sessionId });
  sandboxes.set(sessionId, sandbox);
  const workDir = join(sandbox.defaultWorkingDirectory, 'work');
  mkdirSync(workDir, { recursive: true });
  return { sandbox, workDir };
};
const sandboxes = new Map();
let failed = 0;
for (const testCase of adapterConformance) {
  const cleanups = [];
  try {
    const outcome = await testCase.run({
      harness: () => createBridgeHarness(adapter()),
      harnessWithFailingStart: () => createBridgeHarness(cliThatCannotStart(adapter())),
      createSandbox: (id) => open(id, false),
      resumeSandbox: (id) => open(id, true),
      prompts: {
        text: 'SCENARIO:text conformance',
        textReply: /^Scripted reply \d+ \(text\): you said "conformance"\.$/,
        long: 'SCENARIO:slow CHUNKS:30 INTERVAL:40 conformance slices',
        minParts: 30,
      },
      modelId: 'tiny-model',
      defer: (cleanup) => cleanups.push(cleanup),
    });
    console.log(`${outcome.status === 'pass' ? 'pass' : `skip (${outcome.reason})`}: ${testCase.name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL: ${testCase.name}: ${error.message}`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}
for (const sandbox of sandboxes.values()) await sandbox.stop();
await model.close();
rmSync(root, { recursive: true, force: true });
console.log(`conformance: ${adapterConformance.length - failed} of ${adapterConformance.length} cases pass or skip`);
process.exitCode = failed > 0 ? 1 : 0;
