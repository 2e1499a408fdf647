// End to end: the real Claude Code 2.1.328 driven through createBridgeHarness(claudeCodeAdapter)
// on the local sandbox provider, against the scripted model server's Anthropic flavour, inside its
// loopback-only network namespace (test/e2e/support.ts). The cases are the shared list every
// real-CLI adapter runs, plus the conformance list (test/e2e/cases.ts); Claude-only cases below.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JSONValue } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import type { CliAdapter } from '../../host/adapter-kit/adapter.ts';
import { claudeCodeAdapter } from '../../host/adapters/claude-code/claude-code.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { normalizeIds } from '../../host/testing/conformance/adapter-conformance.ts';
import { blockProblem, joinSlices } from '../../host/testing/every-cut.ts';
import type { HarnessV1ResumeState, HarnessV1Session } from '../../protocol/harness-v1/session.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { insiderE2eCase } from './insider-case.ts';
import { textOf, turn, useE2eEnv, type Control, type Part } from './support.ts';

/** What each translator restore did, in order: 'restored', or the error that made the session replay the turn. */
const restores: string[] = [];
function recordingRestores<S>(adapter: CliAdapter<S>): CliAdapter<S> {
  const restore = adapter.translator.restore;
  if (!restore) throw new Error('the Claude Code translator has no restore');
  const recorded = (snapshot: Parameters<typeof restore>[0]): S => {
    try {
      const state = restore(snapshot);
      restores.push('restored');
      return state;
    } catch (error) {
      restores.push((error as Error).message);
      throw error;
    }
  };
  return { ...adapter, translator: { ...adapter.translator, restore: recorded } };
}

const env = useE2eEnv({
  name: 'claude-code',
  install: () => ensureCli('claude-code'),
  // The CLI is installed on this machine (no npm inside the namespace).
  adapter: (bin, modelUrl, variant) =>
    recordingRestores(withHostInstalledCli(claudeCodeAdapter({ binPath: bin, extraEnv: { ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'sk-test' }, ...variant }))),
  requestPath: '/v1/messages',
});

sharedE2eCases(env, {
  name: 'claude-code',
  modelId: 'claude-opus-5-5',
  deniedResult: 'host said no',
  deniedReply: /Last tool result was: [\s\S]*harness-bridge conformance: denied/,
  compactionSummary: /Scripted summary/,
  translatorSnapshots: true,
});
insiderE2eCase(env, 'claude-code');

/** One slice: `start` the turn (prompt or continue), suspend after `deltas` text deltas of this slice; the payload, or undefined when the turn ended first. */
async function slice(session: HarnessV1Session, parts: Part[], deltas: number, start: (emit: (part: Part) => void) => PromiseLike<Control>) {
  let seen = 0;
  let suspended: PromiseLike<HarnessV1ResumeState> | undefined;
  const control = await start((part) => {
    parts.push(part);
    if (part.type === 'text-delta' && ++seen === deltas) suspended = session.doSuspendTurn();
  });
  await control.done;
  return suspended && (await suspended);
}
type InFlight = { turn?: { snapshot?: { seq: number; adapter: { cli: string; v: number; state: JSONValue } } } };

describe('claude-code only', () => {
  it('a refused translator snapshot (another version) makes the next host replay the turn; the snapshot that slice takes attaches the one after; the parts equal an uninterrupted run', async () => {
    const prompt = 'SCENARIO:slow CHUNKS:8 INTERVAL:150 slow for a refused snapshot';
    const reference = await (async () => {
      const { session } = await env.open('refused-reference');
      const { parts } = await turn(session, prompt);
      await session.doDestroy();
      return parts;
    })();
    const slices: Part[][] = [[], [], []];
    const first = await env.open('refused');
    const state = await slice(first.session, slices[0]!, 2, (emit) => first.session.doPromptTurn({ prompt, emit }));
    const data = state?.data as InFlight | undefined;
    expect(data?.turn?.snapshot?.adapter, 'a claude-code v1 snapshot in the payload').toMatchObject({ cli: 'claude-code', v: 1 });
    const refused: HarnessV1ResumeState = { ...state!, data: { ...data, turn: { ...data!.turn, snapshot: { ...data!.turn!.snapshot!, adapter: { ...data!.turn!.snapshot!.adapter, v: 99 } } } } };

    const before = restores.length;
    const second = await env.open('refused', 'allow-all', refused);
    const again = await slice(second.session, slices[1]!, 2, (emit) => second.session.doContinueTurn({ emit }));
    expect(restores.slice(before), 'the snapshot was refused: this slice replayed the turn').toEqual(['claude-code: not a claude-code translator snapshot v1 (found cli "claude-code", v 99)']);
    expect((again?.data as InFlight | undefined)?.turn?.snapshot, 'the replaying slice suspends with a snapshot of its own').toMatchObject({ seq: expect.any(Number), adapter: { cli: 'claude-code', v: 1 } });

    const third = await env.open('refused', 'allow-all', again);
    const control = await third.session.doContinueTurn({ emit: (part) => slices[2]!.push(part) });
    await control.done;
    expect(restores.slice(before), 'the last slice attached at the cursor').toEqual([expect.stringContaining('v 99'), 'restored']);
    const normalize = (list: Part[]) => normalizeIds(list.map((p) => (p.type === 'raw' ? { type: 'raw' as const, rawValue: null } : p)));
    // Each slice re-opens the block cut open (docs/guarantees.md#ui): each stands alone; joined, nothing is twice.
    for (const part of slices) expect(blockProblem(part)).toBeNull();
    expect(normalize(joinSlices(slices))).toEqual(normalize(reference));
    expect(textOf(slices.flat())).toBe(textOf(reference));
    await third.session.doDestroy();
  }, 180_000);


  it('skills are materialised where Claude discovers them', async () => {
    const skills = [{ name: 'greet-politely', description: 'SKILL-MARKER greet the user politely', content: 'Say hello politely.' }];
    const { session, workDir } = await env.open('skills', 'allow-all', undefined, skills);
    expect(await readFile(join(workDir, '.claude/skills/greet-politely/SKILL.md'), 'utf8')).toContain('SKILL-MARKER');
    const before = env.requests().length;
    await turn(session, 'SCENARIO:text hello');
    expect(JSON.stringify(env.requests(before)[0]?.body), 'the model is told about the skill').toContain('SKILL-MARKER');
    await session.doDestroy();
  }, 120_000);
});
