// `harness-bridge demo-continue --state FILE` (internal): the demo's second
// process. A fresh host — new harness, new sandbox handle, nothing shared with
// the first process but the state file — resumes the session through the
// recovery ladder, continues the suspended turn, answers the host tool,
// stops the bridge and writes its result for the first process.
import { readFile, writeFile } from 'node:fs/promises';
import type { HarnessV1StreamPart } from '../../protocol/harness-v1/stream-part.ts';
import { createBridgeHarness } from '../harness.ts';
import { parseResumeState, toResumeState } from '../session/resume-state.ts';
import { createLocalSandboxProvider } from '../sandbox/local/provider.ts';
import { CliError, CliUsageError, parseArgs, stringFlag } from './args.ts';
import { demoHostTool, demoToolOutput } from './demo.ts';
import { demoStateSchema, type DemoResult } from './demo-state.ts';
import { createStreamPrinter } from './parts.ts';
import { prepareAdapter, requireAdapter } from './setup.ts';
import { stdoutStyle } from './style.ts';

export const demoContinueHelp = `usage: harness-bridge demo-continue --state <file>

Internal: the second process of \`harness-bridge demo\`. Reads the resume state
the first process wrote, continues the suspended turn in a fresh host, answers
the demo's host tool, stops the bridge and writes its result next to the state.`;

const flags = { state: { type: 'string' } } as const;

export async function demoContinueCommand(argv: ReadonlyArray<string>): Promise<number> {
  const parsed = parseArgs('demo-continue', argv, flags, { min: 0, max: 0, name: '' });
  if (parsed.help) {
    process.stdout.write(`${demoContinueHelp}\n`);
    return 0;
  }
  const file = stringFlag(parsed, 'state');
  if (file === undefined) throw new CliUsageError('demo-continue: --state <file> is required');
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new CliError(`demo-continue: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const state = demoStateSchema.safeParse(json);
  if (!state.success) throw new CliError(`demo-continue: ${file} is not a demo state file: ${state.error.issues[0]?.message ?? 'invalid'}`);
  const { adapter: adapterId, root, templatesRoot, sessionId, workDir, recordDir, modelUrl, resultFile } = state.data;

  const style = stdoutStyle();
  const detail = (text: string) => process.stdout.write(`      ${style.dim(text)}\n`);
  detail(`process ${process.pid}: a fresh host (new harness, new sandbox handle), resuming from ${file}`);
  const prepared = await prepareAdapter(requireAdapter('demo-continue', adapterId), { log: detail, ...(modelUrl === undefined ? {} : { modelUrl }) });
  try {
    const before = parseResumeState(prepared.adapter.harnessId, state.data.resumeState);
    const resumeState = toResumeState(prepared.adapter.harnessId, before);
    const provider = createLocalSandboxProvider({ root, templatesRoot });
    const sandbox = await provider.resumeSession({ sessionId });
    const harness = createBridgeHarness(prepared.adapter, { recordDir });
    const session = await harness.doStart({ sessionId, sandboxSession: sandbox, sessionWorkDir: workDir, resumeFrom: resumeState });
    const rungs = 'rungs' in session && Array.isArray(session.rungs) ? session.rungs.map(String) : [];
    detail(`recovery ladder: ${rungs.join(' → ') || '(none)'}; continuing after cursor ${before.cursor}`);
    const printer = createStreamPrinter((text) => process.stdout.write(text), style, '      ');
    const parts: HarnessV1StreamPart[] = [];
    const control = await session.doContinueTurn({
      tools: [demoHostTool],
      emit: (part) => {
        parts.push(part);
        printer.part(part);
        if (part.type === 'tool-call' && part.providerExecuted !== true) {
          const output = part.toolName.endsWith(demoHostTool.name) ? demoToolOutput() : { error: `the demo has no tool ${part.toolName}` };
          printer.note(style.cyan(`↪ the demo answers ${part.toolName}: ${JSON.stringify(output)}`));
          void control.submitToolResult({ toolCallId: part.toolCallId, output, isError: 'error' in output });
        }
      },
    });
    await control.done;
    printer.flush();
    const stopped = parseResumeState(prepared.adapter.harnessId, await session.doStop());
    const finish = [...parts].reverse().find((part) => part.type === 'finish');
    const result: DemoResult = {
      pid: process.pid,
      parts,
      cursor: stopped.cursor,
      rungs,
      finish: finish?.type === 'finish' ? finish.finishReason.unified : 'none',
    };
    await writeFile(resultFile, `${JSON.stringify(result)}\n`, { mode: 0o600 });
    return 0;
  } finally {
    await prepared.close();
  }
}
