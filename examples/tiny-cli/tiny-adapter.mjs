// The tutorial's adapter (docs/writing-an-adapter.md#tutorial) for tiny-cli.mjs, beside it.
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  createLineBuffers, createStreamState, defineCliAdapter, lineBuffersSchema, parseJsonObject,
  partWriter, readJsonLine, readSnapshot, streamStateSchema, takeSnapshot, usageFromCounts,
} from 'harness-bridge/adapter-kit';

const cliPath = fileURLToPath(new URL('./tiny-cli.mjs', import.meta.url));

// What tiny-cli prints; any other line becomes a raw part.
const lineSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), thread: z.string(), model: z.string() }),
  z.object({ type: z.literal('delta'), text: z.string() }),
  z.object({
    type: z.literal('done'),
    reason: z.enum(['stop', 'interrupted', 'error']),
    usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }).optional(),
    error: z.string().optional(),
  }),
]);

// Pure: the parts for one journal record, from the state of the turn so far.
function step(state, record) {
  const parts = [];
  const out = partWriter(state.stream, parts);
  if (record.kind === 'turn-end') out.endTurn(record, 'tiny-cli'); // exit, abort, stop: still one finish
  const line = readJsonLine(state.lines, record, lineSchema);
  if (!line) return { state, parts };
  if (!line.ok) out.raw(line.stream === 'stderr' ? { stderr: line.json } : line.json);
  else if (line.value.type === 'start') out.start(line.value.model);
  else if (line.value.type === 'delta') {
    if (!state.stream.block) out.open('text', `text-${record.seq}`);
    out.delta(line.value.text);
  } else {
    const { reason, usage, error } = line.value;
    if (error) out.push({ type: 'error', error: { message: error } });
    const counts = usage && { noCache: usage.prompt_tokens, cacheRead: 0, cacheWrite: 0, output: usage.completion_tokens, reasoning: 0 };
    out.finish({ unified: reason === 'interrupted' ? 'other' : reason, raw: reason }, usageFromCounts(counts));
  }
  return { state, parts };
}

// `harness-bridge run` calls this with the scripted model it started; conformance.mjs with its own.
export default function tinyAdapter({ scriptedModel, modelId = 'tiny-model' } = {}) {
  return defineCliAdapter({
    harnessId: 'tiny-cli',
    builtinTools: {},
    modelId,
    launch: (ctx) => ({
      argv: [process.execPath, cliPath, ...(ctx.threadId ? ['--resume', ctx.threadId] : [])],
      cwd: ctx.sessionWorkDir,
      env: { TINY_BASE_URL: `${scriptedModel?.url ?? 'http://127.0.0.1:9'}/v1`, TINY_MODEL: ctx.modelId ?? modelId },
      stdin: 'pipe',
      lifetime: 'session', // one process for the session's turns, fed over stdin
      reuseKey: `tiny-cli ${ctx.modelId}`, // --resume is spawn-only: keep the live process; a new model respawns
      turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'done' } }],
      interrupt: { input: '{"type":"interrupt"}\n' },
    }),
    encodePrompt: ({ text, instructions }) => `${JSON.stringify({ type: 'prompt', text: instructions ? `${instructions}\n\n${text}` : text })}\n`,
    threadId: (record) => {
      if (record.kind !== 'stdout' || record.data.cont) return undefined;
      const line = lineSchema.safeParse(parseJsonObject(record.data.text));
      return line.success && line.data.type === 'start' ? line.data.thread : undefined;
    },
    translator: {
      init: () => ({ lines: createLineBuffers(), stream: createStreamState() }),
      step,
      snapshot: (state) => takeSnapshot('tiny-cli', 1, state),
      restore: (json) => readSnapshot('tiny-cli', 1, { lines: lineBuffersSchema, stream: streamStateSchema }, json),
    },
  });
}
