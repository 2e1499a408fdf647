// The `fixture` adapter: a CLI adapter over the fixture CLI (fixture-cli.mjs)
// in --echo mode. No model, deterministic: `harness-bridge run|demo --adapter
// fixture` needs nothing installed, and it is the kit's reference subject for
// session, conformance, chaos and bench tests (test/fixtures/fixture-adapter.ts
// re-exports it). It is also the smallest complete example of an adapter: a
// launch spec, stdin encoders, a thread-id reader and a pure translator.
//
// Prompt markers (read from the prompt text): LINES:n (deltas, default 3),
// INTERVAL:ms (delay between deltas, default 0), TOOL:name (a host tool
// round trip over stdin before the result).
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../protocol/v1/record.ts';
import { defineCliAdapter, type CliAdapter } from '../adapter.ts';

/**
 * The fixture CLI script, next to this module: host/adapters/fixture-cli.mjs
 * run from source, dist/fixture-cli.mjs in a build (esbuild.config.mjs copies it
 * next to the bundle), so neither needs the test tree. Its reference is
 * test/fixtures/README.md. Missing: node fails to load it, so the turn ends
 * with an error (exit) and the CLI's stderr in the journal names the path.
 */
export const fixtureCliPath = fileURLToPath(new URL('./fixture-cli.mjs', import.meta.url));

const lineSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session'), id: z.string() }),
  z.object({ type: z.literal('start'), turn: z.number(), text: z.string() }),
  z.object({ type: z.literal('delta'), turn: z.number(), n: z.number(), text: z.string() }),
  z.object({ type: z.literal('tool-call'), turn: z.number(), id: z.string(), name: z.string() }),
  z.object({ type: z.literal('result'), turn: z.number(), interrupted: z.boolean().optional() }),
]);

type FixtureState = { textId: string | null; finished: boolean };

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function parseLine(record: JournalRecord): z.infer<typeof lineSchema> | null {
  if (record.kind !== 'stdout' || record.data.cont || !record.data.text.startsWith('{')) return null;
  try {
    const parsed = lineSchema.safeParse(JSON.parse(record.data.text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // not JSON: the fixture only prints JSON in echo mode, so this is noise
  }
}

function step(state: FixtureState, record: JournalRecord): { state: FixtureState; parts: HarnessV1StreamPart[] } {
  const parts: HarnessV1StreamPart[] = [];
  const closeText = () => {
    if (state.textId) parts.push({ type: 'text-end', id: state.textId });
    state.textId = null;
  };
  const finish = (unified: 'stop' | 'interrupted' | 'error', raw: string) => {
    closeText();
    parts.push({ type: 'finish-step', finishReason: { unified, raw }, usage });
    parts.push({ type: 'finish', finishReason: { unified, raw }, totalUsage: usage });
    state.finished = true;
  };
  if (record.kind === 'turn-start') parts.push({ type: 'stream-start', modelId: 'fixture' });
  else if (record.kind === 'turn-end' && !state.finished) {
    if (record.data.reason === 'spawn-failed') parts.push({ type: 'error', error: record.data.message ?? 'spawn failed' });
    finish(record.data.reason === 'aborted' ? 'interrupted' : 'error', record.data.reason);
  } else {
    const line = parseLine(record);
    if (line?.type === 'delta') {
      if (!state.textId) {
        state.textId = `text-${record.seq}`;
        parts.push({ type: 'text-start', id: state.textId });
      }
      parts.push({ type: 'text-delta', id: state.textId, delta: `${line.text}\n` });
    } else if (line?.type === 'tool-call') {
      closeText();
      parts.push({ type: 'tool-call', toolCallId: line.id, toolName: line.name, input: JSON.stringify({ turn: line.turn }) });
    } else if (line?.type === 'result') {
      finish(line.interrupted ? 'interrupted' : 'stop', line.interrupted ? 'interrupted' : 'result');
    }
  }
  return { state, parts };
}

function marker(text: string, name: string): string | undefined {
  return new RegExp(`${name}:(\\S+)`).exec(text)?.[1];
}

const snapshotSchema = z.object({ textId: z.string().nullable(), finished: z.boolean() });

/**
 * `survive`: the launch opts into a CLI that outlives a SIGKILLed bridge and is
 * re-adopted by the next one (launch spec `survive`), so a resume is lossless.
 */
export function fixtureAdapter(options: { extraArgs?: string[]; snapshots?: boolean; survive?: boolean } = {}): CliAdapter<FixtureState> {
  return defineCliAdapter<FixtureState>({
    harnessId: 'fixture',
    builtinTools: {},
    launch: (ctx) => ({
      argv: [
        process.execPath,
        fixtureCliPath,
        '--echo',
        '--sigint-interrupts',
        ...(ctx.threadId ? ['--resume-id', ctx.threadId] : []),
        ...(options.extraArgs ?? []),
      ],
      cwd: ctx.sessionWorkDir,
      stdin: 'pipe',
      lifetime: 'session',
      turnEnd: [{ stream: 'stdout', json: { path: ['type'], equals: 'result' } }],
      interrupt: { input: '{"type":"interrupt"}\n' },
      ...(options.survive === true ? { survive: true } : {}),
    }),
    encodePrompt: ({ text, instructions }) =>
      `${JSON.stringify({
        type: 'prompt',
        text: instructions ? `${instructions}\n${text}` : text,
        lines: Number(marker(text, 'LINES') ?? 3),
        intervalMs: Number(marker(text, 'INTERVAL') ?? 0),
        ...(marker(text, 'TOOL') ? { tool: marker(text, 'TOOL') } : {}),
      })}\n`,
    encodeUserMessage: (text) => `${JSON.stringify({ type: 'prompt', text, lines: 1 })}\n`,
    encodeToolResult: ({ toolCallId, output }) => `${JSON.stringify({ type: 'tool-result', id: toolCallId, output })}\n`,
    threadId: (record) => {
      const line = parseLine(record);
      return line?.type === 'session' ? line.id : undefined;
    },
    translator: {
      init: () => ({ textId: null, finished: false }),
      step,
      ...(options.snapshots === false
        ? {}
        : {
            snapshot: (state: FixtureState) => ({ textId: state.textId, finished: state.finished }),
            restore: (snapshot: unknown) => snapshotSchema.parse(snapshot),
          }),
    },
  });
}
