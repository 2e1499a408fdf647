// End to end: the real pi 0.73.1 (`pi --mode rpc` + the harness-bridge extension) through
// createBridgeHarness(piAdapter) on the local sandbox provider, against the scripted model server's
// Chat Completions flavour, inside its loopback-only network namespace. The shared case list and
// the conformance list are test/e2e/cases.ts; pi-only cases are below.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { piAdapter } from '../../host/adapters/pi/pi.ts';
import { piChatCompletionsProvider } from '../../host/adapters/pi/provider.ts';
import { withHostInstalledCli } from '../../host/adapters/registry.ts';
import { HarnessCapabilityUnsupportedError } from '../../protocol/harness-v1/errors.ts';
import { ensureCli } from '../../host/cli/install-clis.mjs';
import { sharedE2eCases } from './cases.ts';
import { insiderE2eCase } from './insider-case.ts';
import { expectValid, ofType, textOf, turn, useE2eEnv } from './support.ts';

const env = useE2eEnv({
  name: 'pi',
  install: () => ensureCli('pi'),
  // The CLI is installed on this host (no npm inside the namespace); the extension file still comes with the recipe.
  adapter: (bin, modelUrl, variant) =>
    withHostInstalledCli(
      piAdapter({ binPath: bin, provider: piChatCompletionsProvider({ id: 'fake', baseUrl: `${modelUrl}/v1`, apiKey: 'sk-test', models: ['fake-model'] }), ...variant }),
    ),
  requestPath: '/v1/chat/completions',
});

sharedE2eCases(env, {
  name: 'pi',
  modelId: 'fake-model',
  deniedResult: 'The host denied this tool use.',
  deniedReply: /Last tool result was: [\s\S]*The host denied this tool use\./,
  compactionSummary: /^Scripted summary of a conversation with 0 earlier user message\(s\)\.$/,
  // A small session has nothing older than pi's keepRecentTokens (20k): the summary comes before all of it.
  compactionKeepsRecent: true,
  translatorSnapshots: true,
});
insiderE2eCase(env, 'pi');

