// The agent the flow programs share: the fixture adapter (a deterministic CLI,
// no model) in the local sandbox provider, through the published entries only.
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createBridgeHarness, createLocalSandboxProvider } from 'harness-bridge';
import { fixtureAdapter } from 'harness-bridge/testing';

export const agent = new HarnessAgent({
  harness: createBridgeHarness(fixtureAdapter()),
  sandbox: createLocalSandboxProvider(),
});

/** The flow's facts, as the last line of stdout (the test reads it). */
export function report(facts) {
  process.stdout.write(`${JSON.stringify(facts)}\n`);
}

/** All the text of a result's stream. */
export async function allText(result) {
  let text = '';
  for await (const delta of result.textStream) text += delta;
  return text;
}
