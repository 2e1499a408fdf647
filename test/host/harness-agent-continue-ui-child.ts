// A second host process for test/host/harness-agent-continue-ui.test.ts:
// continues the suspended turn with the real HarnessAgent from the state file
// the test wrote and folds the continuation onto the message the first slice
// built (readUIMessageStream, terminateOnError), then destroys the session.
// Prints one JSON line: the folded message, the chunks uiMessageChunkSchema
// refused, the parts the SDK stream-part schema refused, and the fold's error.
// Usage: tsx test/host/harness-agent-continue-ui-child.ts <kit root> <state file>
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessV1StreamPartSchema } from '@ai-sdk/harness';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createBridgeHarness } from '../../host/harness.ts';
import { createLocalSandboxProvider } from '../../host/sandbox/local/provider.ts';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { fixtureAdapter } from '../fixtures/fixture-adapter.ts';
import { recordingParts } from './harness-agent-helpers.ts';
import { foldUI } from './ui-fold.ts';

const [root, stateFile] = process.argv.slice(2) as [string, string];
const { sessionId, state, head } = JSON.parse(readFileSync(stateFile, 'utf8'));
const invalidParts: HarnessV1StreamPart[] = [];
const harness = recordingParts(createBridgeHarness(fixtureAdapter(), { probeTimeoutMs: 3_000 }), (part) => {
  if (!harnessV1StreamPartSchema.safeParse(part).success) invalidParts.push(part);
});
const agent = new HarnessAgent({
  harness,
  sandbox: createLocalSandboxProvider({ root: join(root, 'sandboxes'), templatesRoot: join(root, 'templates') }),
});
const session = await agent.createSession({ sessionId, continueFrom: state });
const folded = await foldUI((await agent.continueStream({ session })).toUIMessageStream(), head);
await session.destroy();
const error = folded.error === undefined ? null : String(folded.error);
process.stdout.write(`${JSON.stringify({ message: folded.message, invalid: folded.invalid, invalidParts, error })}\n`);