/** The chat messages' texts of a recorded Chat Completions request. */
const texts = (body: unknown) =>
  ((body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? []).map((m) => ({
    role: m.role,
    text: typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((c: { text?: string }) => c.text ?? '').join('') : '',
  }));

describe('pi only', () => {
  it('skills are materialised where pi discovers them (.pi/skills)', async () => {
    const skills = [{ name: 'greet-politely', description: 'SKILL-MARKER greet the user politely', content: 'Say hello politely.' }];
    const { session, workDir } = await env.open('skills', 'allow-all', undefined, skills);
    expect(await readFile(join(workDir, '.pi/skills/greet-politely/SKILL.md'), 'utf8')).toContain('SKILL-MARKER');
    const before = env.requests().length;
    const { parts } = await turn(session, 'SCENARIO:text hello');
    expect(textOf(parts)).toContain('hello');
    expect(JSON.stringify(env.requests(before)[0]?.body), 'the model is told about the skill').toContain('SKILL-MARKER');
    await session.doDestroy();
  }, 120_000);

  it('doCompact(customInstructions): the instructions reach pi\'s summarisation request; the next turn\'s request carries the summary instead of the summarised turn', async () => {
    const { session, workDir } = await env.open('compact-instructions');
    // Keep only the newest ~60 tokens verbatim (pi's project settings, read when pi starts on the first turn), so the
    // first exchange is summarised and the second (a long prompt, ~110 tokens) is kept.
    await mkdir(join(workDir, '.pi'), { recursive: true });
    await writeFile(join(workDir, '.pi/settings.json'), JSON.stringify({ compaction: { keepRecentTokens: 60 } }));
    await turn(session, 'SCENARIO:text remember the word apple');
    await turn(session, `SCENARIO:text the second turn ${'padding '.repeat(50)}`);
    const before = env.requests().length;
    await session.doCompact('COMPACT-FOCUS keep the word');
    const compacting = env.requests(before);
    expect(compacting.map((r) => r.scenario), 'one summarisation request, nothing else').toEqual(['compact']);
    const [system, request] = texts(compacting[0]!.body);
    expect(system).toMatchObject({ role: 'system', text: expect.stringContaining('context summarization assistant') });
    expect(request!.text, 'the summarised turn goes to the model').toContain('[User]: SCENARIO:text remember the word apple');
    expect(request!.text, 'the kept turn does not').not.toContain('the second turn');
    expect(request!.text, 'the custom instructions do').toMatch(/\n\nAdditional focus: COMPACT-FOCUS keep the word$/);

    const { parts } = await turn(session, 'SCENARIO:text after compact');
    expectValid(parts, 'after compact');
    const summary = 'Scripted summary of a conversation with 1 earlier user message(s), focus "COMPACT-FOCUS keep the word".';
    expect(ofType(parts, 'compaction')).toEqual([{ type: 'compaction', trigger: 'manual', summary, tokensBefore: expect.any(Number) }]);
    expect(textOf(parts), 'the summary is not taken for a user prompt').toBe('Scripted reply 2 (text): you said "after compact".');
    const next = texts(env.requests(before + 1).at(-1)!.body).filter((m) => m.role !== 'system');
    expect(next.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'user']);
    expect(next[0]!.text).toBe(`The conversation history before this point was compacted into the following summary:\n\n<summary>\n${summary}\n</summary>`);
    expect(next[1]!.text).toContain('the second turn');
    expect(JSON.stringify(next), 'the summarised turn is gone').not.toContain('remember the word apple');
    await session.doDestroy();
  }, 180_000);

  it('a failed compaction (the model refusing pi\'s summarisation request) rejects doCompact with compact-failed; the session carries on, and compacts later', async () => {
    const { session } = await env.open('compact-failed');
    await turn(session, 'SCENARIO:text a turn to compact');
    // The scripted model answers pi's summarisation request with HTTP 400 when the focus says so.
    const failed = await session.doCompact('SCENARIO:fail').then(
      () => null,
      (error: unknown) => error as { code?: string; message?: string },
    );
    expect(failed?.code).toBe('compact-failed');
    expect(failed?.message).toMatch(/^pi did not compact: .*turn finished error \(compact failed\)$/);
    const second = await turn(session, 'SCENARIO:text after the failed compact');
    expect(ofType(second.parts, 'compaction'), 'nothing of the failed compaction').toEqual([]);
    expect(textOf(second.parts)).toBe('Scripted reply 2 (text): you said "after the failed compact".');
    await session.doCompact();
    const { parts } = await turn(session, 'SCENARIO:text after compacting');
    expect(ofType(parts, 'compaction').map((p) => p.summary)).toEqual(['Scripted summary of a conversation with 0 earlier user message(s).']);
    expect(textOf(parts)).toBe('Scripted reply 3 (text): you said "after compacting".');
    await session.doDestroy();
  }, 180_000);

  it('doCompact during a turn is refused before anything is sent (pi\'s compact would abort the running turn); the turn finishes normally', async () => {
    const { session } = await env.open('compact-mid-turn');
    const before = env.requests().length;
    let refused: unknown;
    const { parts } = await turn(session, 'SCENARIO:slow INTERVAL:50 CHUNKS:20 stream a while', (part) => {
      if (part.type === 'text-delta' && refused === undefined) refused = session.doCompact().then(() => 'compacted', (error: unknown) => error);
    });
    expect(await refused).toBeInstanceOf(HarnessCapabilityUnsupportedError);
    expect(textOf(parts)).toBe(Array.from({ length: 20 }, (_, i) => `slow ${i + 1} `).join(''));
    expect(ofType(parts, 'finish')[0]!.finishReason.unified).toBe('stop');
    expect(env.requests(before).map((r) => r.scenario), 'no summarisation request').toEqual(['slow']);
    await session.doDestroy();
  }, 120_000);

  it('doCompact before the first turn: no session to compact yet (refused before anything is sent)', async () => {
    const { session } = await env.open('compact-fresh');
    await expect(session.doCompact()).rejects.toThrow(/no session to compact yet/);
    await session.doDestroy();
  }, 120_000);
});
