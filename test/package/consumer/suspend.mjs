// Suspend: a long turn is suspended after its first lines; the continuation
// state goes to a file for continue.mjs, a second node process.
// Usage: node suspend.mjs <state file>
import { writeFileSync } from 'node:fs';
import { agent, report } from './agent.mjs';

const [stateFile] = process.argv.slice(2);
const session = await agent.createSession();
const result = await agent.stream({ session, prompt: 'count LINES:40 INTERVAL:50' });
let text = '';
let suspending;
for await (const delta of result.textStream) {
  text += delta;
  if (!suspending && text.split('\n').length > 5) suspending = session.suspendTurn();
}
const state = await suspending;
writeFileSync(stateFile, JSON.stringify({ sessionId: session.sessionId, state }));
report({ text });
