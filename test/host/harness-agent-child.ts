// A second host process for test/host/harness-agent.test.ts: continues a
// suspended turn with the real HarnessAgent from the state file the test wrote,
// then detaches. Prints one JSON line: the text it streamed, the finish
// reason, the parts the SDK schema refused, and the state detach returned.
// Usage: tsx test/host/harness-agent-child.ts <kit root> <state file>
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessV1StreamPartSchema } from '@ai-sdk/harness';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { openGate, recordingParts } from './harness-agent-helpers.ts';

const [root, stateFile] = process.argv.slice(2) as [string, string];
const { sessionId, state } = JSON.parse(readFileSync(stateFile, 'utf8'));
const invalid: HarnessV1StreamPart[] = [];
const harness = recordingParts(createBridgeHarness(fixtureAdapter(), { probeTimeoutMs: 3_000 }), (part) => {
  if (!harnessV1StreamPartSchema.safeParse(part).success) invalid.push(part);
});
const agent = new HarnessAgent({
  harness,
  sandbox: createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') }),
  tools: { gate: openGate },
});
const session = await agent.createSession({ sessionId, continueFrom: state });
const result = await agent.continueStream({ session });
let text = '';
for await (const delta of result.textStream) text += delta;
const finishReason = await result.finishReason;
const detached = await session.detach();
process.stdout.write(`${JSON.stringify({ text, finishReason, invalid, isResume: session.isResume, detached })}\n`);
