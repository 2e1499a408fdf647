// A host process for test/host/session-host-crash.test.ts, killed by the test
// mid-turn (SIGKILL: no suspend, no detach). Prints one JSON line per event:
// {part}, {checkpoint} (onCheckpoint's state, after the parts it covers),
// {detached}. Usage:
//   node --import tsx test/host/crash-host-child.ts <kit root> <sessionId> <mode> <prompt>
// mode fresh: one turn on a new session.
// mode after-detach: a first turn, doDetach (printed), then a new host instance
// resumes from that state and runs <prompt> (the app kept only the detach state).
import { join } from 'node:path';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';

const [root, sessionId, mode, prompt] = process.argv.slice(2) as [string, string, string, string];
const say = (event: unknown) => process.stdout.write(`${JSON.stringify(event)}\n`);
const provider = createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') });
const harness = createBridgeHarness(fixtureAdapter(), {
  probeTimeoutMs: 3_000,
  checkpointEveryRecords: 10,
  onCheckpoint: (state) => say({ checkpoint: state }),
});
const sandbox = await provider.createSession({ sessionId });
const workDir = join(sandbox.defaultWorkingDirectory, `fixture-${sessionId}`);
const { mkdir } = await import('node:fs/promises');
await mkdir(workDir, { recursive: true });
let session = await harness.doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: workDir });
if (mode === 'after-detach') {
  const first = await session.doPromptTurn({ prompt: 'first LINES:2', emit: () => undefined });
  await first.done;
  const detached = await session.doDetach();
  say({ detached });
  session = await harness.doStart({ sessionId, sandboxSession: await provider.resumeSession({ sessionId }), sessionWorkDir: workDir, resumeFrom: detached });
}
const control = await session.doPromptTurn({ prompt, emit: (part) => say({ part }) });
await control.done;
say({ done: true });
await new Promise(() => undefined); // wait to be killed
