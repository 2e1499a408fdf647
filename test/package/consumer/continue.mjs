// Continue: a new process picks the suspended turn up where suspend.mjs left it.
// Usage: node continue.mjs <state file>
import { readFileSync } from 'node:fs';
import { agent, allText, report } from './agent.mjs';

const [stateFile] = process.argv.slice(2);
const { sessionId, state } = JSON.parse(readFileSync(stateFile, 'utf8'));
const session = await agent.createSession({ sessionId, continueFrom: state });
const result = await agent.continueStream({ session });
const text = await allText(result);
const finishReason = await result.finishReason;
await session.destroy();
report({ text, finishReason });
