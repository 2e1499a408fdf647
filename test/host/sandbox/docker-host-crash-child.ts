// A host process for docker-host-crash.test.ts, SIGKILLed by the test mid-turn: a Docker session
// (no ports: the bridge is reached over exec-stream relays), one long fixture turn. Prints one JSON
// line per event: {container}, then {delta} per text delta. Usage:
//   node --import tsx test/host/sandbox/docker-host-crash-child.ts <name prefix> <session id>
import { readFile } from 'node:fs/promises';
import { createBridgeHarness } from '../../../host/harness.ts';
import { createDockerSandboxProvider } from '../../../host/sandbox/docker/provider.ts';
import { fixtureAdapter, fixtureCliPath } from '../../fixtures/fixture-adapter.ts';

const [namePrefix, sessionId] = process.argv.slice(2) as [string, string];
const say = (event: unknown) => process.stdout.write(`${JSON.stringify(event)}\n`);
const provider = createDockerSandboxProvider({ namePrefix });
const sandbox = await provider.createSession({ sessionId });
say({ container: sandbox.container });
await sandbox.writeTextFile({ path: fixtureCliPath, content: await readFile(fixtureCliPath, 'utf8') });
await sandbox.run({ command: 'mkdir -p /work/project' });
const session = await createBridgeHarness(fixtureAdapter(), { probeTimeoutMs: 10_000 }).doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: '/work/project' });
const control = await session.doPromptTurn({
  prompt: 'crash LINES:2000 INTERVAL:20',
  emit: (part) => {
    if (part.type === 'text-delta') say({ delta: part.delta });
  },
});
await control.done;
await new Promise(() => undefined); // the test kills this process before the turn ends
