// An aborted turn as a UI would see it: the turn's toUIMessageStream read with
// readUIMessageStream, aborted after its first lines; then the same session
// takes another turn.
import { readUIMessageStream } from 'ai';
import { agent, allText, report } from './agent.mjs';

const session = await agent.createSession();
const controller = new AbortController();
const result = await agent.stream({ session, prompt: 'long LINES:200 INTERVAL:30', abortSignal: controller.signal });
const chunkTypes = [];
let end;
const stream = result
  .toUIMessageStream({ onEnd: ({ isAborted, outcome }) => (end = { isAborted, outcome: outcome.status }) })
  .pipeThrough(new TransformStream({ transform: (chunk, out) => (chunkTypes.push(chunk.type), out.enqueue(chunk)) }));
let uiText = '';
for await (const message of readUIMessageStream({ stream })) {
  uiText = message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  if (uiText.split('\n').length > 3 && !controller.signal.aborted) controller.abort();
}
const next = await agent.stream({ session, prompt: 'next LINES:2' });
const nextText = await allText(next);
const nextFinishReason = await next.finishReason;
await session.destroy();
report({ chunkTypes: [...new Set(chunkTypes)], end, uiText, nextText, nextFinishReason });
