// Conformance is mutation-tested: the part checks (host/testing/conformance/part-checks.ts) run on the reference
// stream-json translator (Claude Code's) over turns the real CLI printed (test/fixtures/claude-code: a bash and a
// write call, a model error, a denied approval). The intact translator passes every check; each mutation breaks
// one kind of part, and the checks must fail with a message naming what is missing. Prints the mutation count
// and the kill rate.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Translator } from '../../../host/adapter-kit/adapter.ts';
import { claudeCodeAdapter } from '../../../host/adapters/claude-code/claude-code.ts';
import { checkBuiltinToolCall, checkDenialReply, checkModelError, checkStepsAndUsage } from '../../../host/testing/conformance/part-checks.ts';
import { adapterPartConformance, partCaseKeys, type AdapterPartContext } from '../../../host/testing/conformance/part-cases.ts';
import { ConformanceFailure } from '../../../host/testing/conformance/sandbox-provider-conformance.ts';
import type { HarnessV1StreamPart as Part } from '../../../protocol/harness-v1/stream-part.ts';
import type { JournalRecord } from '../../../protocol/v1/journal-record.ts';

const fixtureDir = fileURLToPath(new URL('../../fixtures/claude-code/', import.meta.url));

/** The first turn of a capture, as the bridge journals it (its lines up to the first result). */
function firstTurn(name: string): JournalRecord[] {
  const lines = readFileSync(`${fixtureDir}${name}.jsonl`, 'utf8').split('\n').filter((l) => l.length > 0);
  const end = lines.findIndex((l) => (JSON.parse(l) as { type?: string }).type === 'result');
  let seq = 1;
  const records: JournalRecord[] = [{ seq: seq++, turnId: 't', ts: 0, kind: 'turn-start', data: { input: 'x' } }];
  for (const text of lines.slice(0, end + 1)) records.push({ seq: seq++, turnId: 't', ts: 0, kind: 'stdout', data: { text } });
  records.push({ seq: seq++, turnId: 't', ts: 0, kind: 'turn-end', data: { reason: 'matched' } });
  return records;
}

function run<S>(translator: Translator<S>, records: JournalRecord[]): Part[] {
  let state = translator.init({ turnId: 't', rerun: false });
  const parts: Part[] = [];
  for (const record of records) {
    const out = translator.step(state, record);
    state = out.state;
    parts.push(...out.parts);
  }
  return parts;
}

/** What each capture's CLI did, as the checks see it. */
const turns: Array<{ name: string; fixture: string; checks: (parts: Part[]) => void }> = [
  {
    name: 'bash and write calls',
    fixture: 'bash-write',
    checks: (parts) => {
      checkBuiltinToolCall(parts, { toolName: 'bash' }, 'bash-write');
      checkBuiltinToolCall(parts, { toolName: 'write', path: 'written.txt' }, 'bash-write');
      checkStepsAndUsage(parts, { minSteps: 2 }, 'bash-write');
    },
  },
  { name: 'a model error', fixture: 'error', checks: (parts) => checkModelError(parts, 'error') },
  { name: 'a denied approval', fixture: 'permission-deny', checks: (parts) => checkDenialReply(parts, 'permission-deny') },
];

type Mutation = { name: string; mutate: (parts: ReadonlyArray<Part>) => Part[]; names: RegExp };
const emptyUsage = { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } };
const cliTool = (p: Part) =>
  (p.type === 'tool-call' && p.providerExecuted === true) || p.type === 'tool-result' || p.type === 'tool-input-start' || p.type === 'tool-input-delta' || p.type === 'tool-input-end';
