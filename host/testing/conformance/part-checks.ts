// Checks of one turn's parts against what the CLI did in it (the scripted model's scenario says what
// that is: SCENARIO:shell ran one shell command, SCENARIO:write wrote one file, SCENARIO:fail got a
// model error, every model response carries usage). Each throws ConformanceFailure naming the part
// that is missing or wrong, so a translator that drops or empties a kind of part fails by name. Pure:
// the conformance cases run them on live turns (part-cases.ts), the mutation test on a reference
// translator's output with one kind of part broken at a time.
import type { LanguageModelV4Usage } from '@ai-sdk/provider';
import type { HarnessV1StreamPart } from '../../../protocol/harness-v1/stream-part.ts';
import { ConformanceFailure } from './sandbox-provider-conformance.ts';

type Part = HarnessV1StreamPart;
type Of<T extends Part['type']> = Extract<Part, { type: T }>;

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}

const ofType = <T extends Part['type']>(parts: ReadonlyArray<Part>, type: T) => parts.filter((p): p is Of<T> => p.type === type);
const kinds = (parts: ReadonlyArray<Part>) => [...new Set(parts.map((p) => p.type))].join(', ') || 'none';

/**
 * The CLI ran one of its own tools (`toolName`, the common name: bash, write) and the stream says so: a
 * provider-executed tool-call, a tool-result for the same call after it, and for a write tool a
 * file-change naming the file (`path`: the written file's name, matched at the end of the part's path).
 */
export function checkBuiltinToolCall(parts: ReadonlyArray<Part>, want: { toolName: string; path?: string }, what: string): void {
  const calls = ofType(parts, 'tool-call').filter((p) => p.providerExecuted === true);
  check(calls.length > 0, `${what}: no tool-call part for the CLI's own ${want.toolName} call (the CLI ran it; the turn's parts: ${kinds(parts)})`);
  const call = calls.find((p) => p.toolName === want.toolName);
  check(call, `${what}: no tool-call part names ${JSON.stringify(want.toolName)} for the CLI's own call (tool-calls name ${calls.map((p) => JSON.stringify(p.toolName)).join(', ')})`);
  const results = ofType(parts, 'tool-result').filter((p) => p.toolCallId === call.toolCallId);
  check(results.length === 1, `${what}: ${results.length} tool-result parts for the CLI's ${want.toolName} call ${call.toolCallId}, expected one`);
  check(parts.indexOf(results[0]!) > parts.indexOf(call), `${what}: the tool-result of ${call.toolCallId} comes before its tool-call`);
  check(results[0]!.isError !== true, `${what}: the tool-result of the CLI's ${want.toolName} call is an error, but the CLI ran it: ${JSON.stringify(results[0]!.result).slice(0, 200)}`);
  if (want.path !== undefined) {
    const changes = ofType(parts, 'file-change');
    check(changes.length > 0, `${what}: no file-change part for the file the CLI's ${want.toolName} call wrote (${want.path})`);
    const change = changes.find((p) => p.path === want.path || p.path.endsWith(`/${want.path}`));
    check(change, `${what}: no file-change part names ${want.path} (file-changes name ${changes.map((p) => p.path).join(', ')})`);
    check(change.event === 'create', `${what}: the file-change of the new file ${want.path} is ${JSON.stringify(change.event)}, expected "create"`);
  }
}

const counted = (usage: LanguageModelV4Usage | undefined) => {
  const input = usage?.inputTokens?.total;
  const output = usage?.outputTokens?.total;
  return typeof input === 'number' && typeof output === 'number' ? { input, output } : undefined;
};

/**
 * Steps and usage: every model response the CLI got is a step (at least `minSteps`: a tool round is one
 * response asking for the tool and one after its result), each finish-step carries the response's token
 * counts, and the finish's usage counts the whole turn: at least every step's, and some.
 */
