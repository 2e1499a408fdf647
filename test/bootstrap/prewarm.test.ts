// prewarmHarness on the local provider: the recipe is applied once into the
// identity's template; later sessions start as copies (marker already there,
// so the apply after create runs nothing). Prints the time a copy saves.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBootstrap, bridgeRecipe, prewarmHarness, recipeIdentity } from '../../bootstrap/index.ts';
import { createLocalSandboxProvider } from '../../host/sandbox/local/provider.ts';

let tempRoot = '';
beforeAll(async () => {
  tempRoot = await mkdtemp(join(tmpdir(), 'hb-prewarm-'));
});
afterAll(async () => {
  await rm(tempRoot, { recursive: true, force: true });
});

describe('prewarmHarness', () => {
  it('applies the recipe once into a template; two later sessions start from it', async () => {
    const provider = createLocalSandboxProvider({ root: join(tempRoot, 'sandboxes'), templatesRoot: join(tempRoot, 'templates') });
    const installs = join(tempRoot, 'installs.log');
    // Stands in for a CLI install: slow, with an effect outside the session we can count.
    const recipe = await bridgeRecipe({
      harnessId: 'fixture',
      bridgeSource: '// bridge\n'.repeat(20_000),
      commands: [{ command: `echo install >> ${JSON.stringify(installs)}; sleep 0.6; echo cli > cli-installed` }],
    });
    const harness = { getBootstrap: async () => recipe };

    const prewarm = await prewarmHarness({ harness, sandboxProvider: provider, dispose: 'destroy' });
    expect(prewarm.identity).toBe(recipeIdentity(recipe));

    const open = async (sessionId: string) => {
      const startedAt = performance.now();
      const session = await provider.createSession({
        sessionId,
        identity: prewarm.identity!,
        onFirstCreate: async (s, o) => void (await applyBootstrap(s, recipe, o.abortSignal ? { abortSignal: o.abortSignal } : {})),
      });
      const applied = await applyBootstrap(session.restricted(), recipe);
      return { session, applied, ms: performance.now() - startedAt };
    };
    const first = await open('after-prewarm-1');
    const second = await open('after-prewarm-2');
    try {
      for (const { session, applied } of [first, second]) {
        expect(session.origin).toMatchObject({ fromTemplate: true, builtTemplate: false });
        expect(applied.applied).toBe(false);
        expect(await session.readTextFile({ path: '.harness-bridge/fixture/cli-installed' })).toBe('cli\n');
      }
      expect((await readFile(installs, 'utf8')).trim().split('\n')).toEqual(['install']);
      const firstCreateMs = second.session.origin.firstCreateMs!;
      console.log(
        `[figures] prewarm ${prewarm.elapsedMs.toFixed(1)} ms (onFirstCreate ${firstCreateMs.toFixed(1)} ms); ` +
          `sessions from template ${first.ms.toFixed(1)} / ${second.ms.toFixed(1)} ms (copy ${second.session.origin.copyMs!.toFixed(1)} ms); ` +
          `saved ≈ ${(firstCreateMs - second.ms).toFixed(1)} ms per session`,
      );
    } finally {
      await first.session.destroy();
      await second.session.destroy();
    }
  });

  it('is a no-op for a harness without getBootstrap', async () => {
    const provider = createLocalSandboxProvider({ root: join(tempRoot, 'none'), templatesRoot: join(tempRoot, 'none-templates') });
    const result = await prewarmHarness({ harness: {}, sandboxProvider: provider });
    expect(result.identity).toBeUndefined();
  });
});
