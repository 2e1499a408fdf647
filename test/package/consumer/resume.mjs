// Stop → resume and detach → resume, across processes: the first process runs
// a turn and ends its session with stop() or detach(), writing the resume state;
// the second resumes the session from that state and runs another turn.
// Usage: node resume.mjs <stop|detach> <first|second> <state file>
import { readFileSync, writeFileSync } from 'node:fs';
import { agent, allText, report } from './agent.mjs';

const [how, phase, stateFile] = process.argv.slice(2);
if (phase === 'first') {
  const session = await agent.createSession();
  const result = await agent.stream({ session, prompt: `before ${how} LINES:2` });
  const text = await allText(result);
  const finishReason = await result.finishReason;
  const state = how === 'stop' ? await session.stop() : await session.detach();
  writeFileSync(stateFile, JSON.stringify({ sessionId: session.sessionId, state }));
  report({ text, finishReason });
} else {
  const { sessionId, state } = JSON.parse(readFileSync(stateFile, 'utf8'));
  const session = await agent.createSession({ sessionId, resumeFrom: state });
  const result = await agent.stream({ session, prompt: `after ${how} LINES:2` });
  const text = await allText(result);
  const finishReason = await result.finishReason;
  await session.destroy();
  report({ text, finishReason, isResume: session.isResume });
}