export function checkStepsAndUsage(parts: ReadonlyArray<Part>, want: { minSteps: number }, what: string): void {
  const steps = ofType(parts, 'finish-step');
  check(steps.length > 0, `${what}: no finish-step part (the CLI's model answered ${want.minSteps} time(s), each with usage)`);
  check(steps.length >= want.minSteps, `${what}: ${steps.length} finish-step parts, but the CLI's model answered at least ${want.minSteps} times`);
  steps.forEach((step, i) => {
    const usage = counted(step.usage);
    check(usage, `${what}: finish-step ${i + 1} has no usage counts (inputTokens.total ${step.usage?.inputTokens?.total}, outputTokens.total ${step.usage?.outputTokens?.total}); the CLI's model reported them`);
    check(usage.input > 0 && usage.output > 0, `${what}: finish-step ${i + 1}'s usage is empty (${usage.input} in, ${usage.output} out)`);
  });
  const finish = ofType(parts, 'finish').at(-1);
  check(finish, `${what}: no finish part`);
  const total = counted(finish.totalUsage);
  check(total, `${what}: the finish has no usage counts (totalUsage inputTokens.total ${finish.totalUsage?.inputTokens?.total}, outputTokens.total ${finish.totalUsage?.outputTokens?.total}); the CLI's model reported them`);
  const maxIn = Math.max(...steps.map((s) => counted(s.usage)!.input));
  const maxOut = Math.max(...steps.map((s) => counted(s.usage)!.output));
  check(total.input >= maxIn && total.output >= maxOut, `${what}: the finish's usage (${total.input} in, ${total.output} out) is less than one of its steps' (${maxIn} in, ${maxOut} out)`);
}

/** A model error (SCENARIO:fail): an error part saying so, and a finish that is not `stop`. */
export function checkModelError(parts: ReadonlyArray<Part>, what: string): void {
  const errors = ofType(parts, 'error');
  check(errors.length > 0, `${what}: no error part for the model error the CLI got (the turn's parts: ${kinds(parts)})`);
  const finish = ofType(parts, 'finish').at(-1);
  check(finish, `${what}: no finish part after the model error`);
  check(finish.finishReason.unified === 'error', `${what}: the turn with a model error finished ${JSON.stringify(finish.finishReason.unified)}, expected "error"`);
  check(parts.indexOf(errors[0]!) < parts.indexOf(finish), `${what}: the error part comes after the finish`);
}

/** The CLI streamed the model's thinking: reasoning parts with its text. */
export function checkReasoning(parts: ReadonlyArray<Part>, what: string): void {
  const deltas = ofType(parts, 'reasoning-delta');
  check(ofType(parts, 'reasoning-start').length > 0 && deltas.length > 0, `${what}: no reasoning part for the thinking the CLI's model streamed (the turn's parts: ${kinds(parts)})`);
  check(deltas.map((d) => d.delta).join('').length > 0, `${what}: the reasoning parts carry no text`);
}

/** A denied approval: the denied call has no successful result, and the model's reply to the denial is text after the request. */
export function checkDenialReply(parts: ReadonlyArray<Part>, what: string): void {
  const request = ofType(parts, 'tool-approval-request')[0];
  check(request, `${what}: no tool-approval-request part`);
  const ran = ofType(parts, 'tool-result').find((p) => p.toolCallId === request.toolCallId && p.isError !== true);
  check(!ran, `${what}: the denied call ${request.toolCallId} has a successful tool-result`);
  const after = parts.slice(parts.indexOf(request) + 1);
  const reply = ofType(after, 'text-delta').map((p) => p.delta).join('');
  check(reply.length > 0, `${what}: no reply text after the denial (the model was told and answered; the parts after the request: ${kinds(after)})`);
}

/** A host tool's call: the kit's tool-call (not provider-executed) naming the tool, and the model's reply after it. */
export function checkHostToolCall(parts: ReadonlyArray<Part>, want: { toolName: string }, what: string): void {
  const call = ofType(parts, 'tool-call').find((p) => p.providerExecuted !== true && p.toolName === want.toolName);
  check(call, `${what}: no host tool-call part naming ${JSON.stringify(want.toolName)}`);
  const reply = ofType(parts.slice(parts.indexOf(call) + 1), 'text-delta').map((p) => p.delta).join('');
  check(reply.length > 0, `${what}: no reply text after the host tool's result`);
}
