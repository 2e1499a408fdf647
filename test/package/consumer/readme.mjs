import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createBridgeHarness, createLocalSandboxProvider } from 'harness-bridge';
import { fixtureAdapter } from 'harness-bridge/testing';
// A real CLI instead: import { claudeCodeAdapter } from 'harness-bridge/adapters/claude-code';

const agent = new HarnessAgent({
  harness: createBridgeHarness(fixtureAdapter()), // or claudeCodeAdapter()
  sandbox: createLocalSandboxProvider(), // sessions: directories under ~/.cache/harness-bridge/sandboxes (as root /var/cache/harness-bridge/sandboxes; $XDG_CACHE_HOME/harness-bridge/sandboxes when it is set)
});

const session = await agent.createSession();
const result = await agent.stream({ session, prompt: 'Hello from the README LINES:3' });
for await (const text of result.textStream) process.stdout.write(text);
console.log(`finish: ${await result.finishReason}`);
await session.destroy();