const mutations: Mutation[] = [
  { name: "drop the CLI's own tool parts (call, result, input)", mutate: (ps) => ps.filter((p) => !cliTool(p)), names: /no tool-call part for the CLI's own/ },
  { name: 'drop every finish-step', mutate: (ps) => ps.filter((p) => p.type !== 'finish-step'), names: /no finish-step part/ },
  { name: "empty the finish's usage", mutate: (ps) => ps.map((p) => (p.type === 'finish' ? { ...p, totalUsage: emptyUsage } : p)), names: /the finish has no usage counts/ },
  { name: "empty every finish-step's usage", mutate: (ps) => ps.map((p) => (p.type === 'finish-step' ? { ...p, usage: emptyUsage } : p)), names: /finish-step 1 has no usage counts/ },
  { name: 'drop every error part', mutate: (ps) => ps.filter((p) => p.type !== 'error'), names: /no error part for the model error/ },
  { name: 'finish an errored turn stop', mutate: (ps) => ps.map((p) => (p.type === 'finish' ? { ...p, finishReason: { unified: 'stop' as const, raw: 'end_turn' } } : p)), names: /finished "stop", expected "error"/ },
  { name: 'drop every file-change', mutate: (ps) => ps.filter((p) => p.type !== 'file-change'), names: /no file-change part for the file/ },
  { name: 'report a new file as modify', mutate: (ps) => ps.map((p) => (p.type === 'file-change' ? { ...p, event: 'modify' as const } : p)), names: /is "modify", expected "create"/ },
  { name: 'drop every tool-result', mutate: (ps) => ps.filter((p) => p.type !== 'tool-result'), names: /0 tool-result parts for the CLI's bash call/ },
  { name: 'mark every tool-result an error', mutate: (ps) => ps.map((p) => (p.type === 'tool-result' ? { ...p, isError: true } : p)), names: /is an error, but the CLI ran it|has a successful/ },
  { name: 'mark every tool-result a success', mutate: (ps) => ps.map((p) => (p.type === 'tool-result' ? { ...p, isError: false } : p)), names: /the denied call .* has a successful tool-result/ },
  { name: 'name builtin calls by their native name', mutate: (ps) => ps.map((p) => (p.type === 'tool-call' && p.providerExecuted ? { ...p, toolName: p.toolName.toUpperCase() } : p)), names: /no tool-call part names "bash"/ },
  { name: 'drop the text after an approval request', mutate: (ps) => ps.filter((p, i) => !(p.type === 'text-delta' && ps.slice(0, i).some((q) => q.type === 'tool-approval-request'))), names: /no reply text after the denial/ },
  { name: 'drop every approval request', mutate: (ps) => ps.filter((p) => p.type !== 'tool-approval-request'), names: /no tool-approval-request part/ },
  { name: 'merge all steps into one', mutate: (ps) => ps.filter((p, i) => p.type !== 'finish-step' || !ps.slice(i + 1).some((q) => q.type === 'finish-step')), names: /1 finish-step parts, but the CLI's model answered at least 2 times/ },
  { name: 'put results before their calls', mutate: (ps) => [...ps.filter((p) => p.type === 'tool-result'), ...ps.filter((p) => p.type !== 'tool-result')], names: /comes before its tool-call/ },
];

/** The first failure of the checks on the mutated parts of every turn, or undefined when all pass. */
function failureOf(mutate: (parts: ReadonlyArray<Part>) => Part[]): string | undefined {
  const { translator } = claudeCodeAdapter();
  for (const turn of turns) {
    try {
      turn.checks(mutate(run(translator, firstTurn(turn.fixture))));
    } catch (error) {
      if (!(error instanceof ConformanceFailure)) throw error;
      return error.message;
    }
  }
  return undefined;
}

describe('conformance part checks, mutation-tested on the reference stream-json translator', () => {
  it('the intact translator passes every check on every captured turn', () => {
    expect(failureOf((ps) => [...ps])).toBeUndefined();
  });

  it('every mutation fails the checks with a message naming what is missing', () => {
    const outcomes = mutations.map((m) => ({ m, message: failureOf(m.mutate) }));
    const killed = outcomes.filter((o) => o.message !== undefined && o.m.names.test(o.message));
    console.log(`[figures] conformance mutations: ${mutations.length}, killed ${killed.length}, kill rate ${((100 * killed.length) / mutations.length).toFixed(0)}%`);
    for (const { m, message } of outcomes) {
      expect(message, `mutation "${m.name}" passed the checks`).toBeDefined();
      expect(message, `mutation "${m.name}"`).toMatch(m.names);
    }
  });
});

describe('part cases that cannot apply are declared and listed, never skipped silently', () => {
  const base = {
    harness: () => {
      throw new Error('no turn runs: every case here is declared or refused before it starts');
    },
    createSandbox: () => Promise.reject(new Error('unused')),
    resumeSandbox: () => Promise.reject(new Error('unused')),
    prompts: { text: 'x', long: 'x', minParts: 1 },
    defer: () => undefined,
  };

  it('each declared case is skipped with its reason', async () => {
    const notApplicable = Object.fromEntries(partCaseKeys.map((key) => [key, `the test CLI has no ${key}`]));
    const outcomes = await Promise.all(adapterPartConformance.map((c) => c.run({ ...base, notApplicable } as AdapterPartContext)));
    expect(outcomes.map((o) => (o.status === 'skip' ? o.reason : o.status))).toEqual([
      'declared not applicable (builtin-shell): the test CLI has no builtin-shell',
      'declared not applicable (builtin-write): the test CLI has no builtin-write',
      'declared not applicable (steps-usage): the test CLI has no steps-usage',
      'declared not applicable (model-error): the test CLI has no model-error',
      'declared not applicable (reasoning): the test CLI has no reasoning',
      'declared not applicable (denial-reply): the test CLI has no denial-reply',
      'declared not applicable (host-tool-result): the test CLI has no host-tool-result',
    ]);
  });

  it('a case neither given its prompt nor declared fails, naming the declaration it lacks', async () => {
    const notApplicable = { 'steps-usage': 'declared, so this one case would start a session' };
    const failures = await Promise.all(
      adapterPartConformance.map((c) => c.run({ ...base, notApplicable } as AdapterPartContext).then((o) => o.status, (e: Error) => e.message)),
    );
    expect(failures[2]).toBe('skip');
    for (const [i, key] of ['builtin-shell', 'builtin-write', '', 'model-error', 'reasoning', 'denial-reply', 'host-tool-result'].entries()) {
      if (key) expect(failures[i]).toContain(`did not declare the case not applicable (notApplicable['${key}']`);
    }
  });
});
