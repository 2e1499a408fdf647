// A turn as a UI sees it: toUIMessageStream, every chunk checked by `ai`'s uiMessageChunkSchema (what
// useChat's transport checks), folded by readUIMessageStream with terminateOnError (a chunk it cannot
// fold throws). Usage: node ui-flow.mjs <mode> <state file>
//   whole:    one uninterrupted turn
//   suspend:  the same turn, suspended after its first lines; state and message to the state file
//   stop:     the same turn, the session stopped after its first lines; state and message to the state file
//   continue: a second process continues the suspended turn (or resumes the stopped session and continues
//             its turn, then runs another), folded onto the first process's message
//   tool:     a turn that calls the host tool `lookup` (its UI part and generate()'s toolResults)
import { readFileSync, writeFileSync } from 'node:fs';
import { safeValidateTypes } from '@ai-sdk/provider-utils';
import { jsonSchema, readUIMessageStream, tool, uiMessageChunkSchema } from 'ai';
import { HarnessAgent } from '@ai-sdk/harness/agent';
import { createBridgeHarness, createLocalSandboxProvider } from 'harness-bridge';
import { fixtureAdapter } from 'harness-bridge/testing';
import { agent, report } from './agent.mjs';

const [mode, stateFile] = process.argv.slice(2);
const prompt = 'ui LINES:20 INTERVAL:40';

/** Folds a UI chunk stream onto `message`; `onMessage` sees each step of the fold. */
async function fold(stream, message, onMessage = () => {}) {
  const invalid = [];
  const errors = [];
  const checked = stream.pipeThrough(
    new TransformStream({
      async transform(chunk, out) {
        if (!(await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema })).success) invalid.push(chunk);
        if (chunk.type === 'error') errors.push(chunk.errorText);
        out.enqueue(chunk);
      },
    }),
  );
  let last = message;
  let foldError;
  try {
    for await (const next of readUIMessageStream({ stream: checked, terminateOnError: true, ...(message ? { message } : {}) })) {
      last = next;
      onMessage(next);
    }
  } catch (error) {
    foldError = error instanceof Error ? error.message : String(error);
  }
  return { message: last, invalid, errors, foldError };
}

const textOf = (message) => (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
const facts = ({ message, invalid, errors, foldError }) => ({ text: textOf(message), invalid: invalid.length, errors, foldError: foldError ?? null });

if (mode === 'whole') {
  const session = await agent.createSession();
  const result = await agent.stream({ session, prompt });
  const folded = await fold(result.toUIMessageStream());
  await session.destroy();
  report(facts(folded));
} else if (mode === 'suspend' || mode === 'stop') {
  const session = await agent.createSession();
  // A stop takes a moment to land (a suspend, then the sandbox's stop): a longer turn, so it lands mid-turn.
  const result = await agent.stream({ session, prompt: mode === 'stop' ? 'stopped LINES:200 INTERVAL:20' : prompt });
  let cutting;
  const folded = await fold(result.toUIMessageStream(), undefined, (message) => {
    if (!cutting && textOf(message).split('\n').length > 5) cutting = mode === 'suspend' ? session.suspendTurn() : session.stop();
  });
  const state = await cutting;
  writeFileSync(stateFile, JSON.stringify({ mode, sessionId: session.sessionId, state, message: folded.message }));
  report(facts(folded));
} else if (mode === 'continue') {
  // A suspended turn is continued from its continue state; a stopped session is resumed, and its turn continued.
  const { mode: cut, sessionId, state, message } = JSON.parse(readFileSync(stateFile, 'utf8'));
  const session = await agent.createSession(cut === 'stop' ? { sessionId, resumeFrom: state } : { sessionId, continueFrom: state });
  const result = await agent.continueStream({ session });
  const folded = await fold(result.toUIMessageStream(), message);
  const finishReason = await result.finishReason;
  const next = cut === 'stop' ? await agent.generate({ session, prompt: 'after LINES:2' }) : undefined;
  await session.destroy();
  report({ ...facts(folded), finishReason, ...(next ? { nextText: next.text } : {}) });
} else if (mode === 'tool') {
  let runs = 0;
  const lookup = tool({ description: 'looks something up', inputSchema: jsonSchema({ type: 'object' }), execute: async () => (runs++, 'found it') });
  const withTool = new HarnessAgent({ harness: createBridgeHarness(fixtureAdapter()), sandbox: createLocalSandboxProvider(), tools: { lookup } });
  const session = await withTool.createSession();
  const result = await withTool.stream({ session, prompt: 'tool LINES:1 TOOL:lookup' });
  const folded = await fold(result.toUIMessageStream());
  const part = (folded.message?.parts ?? []).find((p) => p.type === 'tool-lookup');
  const generated = await withTool.generate({ session, prompt: 'again LINES:1 TOOL:lookup' });
  await session.destroy();
  report({
    ...facts(folded),
    toolPart: part ? { state: part.state, output: part.output ?? null } : null,
    toolResults: generated.toolResults.map((r) => ({ toolName: r.toolName, output: r.output })),
    runs,
  });
}
